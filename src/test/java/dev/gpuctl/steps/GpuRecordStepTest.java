package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The GPUs recorded at bootstrap as a node annotation: what preflight's nvidia-smi query teaches (the real H200's
 * answer, with and without the host file an earlier gpuctl wrote), the annotate op and its guard, and the check that
 * names a missing GPU by index and UUID.
 */
class GpuRecordStepTest {
    static final Inventory INV = GpuHealthStepTest.inv("");
    static final String QUERY = "0, NVIDIA H200, GPU-01bc1429-cdbb-796f-97d8-790afa7693b9, 143771, 580.159.04, Disabled, Default, 00000000:1B:00.0\n";

    /** Preflight's two GPU questions on w1 answered: nvidia-smi's query (and its exit), the host file (empty: none). */
    static Facts facts(String preflightAnswer, int exit, String hostFile) {
        Facts f = new Facts();
        var probes = new PreflightStep().check(GpuHealthStepTest.ctx(INV, "w1"));
        var query = probes.stream().filter(p -> p.what().startsWith("nvidia-smi answers")).findFirst().orElseThrow();
        var legacy = probes.stream().filter(p -> p.what().startsWith("the GPU list an earlier gpuctl kept")).findFirst().orElseThrow();
        assertEquals("cat /var/lib/gpuctl/gpus-at-bootstrap 2>/dev/null; true", legacy.command());
        query.learn().apply(new ExecResult(exit, preflightAnswer, "")).forEach((k, v) -> f.put(k, v, false));
        ExecResult file = new ExecResult(0, hostFile, "");
        assertEquals(Optional.empty(), legacy.judge().apply(file, f), "no record is no problem");
        legacy.learn().apply(file).forEach((k, v) -> f.put(k, v, false));
        return f;
    }

    static Facts facts(String preflightAnswer, int exit) { return facts(preflightAnswer, exit, ""); }

    /** kubectl's answer to the cluster question: node w1, with the annotation when it is given. */
    static String node(String annotation) {
        return dev.gpuctl.kube.KubectlPrints.clusterView("{\"items\": [{\"metadata\": {\"name\": \"w1\", \"annotations\": {\"node.alpha.kubernetes.io/ttl\": \"0\""
            + (annotation == null ? "" : ", \"gpuctl.dev/gpus-at-bootstrap\": \"" + annotation + "\"") + "}}}]}", "{}");
    }

    @Test void runsOnTheMasterOnlyAndAnnotatesEachGpuNodeOnce() {
        var step = new GpuRecordStep();
        assertTrue(step.runsOn(GpuHealthStepTest.ctx(INV, "master")));
        assertFalse(step.runsOn(GpuHealthStepTest.ctx(INV, "w1")));
        assertTrue(Steps.ids().contains("gpu-record"));
        List<Op> ops = step.apply(GpuHealthStepTest.ctx(INV, "master"));
        assertEquals(1, ops.size(), "one GPU node: w1");
        Op.Run run = (Op.Run) ops.get(0);
        assertEquals("r='{{gpu.w1.gpusRecordedOnHost}}'; [ -n \"$r\" ] || r='{{gpu.w1.gpus}}';"
            + " kubectl --kubeconfig=/etc/kubernetes/admin.conf annotate node w1 gpuctl.dev/gpus-at-bootstrap=\"$r\"", run.command());
        assertEquals("kubectl --kubeconfig=/etc/kubernetes/admin.conf get node w1 -o 'jsonpath={.metadata.annotations.gpuctl\\.dev/gpus-at-bootstrap}'"
            + " | grep -q .", run.unless());
    }

    /** The annotate command as the runner would run it, with the facts filled in, through sh with kubectl echoing its args. */
    static String annotated(Facts f) throws Exception {
        Op.Run run = (Op.Run) new GpuRecordStep().apply(GpuHealthStepTest.ctx(INV, "master")).get(0);
        String command = f.substitute(run.command()).replace("kubectl --kubeconfig=/etc/kubernetes/admin.conf annotate", "echo");
        Process p = new ProcessBuilder("sh", "-c", command).start();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        assertEquals(0, p.waitFor());
        return out;
    }

    @Test void theRecordIsTheHostFilesWhenAnEarlierGpuctlLeftOneElseTheGpusNow() throws Exception {
        Facts fresh = facts(QUERY, 0);
        assertEquals(Optional.of("0:GPU-01bc1429-cdbb-796f-97d8-790afa7693b9"), fresh.get("gpu.w1.gpus"));
        assertEquals(Optional.of("1"), fresh.get("gpu.w1.count"));
        assertEquals("node w1 gpuctl.dev/gpus-at-bootstrap=0:GPU-01bc1429-cdbb-796f-97d8-790afa7693b9", annotated(fresh));
        String list = Files.readString(Path.of("src/test/resources/nvidia-smi/nvidia-smi-L_h200.txt"));
        String old = list + "GPU 1: NVIDIA H200 (UUID: GPU-11111111-2222-3333-4444-555555555555)\n";
        Facts migrated = facts(QUERY, 0, old);
        assertEquals(Optional.of("1"), migrated.get("gpu.w1.count"), "the old record is not counted as GPUs now");
        String want = "0:" + list.replaceAll("(?s).*UUID: (GPU-[^)]+)\\).*", "$1") + ",1:GPU-11111111-2222-3333-4444-555555555555";
        assertEquals("node w1 gpuctl.dev/gpus-at-bootstrap=" + want, annotated(migrated));
        assertEquals(Optional.of(""), facts(QUERY, 0, "not a list\n").get("gpu.w1.gpusRecordedOnHost"), "an unreadable old record is none");
    }

    @Test void theCheckNamesTheMissingGpuByIndexAndUuid() {
        Probe p = new GpuRecordStep().check(GpuHealthStepTest.ctx(INV, "master")).get(0);
        assertEquals(dev.gpuctl.kube.ClusterView.COMMAND, p.command());
        Facts now = facts(QUERY, 0);
        String recordedOne = "0:GPU-01bc1429-cdbb-796f-97d8-790afa7693b9";
        assertEquals(Optional.empty(), p.judge().apply(new ExecResult(0, node(recordedOne), ""), now));
        String missing = p.judge().apply(new ExecResult(0, node(recordedOne + ",1:GPU-11111111-2222-3333-4444-555555555555"), ""), now).orElseThrow();
        assertTrue(missing.startsWith("1 GPU(s) listed by nvidia-smi, 2 recorded at bootstrap; missing: GPU 1 (GPU-11111111-2222-3333-4444-555555555555)"), missing);
        String none = p.judge().apply(new ExecResult(0, node(null), ""), now).orElseThrow();
        assertTrue(none.contains("no annotation gpuctl.dev/gpus-at-bootstrap") && none.contains("gpuctl bootstrap --only gpu-record"), none);
        // every GPU gone: nvidia-smi's own words
        Facts lost = facts("No devices were found\n", 6);
        String gone = p.judge().apply(new ExecResult(0, node(recordedOne), ""), lost).orElseThrow();
        assertTrue(gone.startsWith("1 GPU(s) recorded at bootstrap, none listed now: "), gone);
        assertTrue(p.judge().apply(new ExecResult(1, "", "The connection to the server was refused"), now).orElseThrow().startsWith("kubectl failed (exit 1)"));
    }
}
