package dev.gpuctl.steps;

import dev.gpuctl.gpu.GpuQuestions;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code gpuctl gpus}: who holds which GPU, asked read-only ({@link GpuQuestions}): the cluster's nodes and pods on
 * the master, nvidia-smi's GPUs on every GPU node and, with a window, the kubelet's device checkpoint and the GPUs'
 * utilisation over it. Each answer is kept by its key for the report; nothing is judged or changed here.
 */
public final class GpuSurveyStep implements Step {
    private final Duration window;

    /** @param window how long the GPUs are sampled; ZERO: not at all */
    public GpuSurveyStep(Duration window) { this.window = window; }

    @Override public String id() { return "gpus"; }
    @Override public String title() { return "who holds which GPU"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.firstMaster() || ctx.node().gpu(); }

    @Override public List<Probe> check(HostContext ctx) {
        List<Probe> probes = new ArrayList<>();
        String node = ctx.node().name();
        if (ctx.node().gpu()) {
            probes.add(Probe.keeping("nvidia-smi lists the GPUs", GpuQuestions.SMI, GpuQuestions.smiKey(node)));
            if (!window.isZero()) {
                probes.add(Probe.keeping("the kubelet's device checkpoint", GpuQuestions.CHECKPOINT, GpuQuestions.checkpointKey(node)));
                probes.add(Probe.keeping("the GPUs sampled", GpuQuestions.samples(window), GpuQuestions.samplesKey(node)));
            }
        }
        if (ctx.firstMaster()) {
            probes.add(Probe.keeping("the cluster's nodes", GpuQuestions.NODES, GpuQuestions.NODES_KEY));
            probes.add(Probe.keeping("the cluster's pods", GpuQuestions.PODS, GpuQuestions.PODS_KEY));
        }
        return probes;
    }

    /** Nothing to apply: a report only asks. */
    @Override public List<Op> apply(HostContext ctx) { return List.of(); }
}
