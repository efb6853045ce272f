package dev.gpuctl.cli;

import dev.gpuctl.engine.Backups;
import dev.gpuctl.engine.PlanText;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.kube.KubeVersion;
import dev.gpuctl.text.Secrets;
import dev.gpuctl.kube.UpgradePolicy;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.workflow.UpgradeWorkflow;
import dev.gpuctl.remote.SshOptions;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "upgrade",
    description = {"Upgrade the cluster's Kubernetes to the inventory's version (or --to), one minor or a patch at a time.",
        "Preflight on every host, the control plane on the master (kubeadm upgrade apply, which renews admin.conf: its"
            + " copies on the master, in .gpuctl/ and in a kubeconfig merged by gpuctl kubeconfig --merge are refreshed),"
            + " then its node; with several masters, then each other master, one at a time (kubeadm upgrade node, its node"
            + " drained and back; refused while another master's API server is not ready), then the workers in batches (drain, kubeadm upgrade node, kubelet and kubectl, wait Ready"
            + " with every GPU, uncordon). Run it again after a failure or Ctrl-C: nodes already at the target are skipped."
            + " Shares bootstrap's lock, held from the first change to the last batch.",
        "--dry-run connects and checks every phase; the offline view, connecting to nothing, is gpuctl plan --upgrade --details."})
final class UpgradeCommand implements Callable<Integer> {
    @Option(names = "--to", paramLabel = "VERSION", description = "Target version: a minor (1.35: the newest patch the package"
        + " source has) or a patch (1.35.1); default: the inventory's cluster.kubernetesVersion.") String to;
    @Option(names = "--max-unavailable", defaultValue = "1", paramLabel = "N|P%", description = "Workers upgraded at once: a number,"
        + " or a percentage of the workers (default ${DEFAULT-VALUE}).") String maxUnavailable;
    @Option(names = "--drain-timeout", defaultValue = "10m", paramLabel = "DURATION", converter = Converters.DurationValue.class,
        description = "Longest a node's drain may take, e.g. 90s, 30m (a bare number is seconds; default ${DEFAULT-VALUE}).") Duration drainTimeout;
    @Option(names = "--force", description = "Evict what a drain would wait for (running GPU jobs, unmanaged pods).") boolean force;
    @Mixin CommandTimeoutOption commandTimeout;
    @Mixin ChangeOptions.OnInventory options;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    /** The upgrade's options from the inventory and the flags; a wrong flag is a usage error. */
    static UpgradePolicy.Options options(Inventory inv, String to, String maxUnavailable, Duration drainTimeout, boolean force) {
        KubeVersion target = UpgradePolicy.target(inv.cluster().kubernetesVersion(), to).orElseThrow(() ->
            new GpuctlException(ExitCode.USAGE, "--to '" + to + "' is no Kubernetes version: give a minor (1.35) or a patch (1.35.1)"));
        int workers = (int) inv.nodes().stream().filter(n -> !n.isMaster()).count();
        int batch;
        try {
            batch = UpgradePolicy.batchSize(maxUnavailable, Math.max(1, workers));
        } catch (IllegalArgumentException e) {
            throw new GpuctlException(ExitCode.USAGE, "--max-unavailable: " + e.getMessage());
        }
        return new UpgradePolicy.Options(target, batch, drainTimeout, force);
    }

    /**
     * What plan --upgrade prints, offline: the target, the batches, the summary, with these warnings, then (with
     * {@code details}) every phase's commands per host.
     */
    static String planText(Inventory inv, UpgradePolicy.Options o, List<String> warnings, boolean details) {
        List<String> workers = inv.nodes().stream().filter(n -> !n.isMaster()).map(Node::name).toList();
        StringBuilder sb = new StringBuilder("Upgrade to ").append(o.target()).append(": the control plane on ").append(inv.master().name())
            .append(", then its node, ");
        List<String> others = inv.masters().stream().skip(1).map(Node::name).toList();
        if (!others.isEmpty()) {
            sb.append("then the other masters one at a time (kubeadm upgrade node; each only while the other masters' API servers are ready): ")
                .append(String.join(", ", others)).append(", ");
        }
        sb.append("then the workers ").append(o.batchSize()).append(" at a time:");
        List<List<String>> batches = UpgradePolicy.batches(workers, o.batchSize());
        for (int i = 0; i < batches.size(); i++) sb.append(i == 0 ? " " : ", then ").append(batches.get(i));
        sb.append(".\nNodes already at ").append(o.target()).append(" are skipped. Drains wait up to ").append(o.drainTimeout().toSeconds())
            .append(" s").append(o.force() ? " and evict what still runs (--force)" : "").append(".\n\n");
        return sb.append(Secrets.redact(PlanText.render(UpgradeWorkflow.plan(inv, o), inv, warnings, details))).toString();
    }

    @Override public Integer call() {
        ChangeOptions.Opened opened = options.open(parent.env, "upgrade");
        Inventory inv = opened.inv();
        UpgradePolicy.Options o = options(inv, to, maxUnavailable, drainTimeout, force);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        SshOptions ssh = options.checkedSsh(opened);
        boolean dryRun = options.dryRun();
        Duration timeout = UpgradeWorkflow.commandTimeout(o, commandTimeout.value);
        err.println((dryRun ? "dry run of the upgrade to " : "upgrade to ") + o.target() + ", workers " + o.batchSize() + " at a time");
        UpgradeWorkflow.Outcome done;
        try {
            // one session: the lock is held from the first change to the last batch (a dry run takes none)
            done = PhaseRuns.session(new UpgradeWorkflow(inv, o, Backups.newArchive(inv, Instant.now()), err), inv, ssh, err,
                new Runner.Options(dryRun, 16, new LinkedHashSet<>(), timeout));
        } catch (Backups.Bad e) {
            throw new GpuctlException(ExitCode.STEP_FAILED, "the control-plane backup does not check out, so nothing was upgraded: "
                + e.getMessage());
        }
        if (dryRun) {
            PhaseRuns.judged(done.result(), PhaseRuns.dryRunOutcomes("upgrade"));
            out.println("dry run: nothing was changed");
            return ExitCode.OK.code();
        }
        done.backup().ifPresent(b -> err.println("control-plane backup: " + b.archive() + " (sha256 " + b.sha256() + ")"));
        PhaseRuns.judged(done.result(), new PhaseRuns.Outcomes(
            r -> PhaseRuns.whereEachHostStopped(r, "Run the same command again to resume: nodes already at " + o.target()
                + " are skipped.\nLogs: " + r.logDir()),
            done.mastersDone().isEmpty() ? "upgrade refused; nothing was changed on any host:"
                : "upgrade refused after " + String.join(", ", done.mastersDone()) + " (at " + o.target() + "); nothing more was changed:",
            "upgrade stopped after a failure:",
            "Fix the cause and run upgrade again: nodes already at " + o.target() + " are skipped."));
        if (!done.left().isEmpty()) {
            throw new GpuctlException(ExitCode.STEP_FAILED, "upgrade left nodes where GPU jobs still run (every other node is at "
                + o.target() + "):\n  " + String.join("\n  ", done.left()));
        }
        boolean changed = done.changed();
        out.println(changed ? "upgrade complete: every node at " + o.target() : "nothing to upgrade: every node is at " + o.target());
        return ExitCode.OK.code();
    }
}
