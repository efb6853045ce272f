package dev.gpuctl.cli;

import dev.gpuctl.workflow.RepairWorkflow;
import dev.gpuctl.workflow.Workflows;
import dev.gpuctl.engine.Repairs;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.gpu.RepairPlan;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.remote.SshOptions;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "repair",
    description = {"Bring sick GPU nodes back: diagnose, hold the jobs safe, fix over ssh, prove it, return the node.",
        "Diagnose each node read-only (GPUs against the bootstrap record by UUID, the processes holding them, the Xids since"
            + " boot by cause, the device plugin's count) and print the plan; then cordon and drain it as `gpuctl drain` does"
            + " (GPU jobs waited for, never killed without --force), apply the remedies least disruptive first, each with its"
            + " own check (restart the device plugin pod, reset an idle GPU, reboot), prove it (every recorded GPU, no new"
            + " hardware Xid, allocatable back, a smoke pod running nvidia-smi -L on every GPU) and uncordon it only then;"
            + " otherwise it stays cordoned, with the human step named. Each repair is recorded in .gpuctl/CLUSTER/repairs/ and"
            + " as the node annotation " + Repairs.LAST_REPAIR + "."})
final class RepairCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "NODE", description = "GPU nodes of the inventory to repair, one after the other.") List<String> hosts;
    @Option(names = "--force", description = "Evict the GPU Jobs and bare pods on the node instead of waiting for them.") boolean force;
    @Option(names = "--reboot", description = "Reboot the node whatever the diagnosis says.") boolean reboot;
    @Mixin DrainTimeoutOption drainTimeout;
    @Mixin ChangeOptions.OnNodes options;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() {
        ChangeOptions.Opened opened = options.open(parent.env, "repair", hosts);
        Inventory loaded = opened.inv();
        for (String h : hosts) {
            Node n = loaded.node(h).orElseThrow();
            if (n.isMaster() || !n.gpu()) {
                throw new GpuctlException(ExitCode.USAGE, h + " is not a GPU node (repair mends GPU workers; the inventory says "
                    + (n.isMaster() ? "role: master" : "gpu: false") + ")");
            }
        }
        List<String> nodes = List.copyOf(new java.util.LinkedHashSet<>(hosts));
        SshOptions ssh = options.checkedSsh(opened);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        PhaseRuns.Over over;
        try {
            over = PhaseRuns.acting(loaded, opened.file(), ssh, err);
        } catch (RemoteException e) {
            throw GpuctlException.of(e);
        }
        Inventory inv = over.inv();
        List<Repairs.Outcome> failed = new ArrayList<>();
        RepairWorkflow.Listener says = new RepairWorkflow.Listener() {
            @Override public void diagnosed(Repairs.Diagnoses diagnoses) {
                for (Repairs.Diagnosis d : diagnoses.nodes().values()) out.print(RepairPlan.text(d.plan()));
                out.flush();
            }

            @Override public void healthy(String node) {
                out.println(node + ": nothing to repair (left as it is)");
                out.flush();
            }

            @Override public void proving(Repairs.Diagnosis d) {
                err.println(d.dcgmLine());
                err.flush();
            }

            @Override public void repaired(Repairs.Outcome o) {
                Path audit = audit(inv, o);
                if (o.proved()) {
                    out.println(o.node() + ": repaired and proved (" + remedies(o) + "), back in service; audit: " + audit);
                } else {
                    failed.add(o);
                    out.println(o.node() + ": NOT repaired; it stays cordoned; audit: " + audit);
                }
                out.flush();
            }
        };
        RepairWorkflow.Report report;
        try {
            report = Workflows.run(new RepairWorkflow(inv, nodes, reboot, options.dryRun(), drainTimeout.value, force, says),
                new Workflows.Target(inv, over.connector(), err, new Runner.Options(options.dryRun(), 16, Set.of(),
                    drainTimeout.commandTimeout()), PhaseRuns.lockHolder()), PhaseRuns.guard(err));
        } catch (RemoteException e) {
            throw GpuctlException.of(e);
        }
        judged(inv, report);
        if (options.dryRun()) {
            out.println(ChangeOptions.DRY_RUN_COMPLETE);
            return ExitCode.OK.code();
        }
        if (failed.isEmpty()) return ExitCode.OK.code();
        StringBuilder sb = new StringBuilder("repair did not bring every node back:\n");
        for (Repairs.Outcome o : failed) {
            sb.append(o.node()).append(": still wrong after ").append(remedies(o)).append(":\n");
            o.stillWrong().forEach(w -> sb.append("  ").append(w.replace("\n", "\n  ")).append('\n'));
            sb.append("  ").append(o.node()).append(" stays cordoned. What a person must do: ").append(o.plan().humanStep())
                .append("; then run `gpuctl repair ").append(o.node()).append("` again (it uncordons the node once proved).\n");
        }
        throw new GpuctlException(ExitCode.STEP_FAILED, sb.toString().stripTrailing());
    }

    private static String remedies(Repairs.Outcome o) {
        return String.join(", ", o.plan().remedies().stream().map(r -> r.name().toLowerCase()).toList());
    }

    /** Writes {@code o}'s audit entry; its path. */
    private static Path audit(Inventory inv, Repairs.Outcome o) {
        try {
            return Repairs.writeAudit(inv, o);
        } catch (IOException e) {
            throw new GpuctlException(ExitCode.STEP_FAILED, o.node() + ": the repair's audit entry could not be written in "
                + inv.stateDir().resolve(inv.cluster().name()).resolve("repairs") + ": " + e.getMessage());
        }
    }

    /** Where the session stopped before every node was handled: the exit code and what to do next; else nothing. */
    private static void judged(Inventory inv, RepairWorkflow.Report report) {
        Runner.Result last = report.last();
        if (report.stage() == RepairWorkflow.Stage.DIAGNOSE) {
            if (last.wasInterrupted()) PhaseRuns.judged(last, outcomes("Nothing was changed."));
            Repairs.Diagnoses diagnoses = report.diagnoses().orElseThrow();
            if (diagnoses.unreachable().isEmpty()) return;
            StringBuilder sb = new StringBuilder("repair: the diagnosis could not ask every host; nothing was changed:\n");
            diagnoses.unreachable().forEach((h, why) -> sb.append("  ").append(h).append(": ").append(why).append('\n'));
            sb.append("Logs: ").append(diagnoses.logDir());
            throw new GpuctlException(diagnoses.notConnected().isEmpty() ? ExitCode.STEP_FAILED : ExitCode.UNREACHABLE, sb.toString());
        }
        if (report.stage() == RepairWorkflow.Stage.DONE) return;
        String n = report.node().orElseThrow().facts().node();
        if (report.stage() == RepairWorkflow.Stage.RECORD) {
            boolean proved = report.outcome().orElseThrow().proved();
            String recordNext = n + (proved ? " was proved healthy but is still cordoned" : " stays cordoned") + "; the repair's audit entry is"
                + " written here. Run `gpuctl repair " + n + "` again once the master answers (a healthy node is only uncordoned).";
            try {
                Repairs.writeAudit(inv, report.outcome().orElseThrow());
            } catch (IOException e) {
                // the failure below is what matters; the audit's own failure is said with it
                recordNext += " (the audit entry could not be written either: " + e.getMessage() + ")";
            }
            PhaseRuns.judged(last, outcomes(recordNext));
            return;
        }
        // the remedies or the proof: interrupted, refused (the lock), or the jobs could not be held safe
        PhaseRuns.judged(last, outcomes(n + " stays cordoned. Re-run later, raise --drain-timeout, or use --force (evicts the GPU jobs);"
            + " `gpuctl uncordon " + n + "` puts it back in service as it is."));
    }

    private static PhaseRuns.Outcomes outcomes(String next) {
        return new PhaseRuns.Outcomes(r -> PhaseRuns.whereEachHostStopped(r, "Run the same command again to resume.\nLogs: " + r.logDir()),
            "repair refused; nothing was changed:", "repair stopped:", next);
    }
}
