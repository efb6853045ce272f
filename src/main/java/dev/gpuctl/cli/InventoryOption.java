package dev.gpuctl.cli;

import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * Which inventory: the positional argument, else -i FILE, else $GPUCTL_INVENTORY, else ./inventory.yaml.
 */
public final class InventoryOption {
    @Parameters(index = "0", arity = "0..1", paramLabel = "INVENTORY",
        description = "Inventory file (default: -i, $GPUCTL_INVENTORY, or ./inventory.yaml).")
    Path positional;

    @Option(names = {"-i", "--inventory"}, paramLabel = "FILE", description = "Inventory file.")
    Path option;

    public Path resolve(Map<String, String> env) {
        if (positional != null && option != null && !positional.equals(option)) {
            throw new GpuctlException(ExitCode.USAGE,
                "two inventories given: " + positional + " and -i " + option + " (give one)");
        }
        if (positional != null) return positional;
        return orDefault(option, env);
    }

    /** -i FILE when given, else $GPUCTL_INVENTORY, else ./inventory.yaml (for commands whose positionals are hosts). */
    static Path orDefault(Path option, Map<String, String> env) {
        if (option != null) return option;
        String fromEnv = env.get("GPUCTL_INVENTORY");
        if (fromEnv != null && !fromEnv.isBlank()) return Path.of(fromEnv);
        return Path.of("inventory.yaml");
    }
}
