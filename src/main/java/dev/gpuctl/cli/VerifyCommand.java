package dev.gpuctl.cli;

import dev.gpuctl.workflow.VerifyWorkflow;
import dev.gpuctl.workflow.Workflows;
import dev.gpuctl.workflow.Workflow;
import dev.gpuctl.text.Terminal;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StepFailure;
import dev.gpuctl.engine.VerifyReport;
import dev.gpuctl.engine.VerifyText;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.Remotes;
import dev.gpuctl.remote.SshOptions;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "verify",
    description = {"Prove that every host setting and the cluster are still right (after a reboot or an update).",
        "Read-only."})
final class VerifyCommand implements Callable<Integer> {
    @Mixin InventoryOption inventory;
    @Option(names = "--json", description = "Print the report as JSON (schema gpuctl.verify/v1, see docs/verify.md).") boolean json;
    @Option(names = "--hosts", split = ",", paramLabel = "NAME", description = "Only these hosts.") List<String> hosts = List.of();
    @Mixin HostOptions connection;
    @Option(names = "--wait-timeout", paramLabel = "DURATION", converter = Converters.WaitValue.class,
        description = "How long what is still starting after a boot (units, the API server, nodes, pods) is waited for"
            + " before it is judged, e.g. 90s or 5m (a bare number is seconds; 0: no waiting; default 2m).")
    Duration waitTimeout = Runner.VERIFY_WAIT;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() throws Exception {
        Inventory inv = Inventories.loadHaAware(inventory.resolve(parent.env), parent.env);
        for (String h : hosts) {
            if (inv.node(h).isEmpty()) throw new GpuctlException(ExitCode.USAGE, "unknown host '" + h + "' for --hosts");
        }
        List<Node> nodes = inv.nodes().stream().filter(n -> hosts.isEmpty() || hosts.contains(n.name())).toList();
        SshOptions ssh = connection.ssh();
        Inventories.checkIdentityFiles(inventory.resolve(parent.env), nodes, ssh);
        Runner.Result result = run(inv, ssh, new LinkedHashSet<>(hosts), waitTimeout, spec, VerifyWorkflow.verify());
        VerifyReport report = result.report();
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("schema", "gpuctl.verify/v1");
            doc.put("cluster", inv.cluster().name());
            doc.put("ok", report.ok());
            doc.put("hosts", report.hosts());
            out.println(Terminal.jsonWriter().writeValueAsString(doc));
        } else {
            out.print(VerifyText.render(report));
        }
        out.flush();
        return exitCode(result, spec.commandLine().getErr());
    }

    /**
     * A verify run's exit code: 6 when a host could not be reached at all, 1 when a host's connection failed
     * otherwise (host key, login, lost), else 4, 5 or 0 by the checks; each such host named on {@code err} with its log.
     */
    static int exitCode(Runner.Result result, PrintWriter err) {
        VerifyReport report = result.report();
        if (!report.unreachable().isEmpty()) {
            err.println("gpuctl: cannot reach " + String.join(", ", report.unreachable().stream().map(VerifyReport.HostReport::name).toList()));
            for (var f : result.failures()) err.println("  log: " + f.log());
            boolean noConnection = result.failures().stream().anyMatch(StepFailure::unreachable);
            return (noConnection ? ExitCode.UNREACHABLE : ExitCode.STEP_FAILED).code();
        }
        if (!report.ok()) return ExitCode.VERIFY_FAILED.code();
        return report.warned() ? ExitCode.VERIFY_WARNED.code() : ExitCode.OK.code();
    }

    /** How long one probe may run in a verify run. */
    static final Duration PROBE_TIMEOUT = Duration.ofMinutes(2);

    /**
     * A verify run of {@code phases} on the engine (read-only, no lock), Ctrl-C stopping it cleanly (exit 130: a
     * re-run asks again); its report.
     */
    static Runner.Result run(Inventory inv, SshOptions ssh, Set<String> hosts, Duration wait, CommandSpec spec,
                            Workflow<Runner.Result> workflow) {
        PrintWriter err = spec.commandLine().getErr();
        Runner.Result result = Workflows.run(workflow, Workflows.over(inv, ssh, err, Runner.Options.verify(16, hosts, PROBE_TIMEOUT, wait), null),
            PhaseRuns.guard(err));
        if (result.wasInterrupted()) {
            throw new GpuctlException(ExitCode.INTERRUPTED, "interrupted; nothing was changed (verify only reads): run it again."
                + "\nLogs: " + result.logDir());
        }
        return result;
    }
}
