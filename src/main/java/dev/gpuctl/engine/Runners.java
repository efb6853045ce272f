package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.Remotes;
import dev.gpuctl.remote.SshOptions;
import java.io.PrintWriter;

/** The one place a command's runner is made: the inventory's hosts over ssh, the cluster's lock taken in one name. */
public final class Runners {
    private Runners() {}

    /**
     * A runner that connects to the inventory's hosts with {@code ssh}; with a {@code lockHolder}, it holds the
     * cluster's lock on the master from its first change to its end ({@link Runner#lockingMaster}).
     */
    public static Runner connecting(Inventory inv, SshOptions ssh, PrintWriter progress, Runner.Options options, String lockHolder) {
        Runner r = new Runner(inv, node -> Remotes.open(node, ssh), progress, options);
        return lockHolder == null ? r : r.lockingMaster(lockHolder);
    }
}
