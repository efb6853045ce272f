package dev.gpuctl.remote;

import dev.gpuctl.inventory.Node;
import java.util.Collection;

/** Opens the right {@link Remote} for a node. */
public final class Remotes {
    private Remotes() {}

    /**
     * Reads every identity file these nodes log in with, once each, and lists the ssh-agent's keys, before anything
     * connects: a missing, unreadable or unusable key (or none at all) is the admin's input to fix, not a host's failure.
     *
     * @throws RemoteException AUTH_FAILED naming the file and what is wrong with it
     */
    public static void checkIdentityFiles(Collection<Node> nodes, SshOptions opts) {
        for (Node n : nodes) {
            if (!n.isLocal()) opts.keys().logins(n.name(), n.ssh(), opts.passphrase(), opts.agentSocket());
        }
    }

    /** {@link LocalRemote} for {@code connection: local}, else a connected {@link SshRemote}. */
    public static Remote open(Node node, SshOptions opts) {
        return node.isLocal() ? LocalRemote.open(node) : SshRemote.connect(node, opts);
    }
}
