package dev.gpuctl.cli;

import dev.gpuctl.engine.JoinTokens;
import dev.gpuctl.engine.StateDir;
import dev.gpuctl.hostconf.Kubeadm;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.remote.Remotes;
import dev.gpuctl.remote.SshOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.time.Instant;
import java.util.concurrent.Callable;
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
    @Option(names = "--accept-new-host-keys", description = "Trust and record a master host key seen for the first time.") boolean acceptNew;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() throws IOException {
        Inventory inv = Inventories.load(inventory.resolve(parent.env), parent.env);
        Duration lifetime = ttl;
        Path cache = JoinTokens.cacheFile(inv);
        String criSocket = inv.cluster().runtime().criSocket();
        SshOptions ssh = SshOptions.defaults(acceptNew);
        Inventories.checkIdentityFiles(inventory.resolve(parent.env), List.of(inv.master()), ssh);
        if (!refresh && !Files.exists(cache)) {
            throw new GpuctlException(ExitCode.USAGE, "no cached join command (" + cache + "); create one: gpuctl join-token --refresh "
                + inventory.resolve(parent.env));
        }
        try (Remote master = Inventories.openCluster(inv, ssh, inventory.resolve(parent.env))) {
            if (refresh) {
                ExecResult r = master.exec(JoinTokens.createCommand(lifetime), Duration.ofMinutes(2));
                if (!r.ok()) {
                    throw new GpuctlException(ExitCode.STEP_FAILED, inv.master().name() + ": kubeadm token create failed (exit "
                        + r.exit() + "):\n  " + Kubeadm.redactTokens(r.tail(5)).replace("\n", "\n  ")
                        + "\nIs the cluster initialised? Run gpuctl bootstrap first.");
                }
                String command = JoinTokens.joinCommand(Kubeadm.parseJoinCommand(r.stdout()), criSocket);
                StateDir.writePrivate(cache, (command + "\n").getBytes(StandardCharsets.UTF_8));
                print(command);
                return ExitCode.OK.code();
            }
            String cached = Files.readString(cache, StandardCharsets.UTF_8).strip();
            ExecResult list = master.exec("kubeadm token list -o json", Duration.ofMinutes(1));
            if (!list.ok()) {
                throw new GpuctlException(ExitCode.STEP_FAILED, inv.master().name() + ": kubeadm token list failed (exit "
                    + list.exit() + "): " + Kubeadm.redactTokens(list.tail(3)));
            }
            var reason = JoinTokens.invalidReason(cached, list.stdout(), Instant.now());
            if (reason.isPresent()) {
                throw new GpuctlException(ExitCode.STEP_FAILED, "the cached join command is no longer valid: " + reason.get()
                    + "\nCreate a new one: gpuctl join-token --refresh");
            }
            print(cached);
            return ExitCode.OK.code();
        } catch (RemoteException e) {
            throw new GpuctlException(ExitCode.STEP_FAILED, e.getMessage(), e);
        }
    }

    private void print(String command) {
        spec.commandLine().getOut().println(command);
        spec.commandLine().getOut().flush();
    }
}
