package dev.gpuctl.cli;

import dev.gpuctl.engine.JoinTokens;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StateDir;
import dev.gpuctl.engine.VerifyReport;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.workflow.JoinTokenWorkflow;
import dev.gpuctl.workflow.Workflows;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "join-token",
    description = {"Print a valid kubeadm join command for a new worker (the token goes to stdout only).",
        "Without --refresh: the cached command, if its token is still valid on the master."})
final class JoinTokenCommand implements Callable<Integer> {
    @Mixin InventoryOption inventory;
    @Option(names = "--refresh", description = "Create a new token on the master and cache the join command.") boolean refresh;
    @Option(names = "--ttl", defaultValue = "24h", paramLabel = "DURATION", converter = Converters.DurationValue.class,
        description = "The new token's lifetime, e.g. 2h, 90m, 24h (a bare number is seconds; at most 365d; default ${DEFAULT-VALUE}).") Duration ttl;
    @Mixin HostOptions connection;
    @Mixin AllowLocalOption allowLocal;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() throws IOException {
        Inventory inv = Inventories.loadHaAware(inventory.resolve(parent.env), parent.env);
        if (refresh) allowLocal.check(inv, inventory.resolve(parent.env), "join-token --refresh");
        Path cache = JoinTokens.cacheFile(inv);
        SshOptions ssh = connection.ssh();
        Inventories.checkIdentityFiles(inventory.resolve(parent.env), inv.masters(), ssh);
        if (!refresh && !Files.exists(cache)) {
            throw new GpuctlException(ExitCode.USAGE, "no cached join command (" + cache + "); create one: gpuctl join-token --refresh "
                + inventory.resolve(parent.env));
        }
        String cached = refresh ? "" : Files.readString(cache, StandardCharsets.UTF_8).strip();
        PrintWriter err = spec.commandLine().getErr();
        Inventories.Acting acting;
        try {
            acting = Inventories.openCluster(inv, ssh, inventory.resolve(parent.env), err);
        } catch (RemoteException e) {
            throw GpuctlException.of(e);
        }
        // the master's connection is the run's: its commands go to the master's log in .gpuctl/logs like any run's
        Remote master = acting.master();
        Set<String> onMaster = Set.of(acting.inv().master().name());
        Function<Runner.Options, Workflows.Target> on = options -> new Workflows.Target(acting.inv(), n -> master,
            new PrintWriter(Writer.nullWriter()), options, null);
        if (refresh) {
            JoinTokenWorkflow.Refreshed made = Workflows.run(JoinTokenWorkflow.refresh(inv, ttl), on.apply(new Runner.Options(false, 1, onMaster, TIMEOUT)),
                PhaseRuns.guard(err));
            if (made.result().wasInterrupted()) throw new GpuctlException(ExitCode.INTERRUPTED, "interrupted; run it again.\nLogs: " + made.result().logDir());
            if (made.command().isEmpty()) {
                StringBuilder sb = new StringBuilder("no new join token:\n");
                made.result().failures().forEach(f -> sb.append(f.describe()));
                throw new GpuctlException(ExitCode.STEP_FAILED, sb + "Is the cluster initialised? Run gpuctl bootstrap first.");
            }
            StateDir.writePrivate(cache, (made.command().get() + "\n").getBytes(StandardCharsets.UTF_8));
            print(made.command().get());
            return ExitCode.OK.code();
        }
        Runner.Result checked = Workflows.run(JoinTokenWorkflow.check(cached, Instant.now()),
            on.apply(Runner.Options.verify(1, onMaster, TIMEOUT, Duration.ZERO)), PhaseRuns.guard(err));
        if (checked.wasInterrupted()) throw new GpuctlException(ExitCode.INTERRUPTED, "interrupted; run it again.\nLogs: " + checked.logDir());
        for (VerifyReport.HostReport h : checked.report().hosts()) {
            if (!h.reachable()) {
                throw new GpuctlException(PhaseRuns.noConnection(checked) ? ExitCode.UNREACHABLE : ExitCode.STEP_FAILED,
                    h.error() + "\n  log: " + checked.logDir().resolve(h.name() + ".log"));
            }
            for (VerifyReport.Check c : h.checks()) {
                if (!c.ok()) {
                    throw new GpuctlException(ExitCode.STEP_FAILED, "the cached join command is no longer valid: " + c.problem()
                        + "\nCreate a new one: gpuctl join-token --refresh");
                }
            }
        }
        print(cached);
        return ExitCode.OK.code();
    }

    /** Longest a command on the master may run. */
    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    private void print(String command) {
        spec.commandLine().getOut().println(command);
        spec.commandLine().getOut().flush();
    }
}
