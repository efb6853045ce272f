package dev.gpuctl.cli;

import picocli.CommandLine.Option;

/**
 * {@code --dry-run}, with one meaning on every command that changes hosts (a picocli mixin): connect, check, say what
 * would change, change nothing (no lock is taken). The offline view of a command, connecting to nothing, is
 * {@code gpuctl plan} ({@code plan --upgrade} for an upgrade).
 */
final class DryRunOption {
    @Option(names = "--dry-run", description = "Connect and check; say what would change; change nothing.")
    boolean dryRun;
}
