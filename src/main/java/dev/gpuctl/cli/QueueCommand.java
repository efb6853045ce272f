package dev.gpuctl.cli;

import dev.gpuctl.hostconf.QueueReport;
import dev.gpuctl.hostconf.Terminal;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.workflow.KueueWorkflows;
import dev.gpuctl.workflow.Workflows;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.time.Duration;
import java.util.Set;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "queue",
    description = {"Show the teams' GPU queues (Kueue; read-only, through the master).",
        "Per team: its GPU quota, the GPUs its jobs hold, how many it borrows and lends, its running and pending jobs; then each"
            + " team's pending jobs in admission order with their wait so far and the reason Kueue gives."})
final class QueueCommand implements Callable<Integer> {
    @Mixin InventoryOption inventory;
    @Option(names = "--team", paramLabel = "TEAM", description = "Only this team.") String team;
    @Option(names = "--json", description = "Print the report as JSON (schema " + QueueReport.SCHEMA + ").") boolean json;
    @Mixin HostOptions connection;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    /** Longest a command on the master may run. */
    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    @Override public Integer call() throws IOException {
        Inventory inv = Inventories.load(inventory.resolve(parent.env), parent.env);
        if (inv.teams().isEmpty()) {
            throw new GpuctlException(ExitCode.USAGE, inv.file().getFileName() + " has no teams: (teams share the GPUs through queues"
                + " only when the inventory names them; see docs/inventory.md)");
        }
        if (team != null && inv.team(team).isEmpty()) {
            throw new GpuctlException(ExitCode.USAGE, "--team " + team + ": no such team (expected one of: "
                + String.join(", ", inv.teams().stream().map(t -> t.name()).toList()) + ")");
        }
        List<String> teams = team != null ? List.of(team) : inv.teams().stream().map(t -> t.name()).toList();
        SshOptions ssh = connection.ssh();
        Inventories.checkIdentityFiles(inventory.resolve(parent.env), List.of(inv.master()), ssh);
        Remote master;
        try {
            master = Inventories.openCluster(inv, ssh, inventory.resolve(parent.env));
        } catch (RemoteException e) {
            throw GpuctlException.of(e);
        }
        Instant now = Instant.now();
        Workflows.Target on = new Workflows.Target(inv, n -> master, new PrintWriter(Writer.nullWriter()),
            Runner.Options.verify(1, Set.of(inv.master().name()), TIMEOUT, Duration.ZERO), null);
        KueueWorkflows.Outcome<List<QueueReport.Team>> o = Workflows.run(KueueWorkflows.queue(teams, now), on,
            PhaseRuns.guard(spec.commandLine().getErr()));
        if (o.result().wasInterrupted()) throw new GpuctlException(ExitCode.INTERRUPTED, "interrupted; run it again.\nLogs: " + o.result().logDir());
        if (o.report().isEmpty()) {
            String why = o.result().report().unreachable().stream().map(h -> h.error()).findFirst().orElse(o.problem());
            throw new GpuctlException(PhaseRuns.noConnection(o.result()) ? ExitCode.UNREACHABLE : ExitCode.STEP_FAILED,
                inv.master().name() + ": cannot read Kueue's queues: " + why + "\n  log: " + o.result().logDir().resolve(inv.master().name() + ".log"));
        }
        List<QueueReport.Team> report = o.report().get();
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? Terminal.jsonWriter().writeValueAsString(QueueReport.document(inv.cluster().name(), report, now)) + "\n"
            : QueueReport.table(report));
        out.flush();
        return ExitCode.OK.code();
    }
}
