package dev.gpuctl.steps;

import dev.gpuctl.kube.ClusterView;
import dev.gpuctl.gpu.DevChar;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Every running GPU pod still sees its GPUs: {@code nvidia-smi -L} in each (kubectl exec, on the master), read-only.
 * The running GPU pods are those of the cluster read every master check shares ({@link ClusterView#COMMAND}, which
 * asks each pod's owner and GPU limits), so listing them starts no kubectl of its own; the execs follow in one command
 * ({@link DevChar#execCommand}), one kubectl a pod. Every running GPU pod is asked: nothing the master can read says
 * which lost its GPUs (the pod stays Running, the device plugin sees nothing), and one that lost them before its node's
 * links were made stays without them, so a node whose links are right now does not clear its pods.
 * A pod answering "Failed to initialize NVML: Unknown Error" lost them at a {@code systemctl daemon-reload} on a host
 * without the /dev/char links ({@link DevCharStep}); {@code gpuctl repair NODE} makes the links and restarts it. A pod
 * whose image has no nvidia-smi, or that cannot be exec'd into, proves nothing either way and is not counted.
 */
public final class GpuPodsNvmlStep implements Step {
    public static final String ID = "gpu-pods-nvml";

    @Override public String id() { return ID; }
    @Override public String title() { return "running GPU pods still see their GPUs (nvidia-smi -L in each)"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }
    @Override public boolean readsCluster() { return true; }

    /** nvidia-smi -L in every running GPU pod, listing them itself ({@link DevChar#podsCommand}): what a repair asks. */
    public static final String PODS = DevChar.podsCommand(Kube::kubectl);

    static Optional<String> problem(String answer) {
        List<DevChar.PodNvml> pods = DevChar.parsePods(answer);
        return DevChar.podsProblem(pods).map(p -> p + "; run " + String.join(" and ",
            DevChar.nodesWithLost(pods).stream().map(n -> "`gpuctl repair " + n + "`").toList()));
    }

    /** The fact that holds the exec command made from the cluster read on this master ({@link DevChar#execCommand}). */
    static String execFact(HostContext ctx) { return "gpu-pods-nvml." + ctx.node().name() + ".exec"; }

    /** The running GPU pods, from the cluster read: teaches the exec command; a failed read teaches one that asks nothing. */
    static Probe listed(HostContext ctx) {
        return Probe.of("running GPU pods listed (the cluster read)", ClusterView.COMMAND,
                r -> r.ok() ? Optional.empty() : Optional.of("kubectl failed (exit " + r.exit() + "): " + r.tail(2)))
            .learning(r -> Map.of(execFact(ctx), execCommand(r)));
    }

    static String execCommand(ExecResult r) {
        if (!r.ok()) return DevChar.NO_GPU_POD;
        try {
            return DevChar.execCommand(Kube::kubectl, ClusterView.parse(r.stdout()));
        } catch (IllegalArgumentException e) {
            return DevChar.NO_GPU_POD; // the cluster checks beside it say what is wrong with the read
        }
    }

    static Probe probe(HostContext ctx) {
        return Probe.of("every running GPU pod's nvidia-smi -L answers (no \"" + DevChar.LOST + "\")", Facts.ref(execFact(ctx)),
            r -> problem(r.stdout()));
    }

    @Override public List<Probe> check(HostContext ctx) { return List.of(listed(ctx), probe(ctx)); }

    @Override public List<Op> apply(HostContext ctx) { return List.of(); }

    @Override public String fix(Probe probe, boolean failed, String host, String inventory) {
        return "gpuctl repair -i " + inventory + " NODE for each node named (makes the /dev/char links and NVIDIA's udev rule,"
            + " restarts the pods that lost their GPUs: a container gets them back only when started again)";
    }
}
