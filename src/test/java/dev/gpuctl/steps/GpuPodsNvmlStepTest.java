package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.ClusterView;
import dev.gpuctl.gpu.DevChar;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Probe;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** gpu-pods-nvml lists the running GPU pods from the cluster read the master's checks share, then execs in each. */
class GpuPodsNvmlStepTest {
    static final HostContext MASTER = new HostContext(GpuStepTest.INV, GpuStepTest.INV.master());

    /** A cluster read's pod line (P + ClusterView.POD_FIELDS): namespace, name, node, phase, ..., owner kind, GPU limits. */
    static String pod(String ns, String name, String node, String phase, String owner, String gpus) {
        return String.join("\t", "P", ns, name, node, phase, "", "", "", "", owner, gpus) + "\n";
    }

    @Test void theListIsTheClusterReadAndTheExecsFollowAsOneCommandMadeFromIt() {
        List<Probe> probes = new GpuPodsNvmlStep().check(MASTER);
        assertEquals(2, probes.size());
        Probe listed = probes.get(0);
        Probe execs = probes.get(1);
        assertEquals(ClusterView.COMMAND, listed.command(), "the list is the cluster read every master check asks: no kubectl of its own");
        assertEquals(Facts.ref(GpuPodsNvmlStep.execFact(MASTER)), execs.command());

        Facts facts = new Facts();
        String read = pod("default", "train-abc", "w1", "Running", "Job", "2") + pod("kube-system", "plugin-x", "w1", "Running", "DaemonSet", "");
        listed.learn().apply(new ExecResult(0, read, "")).forEach((k, v) -> facts.put(k, v, false));
        String cmd = facts.substitute(execs.command());
        assertTrue(cmd.endsWith(" nvml default train-abc w1 Job;") && !cmd.contains("plugin-x"), cmd);
        assertEquals(Optional.empty(), listed.judge().apply(new ExecResult(0, read, ""), facts));

        // a failed read teaches a command that asks nothing, and is the list's problem
        Facts failed = new Facts();
        ExecResult refused = new ExecResult(1, "", "The connection to the server was refused");
        listed.learn().apply(refused).forEach((k, v) -> failed.put(k, v, false));
        assertEquals(DevChar.NO_GPU_POD, failed.substitute(execs.command()));
        assertTrue(listed.judge().apply(refused, failed).orElseThrow().startsWith("kubectl failed (exit 1)"));

        // what the execs print is judged as before: a pod that lost its GPUs names its node's repair
        Optional<String> problem = execs.judge().apply(new ExecResult(0, "default/train-abc w1 Job 255 " + DevChar.LOST + "\n", ""), facts);
        assertTrue(problem.orElseThrow().contains("`gpuctl repair w1`"), problem.toString());
    }
}
