package dev.gpuctl.cli;

import dev.gpuctl.workflow.BackupWorkflow;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.backup.EtcdRestore;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.engine.Backups;
import dev.gpuctl.engine.LaptopKubeconfigs;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "restore",
    description = {"Restore the control plane on the master from a gpuctl backup.",
        "The archive is checked against its .sha256 first, then every member (a path backup does not write, a link, a"
            + " device, an absolute name or '..' refuses it, naming the member, before any host is touched), and only the"
            + " checked members go to the master; the etcd snapshot is restored into a fresh data directory (etcdutl"
            + " snapshot restore), the PKI and configuration are put back, admin.conf becomes the ssh user's ~/.kube/config"
            + " and .gpuctl/CLUSTER/admin.conf here, and the control plane is started and waited for. The workers come back"
            + " by themselves (same CA, same endpoint).",
        "For a master that was reinstalled (same address) after bootstrap's host preparation. What the master had is"
            + " moved to /var/backups/gpuctl-before-restore-TIME/ on it, never deleted. Refused while the master runs a"
            + " healthy cluster, unless --force.",
        "Several masters (etcd's disaster recovery): every master's control plane is stopped first, then the same snapshot"
            + " is restored as each master's member with one --initial-cluster naming every master (etcdutl snapshot restore"
            + " --name --initial-advertise-peer-urls --initial-cluster --initial-cluster-token), the control planes started"
            + " and waited for until the members are exactly these, all healthy, and each API server ready. Each master keeps"
            + " its own PKI, kubeconfigs and manifests; a master that lost them is left out and joins again by bootstrap."})
final class RestoreCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "FILE", description = "The backup archive (its FILE.sha256 beside it).") Path file;
    @Parameters(index = "1", arity = "0..1", paramLabel = "INVENTORY",
        description = "Inventory file (default: -i, $GPUCTL_INVENTORY, or ./inventory.yaml).") Path inventoryArg;
    @Option(names = {"-i", "--inventory"}, paramLabel = "FILE", description = "Inventory file.") Path inventoryOption;
    @Option(names = "--force", description = "Restore even though the master runs a healthy cluster (its state is replaced).") boolean force;
    @Mixin HostOptions connection;
    @Mixin AllowLocalOption allowLocal;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() {
        InventoryOption io = new InventoryOption();
        io.positional = inventoryArg;
        io.option = inventoryOption;
        Path invFile = io.resolve(parent.env);
        Inventory inv = Inventories.loadHaAware(invFile, parent.env);
        Optional<List<EtcdRestore.Member>> members = inv.highlyAvailable() ? BackupWorkflow.members(inv) : Optional.empty();
        if (inv.highlyAvailable() && members.isEmpty()) {
            throw new GpuctlException(ExitCode.USAGE, invFile + ": a restore of several masters names each master's etcd member by its"
                + " IP (https://IP:2380); give nodes[].nodeIp to every master whose address is a host name. Nothing was changed.");
        }
        allowLocal.check(inv, invFile, "restore");
        Path archive = file.toAbsolutePath().normalize();
        Backups.Checked in = Backups.check(archive);
        if (in.problem().isPresent()) {
            throw new GpuctlException(ExitCode.USAGE, "cannot restore from " + archive + ": " + in.problem().get() + "; nothing was changed");
        }
        Backups.Restorable content;
        try {
            content = Backups.restorable(in, LaptopKubeconfigs.recordedCaHash(inv.localKubeconfig()));
        } catch (IOException e) {
            throw new GpuctlException(ExitCode.USAGE, "cannot read this cluster's record in " + inv.localKubeconfig().getParent()
                + ": " + e.getMessage() + "; nothing was changed");
        } catch (Backups.Bad e) {
            throw new GpuctlException(ExitCode.USAGE, "cannot restore from " + archive + ": " + e.getMessage() + "; nothing was changed");
        }
        try (content) {
            PrintWriter err = spec.commandLine().getErr();
            SshOptions ssh = connection.ssh();
            Inventories.checkIdentityFiles(invFile, inv.masters(), ssh);
            List<String> masters = inv.masters().stream().map(Node::name).toList();
            // several masters: in parallel, so that every member's wait for the others (the quorum) is answered
            PhaseRuns.judged(PhaseRuns.session(members.map(ms -> BackupWorkflow.restoreWholeControlPlane(content, force, ms))
                        .orElseGet(() -> BackupWorkflow.restore(content, force)), inv, ssh, err,
                    new Runner.Options(false, masters.size(), Set.copyOf(masters), BackupCommand.COMMAND_TIMEOUT)),
                new PhaseRuns.Outcomes(r -> "interrupted: " + String.join("; ", r.interrupted())
                        + "\nRun the same restore again to finish it. Logs: " + r.logDir(),
                    "restore refused; nothing was changed:", "restore failed:",
                    "What " + (masters.size() > 1 ? "each master" : "the master") + " had before is in /var/backups/gpuctl-before-restore-*/"
                        + " on it. Fix the cause and run the same restore again."));
            PrintWriter o = spec.commandLine().getOut();
            if (members.isPresent()) {
                o.println("restored " + String.join(", ", masters) + " from " + archive + " (sha256 " + in.sha256() + "): etcd members "
                    + EtcdRestore.initialCluster(members.get()) + ", all healthy; every API server ready; every node is Ready");
            } else {
                o.println("restored " + inv.master().name() + " from " + archive + " (sha256 " + in.sha256() + "); every node is Ready");
            }
            o.println("next: gpuctl verify " + invFile);
            o.flush();
        }
        return ExitCode.OK.code();
    }
}
