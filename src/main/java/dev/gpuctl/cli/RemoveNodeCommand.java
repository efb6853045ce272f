package dev.gpuctl.cli;

import dev.gpuctl.engine.EtcdMembers;
import dev.gpuctl.workflow.NodeWorkflows;
import dev.gpuctl.hostfiles.HostJournal;
import dev.gpuctl.inventory.Inventory;
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
    @Option(names = "--force", description = "Evict the GPU Jobs and bare pods too, without waiting for them.") boolean force;
    @Mixin DrainTimeoutOption drainTimeout;
    @Option(names = "--restore-host", description = "Afterwards put each host's preparation back as it was before gpuctl (see above); with --dry-run, say what each host would get back.")
    boolean restoreHost;
    @Mixin ChangeOptions.OnNodes options;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() {
        ChangeOptions.Opened opened = options.open(parent.env, "remove-node", hosts);
        Inventory inv = opened.inv();
        List<String> masters = inv.masters().stream().map(n -> n.name()).filter(hosts::contains).toList();
        if (!inv.highlyAvailable() && !masters.isEmpty()) {
            throw new GpuctlException(ExitCode.USAGE, inv.master().name() + " is the master: remove-node takes workers only;"
                + " `gpuctl reset` takes the whole cluster down. Nothing was changed.");
        }
        if (masters.size() > 1) {
            throw new GpuctlException(ExitCode.USAGE, "remove-node takes one master at a time (etcd changes its members one at a"
                + " time): " + String.join(", ", masters) + ". Nothing was changed.");
        }
        if (!masters.isEmpty() && !options.dryRun()) {
            String leaving = masters.get(0);
            EtcdMembers.refusal(EtcdMembers.survey(inv, leaving, options.ssh()), leaving).ifPresent(why -> {
                throw new GpuctlException(ExitCode.STEP_FAILED, "remove-node " + leaving + " refused: " + why + ". Nothing was changed.");
            });
        }
        options.run(opened, NodeWorkflows.removeNodes(hosts, masters, drainTimeout.value, force, restoreHost), drainTimeout.commandTimeout(),
            spec.commandLine().getErr(), "remove-node",
            "Fix the cause and run remove-node again: it resumes where it stopped (a node already deleted is not drained again).");
        spec.commandLine().getOut().println(options.completed("removed: " + String.join(", ", hosts) + (restoreHost
            ? " (host preparation put back as it was before gpuctl; each journal archived in " + HostJournal.PATH + ".restored-*)"
            : " (host preparation kept; take them out of the inventory, or bootstrap to join them again)")));
        return ExitCode.OK.code();
    }
}
