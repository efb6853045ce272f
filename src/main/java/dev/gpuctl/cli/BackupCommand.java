package dev.gpuctl.cli;

import dev.gpuctl.engine.Backups;
import dev.gpuctl.engine.NewPrivateFile;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StateDir;
import dev.gpuctl.backup.BackupArchive;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.workflow.BackupWorkflow;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "backup",
    description = {"Back the control plane up to this machine, in one gzip'd tar (0600) with a sha256 file beside it.",
        "The archive holds an etcd snapshot (etcdctl snapshot save), /etc/kubernetes/pki, the kubeconfigs, the static"
            + " pod manifests and the kubeadm and kubelet configuration; its content is listed. It holds the cluster's"
            + " private keys: keep it like a password. Backups in .gpuctl/backups/ are rotated: the newest --keep stay."})
final class BackupCommand implements Callable<Integer> {
    @Option(names = "--out", paramLabel = "FILE",
        description = "Write the archive here (default: .gpuctl/backups/CLUSTER-YYYYMMDDTHHMMSSZ.tar.gz beside the inventory); its"
            + " directory must be writable by you alone, or sticky like /tmp (its mode is never changed; a directory made"
            + " here is 0700); the file is new, 0600 from its creation.") Path out;
    @Option(names = "--keep", defaultValue = "5", paramLabel = "N", converter = Converters.PositiveInt.class,
        description = "Backups of this cluster kept in .gpuctl/backups/, newest first (default ${DEFAULT-VALUE}).") int keep;
    @Mixin ChangeOptions.OnInventory options;
    @Spec CommandSpec spec;
    /** Longest one command may run: the snapshot of a large etcd, the archive's transfer. */
    static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(10);
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() {
        ChangeOptions.Opened opened = options.open(parent.env, "backup");
        Path invFile = opened.file();
        Inventory inv = opened.inv();
        Path archive = out != null ? out.toAbsolutePath().normalize() : Backups.newArchive(inv, Instant.now());
        if (!BackupArchive.safeName(archive.getFileName().toString())) {
            throw new GpuctlException(ExitCode.USAGE, "--out " + out + ": the file name must be letters, digits, '.', '_' and '-'"
                + " (not ending in .sha256)");
        }
        if (out == null && !options.dryRun()) { // gpuctl's own .gpuctl/backups/: 0700
            try {
                StateDir.ensurePrivateDir(archive.getParent());
            } catch (IOException e) {
                throw new GpuctlException(ExitCode.USAGE, "cannot make " + archive.getParent() + ": " + e.getMessage());
            }
        }
        // before any connection: a directory others may write (not sticky), an existing file or a planted link is refused
        NewPrivateFile.check(archive);
        NewPrivateFile.check(Backups.sumFile(archive));
        PrintWriter err = spec.commandLine().getErr();
        SshOptions ssh = new SshOptions(java.util.Optional.ofNullable(options.connection.connect.value), Duration.ofSeconds(15), options.connection.acceptNewHostKeys, null,
            new dev.gpuctl.remote.SshKeys(), SshOptions.agentFromEnvironment());
        Inventories.checkIdentityFiles(invFile, inv.masters(), ssh);
        // several masters: each member asked, the snapshot from the first healthy one
        Set<String> masters = inv.masters().stream().map(Node::name).collect(Collectors.toCollection(LinkedHashSet::new));
        BackupWorkflow.Backed backed = PhaseRuns.session(BackupWorkflow.backup(inv, archive), inv, ssh, err,
            new Runner.Options(options.dryRun(), inv.masters().size(), masters, COMMAND_TIMEOUT));
        PhaseRuns.judged(backed.result(),
            new PhaseRuns.Outcomes(r -> "interrupted: " + String.join("; ", r.interrupted())
                    + "\nNo archive was kept; the master's work directory is removed by the next backup. Logs: " + r.logDir(),
                "backup refused; nothing was changed:", "backup failed; no archive was kept:",
                "Check the control plane (gpuctl verify " + invFile + "), then run backup again."));
        PrintWriter o = spec.commandLine().getOut();
        if (options.dryRun()) {
            o.println("dry run: would write " + archive + " (and " + archive.getFileName() + ".sha256); nothing was changed");
            o.flush();
            return ExitCode.OK.code();
        }
        Backups.Done done;
        try {
            done = Backups.finish(inv, archive, keep);
        } catch (Backups.Bad e) {
            throw new GpuctlException(ExitCode.STEP_FAILED, "the backup does not check out: " + e.getMessage());
        }
        o.println("backup: " + done.archive());
        backed.member().ifPresent(m -> o.println("etcd member: " + m + " (the first master whose etcd member is healthy; the member list is in "
            + BackupWorkflow.MEMBERS_FILE + ")"));
        o.println("sha256: " + done.sha256() + "  (" + done.sumFile() + ")");
        o.println("content:");
        o.print(done.listing().indent(2));
        o.flush();
        for (Path r : done.removed()) err.println("removed old backup " + r + " (keeping the newest " + keep + ")");
        err.flush();
        return ExitCode.OK.code();
    }
}
