package dev.gpuctl.cli;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryException;
import dev.gpuctl.inventory.InventoryLoader;
import java.nio.file.Path;

/** Loads an inventory for a command; inventory errors become one message and exit code 2. */
final class Inventories {
    private Inventories() {}

    static Inventory load(Path file) {
        try {
            return InventoryLoader.load(file);
        } catch (InventoryException e) {
            var errors = e.errors();
            String head = errors.size() == 1 ? "" : file + " has " + errors.size() + " problems:\n";
            throw new GpuctlException(ExitCode.USAGE, head + e.getMessage());
        }
    }
}
