package dev.gpuctl.cli;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.workflow.Workflow;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What every day-2 command that changes hosts shares, declared once (a picocli mixin): which inventory, how to connect
 * ({@link HostOptions}: host keys and the connect timeout), {@code --dry-run} with its one meaning ({@link DryRunOption}:
 * connect, check, say what would change, change nothing) and {@code --allow-local} ({@link AllowLocalOption}); and the
 * opening every such command makes ({@link #open}: the inventory loaded, a local node refused). A command's class then
 * holds only its own options and its workflow.
 *
 * <p>Two forms, by where the inventory is given: {@link OnInventory}, as the first argument or -i FILE (bootstrap, backup,
 * reset, upgrade, certs renew), and {@link OnNodes}, -i FILE alone, the arguments being nodes (drain, uncordon, remove-node, repair).
 */
abstract class ChangeOptions {
    @Mixin DryRunOption dryRunOption;
    @Mixin HostOptions connection;
    @Mixin AllowLocalOption allowLocal;

    /** The inventory a command works on and the file it was read from. */
    record Opened(Path file, Inventory inv) {}

    /** The inventory file the flags name, else $GPUCTL_INVENTORY in {@code env}, else ./inventory.yaml. */
    abstract Path file(Map<String, String> env);

    /**
     * The inventory loaded (a wrong one is exit 2, FILE:LINE:COLUMN) and, unless --allow-local, a node with
     * {@code connection: local} refused (exit 2); {@code command} as the person typed it.
     */
    Opened open(Map<String, String> env, String command) {
        Path file = file(env);
        Inventory inv = Inventories.loadHaAware(file, env);
        allowLocal.check(inv, file, command);
        return new Opened(file, inv);
    }

    boolean dryRun() {
        return dryRunOption.dryRun;
    }

    /** The command's SSH options: the flags over the defaults. */
    SshOptions ssh() {
        return connection.ssh();
    }

    /** The SSH options, once every node's identity file is checked (exit 2 before anything connects). */
    SshOptions checkedSsh(Opened opened) {
        SshOptions ssh = ssh();
        Inventories.checkIdentityFiles(opened.file(), opened.inv().nodes(), ssh);
        return ssh;
    }

    /** {@link PhaseRuns#run} with these options: the workflow as one session, its failures as the exit code. */
    Runner.Result run(Opened opened, Workflow<Runner.Result> workflow, Duration commandTimeout, PrintWriter err, String command, String next) {
        return PhaseRuns.run(opened.inv(), opened.file(), workflow, dryRun(), ssh(), commandTimeout, err, command, next);
    }

    /** {@link PhaseRuns#runActing} with these options: as {@link #run}, through one healthy master's kubectl. */
    Runner.Result runActing(Opened opened, Workflow<Runner.Result> workflow, Duration commandTimeout, PrintWriter err, String command,
                            String next) {
        return PhaseRuns.runActing(opened.inv(), opened.file(), workflow, dryRun(), ssh(), commandTimeout, err, command, next);
    }

    /** What a dry run that completed prints on stdout. */
    static final String DRY_RUN_COMPLETE = "dry run complete: nothing was changed";

    /** What a command prints when its run completed: {@link #DRY_RUN_COMPLETE} for a dry run, else {@code done}. */
    String completed(String done) {
        return dryRun() ? DRY_RUN_COMPLETE : done;
    }

    /** The inventory as the first argument or -i FILE ({@link InventoryOption}). */
    static final class OnInventory extends ChangeOptions {
        @Mixin InventoryOption inventory;

        @Override Path file(Map<String, String> env) {
            return inventory.resolve(env);
        }
    }

    /** The inventory as -i FILE alone: the command's arguments are nodes of it. */
    static final class OnNodes extends ChangeOptions {
        @Option(names = {"-i", "--inventory"}, paramLabel = "FILE",
            description = "Inventory file (default: $GPUCTL_INVENTORY, or ./inventory.yaml).") Path inventory;

        @Override Path file(Map<String, String> env) {
            return InventoryOption.orDefault(inventory, env);
        }

        /** {@link #open}, then each of {@code nodes} checked to be a node of the inventory (exit 2 otherwise). */
        Opened open(Map<String, String> env, String command, List<String> nodes) {
            Opened opened = open(env, command);
            PhaseRuns.checkNodes(opened.inv(), nodes, command);
            return opened;
        }
    }
}
