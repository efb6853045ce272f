package dev.gpuctl.cli;

import dev.gpuctl.workflow.NodeWorkflows;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * {@code --drain-timeout}, on the commands that drain a node and then act on it (a picocli mixin): drain, remove-node,
 * repair. (upgrade's drain is one step of its batches, and its flag says so in its own words.)
 */
final class DrainTimeoutOption {
    @Option(names = "--drain-timeout", paramLabel = "DURATION", converter = Converters.DurationValue.class,
        description = "How long to wait for the GPU Jobs, and kubectl drain for evictions, e.g. 30m or 2h (a bare number is seconds; default 10m).")
    Duration value = NodeWorkflows.DEFAULT_DRAIN_TIMEOUT;

    /** The longest one command of such a run may take: long enough for the drain's own wait. */
    Duration commandTimeout() {
        return NodeWorkflows.commandTimeout(value, Duration.ofMinutes(10));
    }
}
