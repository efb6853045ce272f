package dev.gpuctl.cli;

import dev.gpuctl.inventory.SshSettings;
import dev.gpuctl.remote.SshOptions;
import java.time.Duration;
import java.util.Optional;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/** {@code --connect-timeout}, on every command that connects (a picocli mixin): over each node's ssh.connectTimeout. */
final class ConnectTimeoutOption {
    @Option(names = "--connect-timeout", paramLabel = "DURATION", converter = Converter.class,
        description = "How long connecting to a host may take (TCP, its SSH banner, the key exchange), e.g. 5s or 1m"
            + " (a bare number is seconds; 1s to 5m);"
            + " over the inventory's ssh.connectTimeout (default 15s).")
    Duration value;

    /** The run's SSH options: these flags over the defaults. */
    SshOptions options(boolean acceptNewHostKeys) {
        return SshOptions.defaults(acceptNewHostKeys).withConnectTimeout(Optional.ofNullable(value));
    }

    /** The inventory's own reading of a connect timeout, so both take the same text. */
    static final class Converter implements ITypeConverter<Duration> {
        @Override public Duration convert(String text) {
            try {
                return SshSettings.parseConnectTimeout(text);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
