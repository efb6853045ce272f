package dev.gpuctl.steps;

import dev.gpuctl.hostconf.DevChar;
import dev.gpuctl.hostconf.Kube;
import java.util.List;
import java.util.Optional;

/**
 * Every running GPU pod still sees its GPUs: {@code nvidia-smi -L} in each (kubectl exec, on the master), read-only.
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

    /** nvidia-smi -L in every running GPU pod ({@link DevChar#podsCommand}). */
    public static final String PODS = DevChar.podsCommand(Kube::kubectl);

    static Optional<String> problem(String answer) {
        List<DevChar.PodNvml> pods = DevChar.parsePods(answer);
        return DevChar.podsProblem(pods).map(p -> p + "; run " + String.join(" and ",
            DevChar.nodesWithLost(pods).stream().map(n -> "`gpuctl repair " + n + "`").toList()));
    }

    static Probe probe() {
        return Probe.of("every running GPU pod's nvidia-smi -L answers (no \"" + DevChar.LOST + "\")", PODS, r -> problem(r.stdout()));
    }

    @Override public List<Probe> check(HostContext ctx) { return List.of(probe()); }

    @Override public List<Op> apply(HostContext ctx) { return List.of(); }

    @Override public String fix(Probe probe, boolean failed, String host, String inventory) {
        return "gpuctl repair -i " + inventory + " NODE for each node named (makes the /dev/char links and NVIDIA's udev rule,"
            + " restarts the pods that lost their GPUs: a container gets them back only when started again)";
    }
}
