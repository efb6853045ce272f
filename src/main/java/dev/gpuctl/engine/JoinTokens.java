package dev.gpuctl.engine;

import dev.gpuctl.kube.Kubeadm;
import dev.gpuctl.inventory.Inventory;
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
