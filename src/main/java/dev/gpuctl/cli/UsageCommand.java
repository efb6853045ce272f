package dev.gpuctl.cli;

import dev.gpuctl.text.Terminal;
import dev.gpuctl.kube.UsageReport;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.workflow.KueueWorkflows;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
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


    @Override public Integer call() throws IOException {
        if (json && csv) throw new GpuctlException(ExitCode.USAGE, "--json and --csv: choose one");
        Inventory inv = Inventories.loadHaAware(inventory.resolve(parent.env), parent.env);
        if (inv.teams().isEmpty()) {
            throw new GpuctlException(ExitCode.USAGE, inv.file().getFileName() + " has no teams: (GPU-hours are counted per team's"
                + " queue only when the inventory names the teams; see docs/inventory.md)");
        }
        Instant now = Instant.now();
        UsageReport.Report r = KueueReads.run(inv, inventory.resolve(parent.env), connection.ssh(), spec,
            KueueWorkflows.usage(now.minus(since), now, by), "no usage");
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? Terminal.jsonWriter().writeValueAsString(UsageReport.document(inv.cluster().name(), r)) + "\n"
            : csv ? UsageReport.csv(r) : UsageReport.text(inv.cluster().name(), r));
        out.flush();
        return ExitCode.OK.code();
    }
}
