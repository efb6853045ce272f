package dev.gpuctl.engine;

import dev.gpuctl.hostconf.Kubeadm;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.steps.JoinStep;
import dev.gpuctl.steps.JoinTokenStep;
import dev.gpuctl.steps.Phase;
import dev.gpuctl.steps.Probe;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The join command gpuctl hands to people ({@code gpuctl join-token}): made on the master by {@code kubeadm token create
 * --print-join-command} ({@link JoinStep#createToken}, as bootstrap's join), completed with the inventory's CRI socket,
 * cached in .gpuctl/CLUSTER/join-command (0600). Both of its runs are one-step runs of the engine on the master, with
 * the master's log like every other command's: {@link #refresh} (APPLY: a new token) and {@link #check} (VERIFY: is the
 * cached one still valid there).
 */
public final class JoinTokens {
    private JoinTokens() {}

    /** A token must stay valid at least this long after we print it, or it counts as expired. */
    public static final Duration MARGIN = Duration.ofMinutes(1);

    public static Path cacheFile(Inventory inv) {
        return inv.stateDir().resolve(inv.cluster().name()).resolve("join-command");
    }

    /** What {@link #refresh} came to: the run, and the join command when the run made one. */
    public record Refreshed(Runner.Result result, Optional<String> command) {}

    /**
     * A new token on the master, on {@code runner} (APPLY mode, the master its one host): the join command completed
     * with the inventory's CRI socket, or empty with the failure in the result.
     */
    public static Refreshed refresh(Runner runner, Inventory inv, Duration ttl) {
        Probe asked = Probe.of("a new join token (--refresh asks for one)", "true", r -> Optional.of("a new token was asked for"));
        Runner.Result result = runner.run(List.of(new Phase("join-token", "a new join token on the master",
            List.of(new JoinTokenStep(List.of(asked), ttl)), false)));
        if (!result.ok()) return new Refreshed(result, Optional.empty());
        Optional<String> endpoint = runner.learned(JoinStep.ENDPOINT);
        Optional<String> token = runner.learned(JoinStep.TOKEN);
        Optional<String> hash = runner.learned(JoinStep.CA_CERT_HASH);
        if (endpoint.isEmpty() || token.isEmpty() || hash.isEmpty()) return new Refreshed(result, Optional.empty());
        return new Refreshed(result, Optional.of(joinCommand(new Kubeadm.JoinCommand(endpoint.get(), token.get(), hash.get()),
            inv.cluster().runtime().criSocket())));
    }

    /**
     * Whether the cached command is still valid on the master, on {@code runner} (VERIFY mode, the master its one
     * host): {@code kubeadm token list -o json} there, judged by {@link #invalidReason}. The report's one check says.
     */
    public static Runner.Result check(Runner runner, String cachedCommand, Instant now) {
        Probe valid = Probe.of("the cached join command's token is valid on the master", "kubeadm token list -o json",
            r -> r.ok() ? invalidReason(cachedCommand, r.stdout(), now)
                : Optional.of("kubeadm token list failed (exit " + r.exit() + "): " + Kubeadm.redactTokens(r.tail(3))));
        return runner.run(List.of(new Phase("join-token", "the cached join command", List.of(new JoinTokenStep(List.of(valid),
            Duration.ZERO)), true)));
    }

    /** The command a worker runs: kubeadm's, plus the CRI socket (docker needs cri-dockerd's). */
    public static String joinCommand(Kubeadm.JoinCommand j, String criSocket) {
        return "kubeadm join " + j.apiServerEndpoint() + " --token " + j.token()
            + " --discovery-token-ca-cert-hash " + j.caCertHash() + " --cri-socket " + criSocket;
    }

    /**
     * Whether the cached command's token is still on the master and valid: empty when it is, else why not.
     *
     * @param tokenListJson output of {@code kubeadm token list -o json} on the master
     */
    public static Optional<String> invalidReason(String cachedCommand, String tokenListJson, Instant now) {
        Kubeadm.JoinCommand cached;
        try {
            cached = Kubeadm.parseJoinCommand(cachedCommand);
        } catch (RuntimeException e) {
            return Optional.of("the cached join command cannot be read (" + e.getMessage() + ")");
        }
        String id = cached.token().substring(0, cached.token().indexOf('.'));
        for (Kubeadm.BootstrapToken t : Kubeadm.parseTokenList(tokenListJson)) {
            if (!t.tokenId().equals(id)) continue;
            if (!t.token().equals(cached.token()) && !t.token().startsWith(id + ".*")) {
                return Optional.of("the master holds a different secret for token " + id);
            }
            if (!t.usableFor(now, MARGIN)) {
                return Optional.of("token " + id + " expired" + (t.expires() == null ? "" : " at " + t.expires()));
            }
            return Optional.empty();
        }
        return Optional.of("token " + id + " is no longer on the master (expired or deleted)");
    }
}
