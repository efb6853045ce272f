package dev.gpuctl.cli;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.hostconf.Terminal;
import dev.gpuctl.hostconf.UsageReport;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.workflow.KueueWorkflows;
import dev.gpuctl.workflow.Workflows;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "usage",
    description = {"Show the GPU-hours each team (or person) used (Kueue's records; read-only, through the master).",
        "A job counts its GPUs × the time Kueue held them for it (admitted to finished; a running job up to now), inside the"
            + " window; then a bar chart per team and day. Measured utilisation is not kept in the cluster: the hours are allocated ones."})
final class UsageCommand implements Callable<Integer> {
    @Mixin InventoryOption inventory;
    @Option(names = "--since", defaultValue = "30d", paramLabel = "DURATION", converter = Converters.DurationValue.class,
        description = "The window: this long back from now, e.g. 30d, 7d, 12h (a bare number is seconds; default: ${DEFAULT-VALUE}; at most 365d).") Duration since;
    @Option(names = "--by", defaultValue = "team", paramLabel = "team|person", converter = ByValue.class,
        description = "One row per team or per person (with the team the jobs ran for; default: ${DEFAULT-VALUE}).") UsageReport.By by;
    @Option(names = "--json", description = "Print the report as JSON (schema " + UsageReport.SCHEMA + ").") boolean json;
    @Option(names = "--csv", description = "Print the rows as CSV (a spreadsheet's input).") boolean csv;
    @Mixin HostOptions connection;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    static final class ByValue implements picocli.CommandLine.ITypeConverter<UsageReport.By> {
        @Override public UsageReport.By convert(String v) {
            return switch (v) {
                case "team" -> UsageReport.By.TEAM;
                case "person" -> UsageReport.By.PERSON;
                default -> throw new picocli.CommandLine.TypeConversionException("'" + v + "' is not team or person");
            };
        }
    }

    /** Longest a command on the master may run. */
    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    @Override public Integer call() throws IOException {
        if (json && csv) throw new GpuctlException(ExitCode.USAGE, "--json and --csv: choose one");
        if (since.isZero()) throw new GpuctlException(ExitCode.USAGE, "--since 0: expected a window, such as 30d");
        Inventory inv = Inventories.load(inventory.resolve(parent.env), parent.env);
        if (inv.teams().isEmpty()) {
            throw new GpuctlException(ExitCode.USAGE, inv.file().getFileName() + " has no teams: (GPU-hours are counted per team's"
                + " queue only when the inventory names the teams; see docs/inventory.md)");
        }
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
        KueueWorkflows.Outcome<UsageReport.Report> o = Workflows.run(KueueWorkflows.usage(now.minus(since), now, by), on,
            PhaseRuns.guard(spec.commandLine().getErr()));
        if (o.result().wasInterrupted()) throw new GpuctlException(ExitCode.INTERRUPTED, "interrupted; run it again.\nLogs: " + o.result().logDir());
        if (o.report().isEmpty()) {
            String why = o.result().report().unreachable().stream().map(h -> h.error()).findFirst().orElse(o.problem());
            throw new GpuctlException(PhaseRuns.noConnection(o.result()) ? ExitCode.UNREACHABLE : ExitCode.STEP_FAILED,
                inv.master().name() + ": no usage: " + why + "\n  log: " + o.result().logDir().resolve(inv.master().name() + ".log"));
        }
        PrintWriter out = spec.commandLine().getOut();
        UsageReport.Report r = o.report().get();
        out.print(json ? Terminal.jsonWriter().writeValueAsString(UsageReport.document(inv.cluster().name(), r)) + "\n"
            : csv ? UsageReport.csv(r) : UsageReport.text(inv.cluster().name(), r));
        out.flush();
        return ExitCode.OK.code();
    }
}
