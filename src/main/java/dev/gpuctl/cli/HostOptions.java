package dev.gpuctl.cli;

import dev.gpuctl.remote.SshOptions;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What every command that connects to hosts shares (a picocli mixin), with one wording and one meaning everywhere:
 * {@code --accept-new-host-keys} and {@code --connect-timeout}. The inventory ({@link InventoryOption}), the refusal of
 * a local node ({@link AllowLocalOption}) and {@code --dry-run} ({@link DryRunOption}) are mixins of their own: not
 * every command that connects changes hosts, or takes its inventory as its first argument.
 */
final class HostOptions {
    @Option(names = "--accept-new-host-keys", description = "Trust and record host keys seen for the first time (like ssh's"
        + " accept-new). A changed key is always refused.")
    boolean acceptNewHostKeys;

    @Mixin ConnectTimeoutOption connect;

    /** The command's SSH options: these flags over the defaults (a key's passphrase asked on the console). */
    SshOptions ssh() {
        return connect.options(acceptNewHostKeys);
    }
}
