package dev.gpuctl.cli;

import java.time.Duration;
import picocli.CommandLine.Option;

/** {@code --command-timeout}, on the long host-changing runs (a picocli mixin): bootstrap, upgrade, certs renew. */
final class CommandTimeoutOption {
    @Option(names = "--command-timeout", defaultValue = "10m", paramLabel = "DURATION", converter = Converters.DurationValue.class,
        description = "Longest one command may run, e.g. 90s, 10m (a bare number is seconds; default ${DEFAULT-VALUE}).") Duration value;
}
