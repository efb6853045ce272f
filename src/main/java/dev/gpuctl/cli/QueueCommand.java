package dev.gpuctl.cli;

import dev.gpuctl.kube.QueueReport;
import dev.gpuctl.text.Terminal;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.workflow.KueueWorkflows;
import java.io.IOException;
import java.io.PrintWriter;
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

    @Override public Integer call() throws IOException {
        Inventory inv = Inventories.loadHaAware(inventory.resolve(parent.env), parent.env);
        if (inv.teams().isEmpty()) {
            throw new GpuctlException(ExitCode.USAGE, inv.file().getFileName() + " has no teams: (teams share the GPUs through queues"
                + " only when the inventory names them; see docs/inventory.md)");
        }
        if (team != null && inv.team(team).isEmpty()) {
            throw new GpuctlException(ExitCode.USAGE, "--team " + team + ": no such team (expected one of: "
                + String.join(", ", inv.teams().stream().map(t -> t.name()).toList()) + ")");
        }
        List<String> teams = team != null ? List.of(team) : inv.teams().stream().map(t -> t.name()).toList();
        Instant now = Instant.now();
        List<QueueReport.Team> report = KueueReads.run(inv, inventory.resolve(parent.env), connection.ssh(), spec,
            KueueWorkflows.queue(teams, now), "cannot read Kueue's queues");
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? Terminal.jsonWriter().writeValueAsString(QueueReport.document(inv.cluster().name(), report, now)) + "\n"
            : QueueReport.table(report));
        out.flush();
        return ExitCode.OK.code();
    }
}
