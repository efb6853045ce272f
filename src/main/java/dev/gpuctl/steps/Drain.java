package dev.gpuctl.steps;

import java.time.Duration;
import java.util.List;

/**
 * The GPU-aware drain as phases for the one engine ({@code Runner.run(List<Phase>)}): any command that takes nodes out
 * of service (drain, upgrade, remove-node) runs {@link #drain} before and {@link #uncordon} after. Both run on the
 * master only: the runner's host selection must include it.
 */
public final class Drain {
    private Drain() {}

    /** How long a drain waits for the GPU jobs on a node, and kubectl drain for evictions, unless told otherwise. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(10);

    /**
     * Cordon the nodes; then, unless {@code force}, wait up to {@code timeout} for the GPU Jobs and bare GPU pods on
     * them to finish, failing (step "gpu-jobs", naming each node, pod and GPU count) while any still runs, before
     * anything is evicted; then kubectl drain the rest (DaemonSets ignored, emptyDir data deleted, PDBs respected up
     * to {@code timeout}); with {@code force}, GPU jobs and bare pods are evicted too.
     */
    public static Phase drain(List<String> nodes, Duration timeout, boolean force) {
        List<Step> steps = force
            ? List.of(new CordonStep(nodes, true), new EvictStep(nodes, timeout, true))
            : List.of(new CordonStep(nodes, true), new GpuJobsStep(nodes, timeout), new EvictStep(nodes, timeout, false));
        return new Phase("drain", "drain " + String.join(", ", nodes), steps, false);
    }

    /** Make the nodes schedulable again. */
    public static Phase uncordon(List<String> nodes) {
        return new Phase("uncordon", "uncordon " + String.join(", ", nodes), List.of(new CordonStep(nodes, false)), false);
    }

    /** The runner's command timeout a drain needs: kubectl drain runs up to {@code timeout}, plus a minute. */
    public static Duration commandTimeout(Duration timeout, Duration atLeast) {
        Duration need = timeout.plusMinutes(1);
        return need.compareTo(atLeast) > 0 ? need : atLeast;
    }
}
