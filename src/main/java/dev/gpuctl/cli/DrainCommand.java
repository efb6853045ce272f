package dev.gpuctl.cli;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.workflow.NodeWorkflows;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "drain",
    description = {"Take nodes out of service for a repair or a driver change, waiting for their GPU Jobs first.",
        "Cordon them, wait for the GPU Jobs running there to finish (never evicted unless --force), then evict the"
            + " other pods (kubectl drain; DaemonSets stay, PodDisruptionBudgets are respected). The nodes stay cordoned"
            + " until `gpuctl uncordon`."})
final class DrainCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "HOST", description = "Nodes of the inventory to drain.") List<String> hosts;
    @Option(names = {"-i", "--inventory"}, paramLabel = "FILE",
        description = "Inventory file (default: $GPUCTL_INVENTORY, or ./inventory.yaml).") Path inventory;
    @Option(names = "--force", description = "Evict the GPU Jobs and bare pods too, without waiting for them.") boolean force;
    @Option(names = "--drain-timeout", paramLabel = "DURATION", converter = Converters.DurationValue.class,
        description = "How long to wait for the GPU Jobs, and kubectl drain for evictions, e.g. 30m or 2h (a bare number is seconds; default 10m).")
    Duration drainTimeout = NodeWorkflows.DEFAULT_DRAIN_TIMEOUT;
    @Mixin DryRunOption dryRunOption;
    @Mixin HostOptions connection;
    @Mixin AllowLocalOption allowLocal;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    static Path inventoryFile(Path option, Map<String, String> env) {
        return InventoryOption.orDefault(option, env);
    }

    @Override public Integer call() {
        Path file = inventoryFile(inventory, parent.env);
        Inventory inv = Inventories.loadHaAware(file, parent.env);
        allowLocal.check(inv, file, "drain");
        PhaseRuns.checkNodes(inv, hosts, "drain");
        PhaseRuns.runActing(inv, file, NodeWorkflows.drain(hosts, drainTimeout, force), dryRunOption.dryRun, connection.ssh(),
            NodeWorkflows.commandTimeout(drainTimeout, Duration.ofMinutes(10)), spec.commandLine().getErr(), "drain",
            "The nodes stay cordoned. Re-run later, raise --drain-timeout, or use --force; `gpuctl uncordon` puts them back in service.");
        spec.commandLine().getOut().println(dryRunOption.dryRun ? "dry run complete: nothing was changed"
            : "drained: " + String.join(", ", hosts) + " (cordoned until `gpuctl uncordon`)");
        return ExitCode.OK.code();
    }
}
