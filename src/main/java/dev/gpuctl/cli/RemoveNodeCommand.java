package dev.gpuctl.cli;

import dev.gpuctl.engine.EtcdMembers;
import dev.gpuctl.workflow.NodeWorkflows;
import dev.gpuctl.hostfiles.HostJournal;
import dev.gpuctl.inventory.Inventory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "remove-node",
    description = {"Take workers out of the cluster for good, e.g. for a repair or a loan to another team.",
        "Drain them (GPU Jobs waited for, evicted only with --force), kubeadm reset each host and remove what reset leaves"
            + " (/etc/cni/net.d, CNI interfaces, KUBE-/CNI iptables chains, join leftovers), then delete the nodes (last, so"
            + " that no kubelet registers one again). The host preparation stays: `gpuctl bootstrap` with the host back in the"
            + " inventory joins it again. A single master is refused (use reset); of a control plane of several masters, one"
            + " master at a time is taken out: its etcd member is removed from another master before its host is reset, and"
            + " the removal is refused (exit 1, naming the numbers) while another master is down or when the members left"
            + " would be fewer than a quorum of healthy ones.",
        "With --restore-host the host preparation is undone too, from the change journal gpuctl keeps on each host ("
            + HostJournal.PATH + "): files put back from their .gpuctl-orig backups (or removed when gpuctl made them), units"
            + " unmasked or disabled as they were, package holds released, swap on as it was; packages stay installed."})
final class RemoveNodeCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "HOST", description = "Workers of the inventory to remove.") List<String> hosts;
    @Option(names = {"-i", "--inventory"}, paramLabel = "FILE",
        description = "Inventory file (default: $GPUCTL_INVENTORY, or ./inventory.yaml).") Path inventory;
    @Option(names = "--force", description = "Evict the GPU Jobs and bare pods too, without waiting for them.") boolean force;
    @Option(names = "--drain-timeout", paramLabel = "DURATION", converter = Converters.DurationValue.class,
        description = "How long to wait for the GPU Jobs, and kubectl drain for evictions, e.g. 30m or 2h (a bare number is seconds; default 10m).")
    Duration drainTimeout = NodeWorkflows.DEFAULT_DRAIN_TIMEOUT;
    @Option(names = "--restore-host", description = "Afterwards put each host's preparation back as it was before gpuctl (see above); with --dry-run, say what each host would get back.")
    boolean restoreHost;
    @Mixin DryRunOption dryRunOption;
    @Mixin HostOptions connection;
    @Mixin AllowLocalOption allowLocal;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() {
        Path file = DrainCommand.inventoryFile(inventory, parent.env);
        Inventory inv = Inventories.loadHaAware(file, parent.env);
        allowLocal.check(inv, file, "remove-node");
        PhaseRuns.checkNodes(inv, hosts, "remove-node");
        List<String> masters = inv.masters().stream().map(n -> n.name()).filter(hosts::contains).toList();
        if (!inv.highlyAvailable() && !masters.isEmpty()) {
            throw new GpuctlException(ExitCode.USAGE, inv.master().name() + " is the master: remove-node takes workers only;"
                + " `gpuctl reset` takes the whole cluster down. Nothing was changed.");
        }
        if (masters.size() > 1) {
            throw new GpuctlException(ExitCode.USAGE, "remove-node takes one master at a time (etcd changes its members one at a"
                + " time): " + String.join(", ", masters) + ". Nothing was changed.");
        }
        if (!masters.isEmpty() && !dryRunOption.dryRun) {
            String leaving = masters.get(0);
            EtcdMembers.refusal(EtcdMembers.survey(inv, leaving, connection.ssh()), leaving).ifPresent(why -> {
                throw new GpuctlException(ExitCode.STEP_FAILED, "remove-node " + leaving + " refused: " + why + ". Nothing was changed.");
            });
        }
        PhaseRuns.run(inv, file, NodeWorkflows.removeNodes(hosts, masters, drainTimeout, force, restoreHost), dryRunOption.dryRun, connection.ssh(),
            NodeWorkflows.commandTimeout(drainTimeout, Duration.ofMinutes(10)), spec.commandLine().getErr(), "remove-node",
            "Fix the cause and run remove-node again: it resumes where it stopped (a node already deleted is not drained again).");
        spec.commandLine().getOut().println(dryRunOption.dryRun ? "dry run complete: nothing was changed"
            : "removed: " + String.join(", ", hosts) + (restoreHost
                ? " (host preparation put back as it was before gpuctl; each journal archived in " + HostJournal.PATH + ".restored-*)"
                : " (host preparation kept; take them out of the inventory, or bootstrap to join them again)"));
        return ExitCode.OK.code();
    }
}
