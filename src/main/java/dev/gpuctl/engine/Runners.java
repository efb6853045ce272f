package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.Remote;
import java.io.PrintWriter;
import java.util.function.Function;

/** The one place a command's runner is made (LayeringTest holds it): the workflow layer asks here. */
public final class Runners {
    private Runners() {}

    /**
     * A runner over the inventory's hosts, reached by {@code connector}; with a {@code lockHolder}, it holds the
     * cluster's lock on the master from its first change to its end ({@link Runner#lockingMaster}).
     */
    public static Runner make(Inventory inv, Function<Node, Remote> connector, PrintWriter progress, Runner.Options options, String lockHolder) {
        Runner r = new Runner(inv, connector, progress, options);
        return lockHolder == null ? r : r.lockingMaster(lockHolder);
    }
}
