package dev.gpuctl.cli;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryException;
import dev.gpuctl.inventory.InventoryLoader;
import java.nio.file.Path;

/** Loads an inventory for a command; inventory errors become one message and exit code 2. */
final class Inventories {
    private Inventories() {}

    /** Exit 2 when a node's identity file is missing, unreadable or not a usable key: nothing connects first. */
    static void checkIdentityFiles(Path file, java.util.Collection<dev.gpuctl.inventory.Node> nodes, dev.gpuctl.remote.SshOptions ssh) {
        try {
            dev.gpuctl.remote.Remotes.checkIdentityFiles(nodes, ssh);
        } catch (dev.gpuctl.remote.RemoteException e) {
            throw new GpuctlException(ExitCode.USAGE, file + ": " + e.getMessage() + " Nothing was connected to.");
        }
    }

    static Inventory load(Path file) {
        try {
            return InventoryLoader.load(file);
        } catch (InventoryException e) {
            throw usageError(file, e);
        }
    }

    /** Every problem of a file gpuctl reads (inventory, job spec), one a line, as exit 2. */
    static GpuctlException usageError(Path file, InventoryException e) {
        var errors = e.errors();
        String head = errors.size() == 1 ? "" : file + " has " + errors.size() + " problems:\n";
        return new GpuctlException(ExitCode.USAGE, head + e.getMessage());
    }
}
