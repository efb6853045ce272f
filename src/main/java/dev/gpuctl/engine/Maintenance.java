package dev.gpuctl.engine;

import dev.gpuctl.steps.Drain;
import java.time.Duration;
import java.util.List;

/**
 * The node lifecycle commands' phases, run by a {@link Runner}: a command names them here, never the steps. The
 * runner's host selection must include the master (where kubectl runs).
 */
public final class Maintenance {
    private Maintenance() {}

    /** {@link Drain#DEFAULT_TIMEOUT}. */
    public static final Duration DEFAULT_DRAIN_TIMEOUT = Drain.DEFAULT_TIMEOUT;

    /** The command timeout a drain needs: {@link Drain#commandTimeout}. */
    public static Duration commandTimeout(Duration drainTimeout, Duration atLeast) {
        return Drain.commandTimeout(drainTimeout, atLeast);
    }

    /** Cordon, wait for the GPU jobs (unless force), kubectl drain: {@link Drain#drain}. */
    public static Runner.Result drain(Runner runner, List<String> nodes, Duration timeout, boolean force) {
        return runner.run(List.of(Drain.drain(nodes, timeout, force)));
    }

    /** Schedulable again: {@link Drain#uncordon}. */
    public static Runner.Result uncordon(Runner runner, List<String> nodes) {
        return runner.run(List.of(Drain.uncordon(nodes)));
    }
}
