package dev.gpuctl.remote;

import dev.gpuctl.inventory.Node;

/** Opens the right {@link Remote} for a node. */
public final class Remotes {
    private Remotes() {}

    /** {@link LocalRemote} for {@code connection: local}, else a connected {@link SshRemote}. */
    public static Remote open(Node node, SshOptions opts) {
        return node.isLocal() ? LocalRemote.open(node) : SshRemote.connect(node, opts);
    }
}
