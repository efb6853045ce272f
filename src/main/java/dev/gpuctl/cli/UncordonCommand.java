package dev.gpuctl.cli;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.workflow.NodeWorkflows;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "uncordon", description = "Put drained nodes back in service: new pods may be scheduled there again.")
final class UncordonCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "HOST", description = "Nodes of the inventory to uncordon.") List<String> hosts;
    @Option(names = {"-i", "--inventory"}, paramLabel = "FILE",
        description = "Inventory file (default: $GPUCTL_INVENTORY, or ./inventory.yaml).") Path inventory;
    @Mixin DryRunOption dryRunOption;
    @Mixin HostOptions connection;
    @Mixin AllowLocalOption allowLocal;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() {
        Path file = DrainCommand.inventoryFile(inventory, parent.env);
        Inventory inv = Inventories.loadHaAware(file, parent.env);
        allowLocal.check(inv, file, "uncordon");
        PhaseRuns.checkNodes(inv, hosts, "uncordon");
        PhaseRuns.runActing(inv, file, NodeWorkflows.uncordon(hosts), dryRunOption.dryRun, connection.ssh(), Duration.ofMinutes(2),
            spec.commandLine().getErr(), "uncordon", "Fix the cause and run uncordon again.");
        spec.commandLine().getOut().println(dryRunOption.dryRun ? "dry run complete: nothing was changed" : "uncordoned: " + String.join(", ", hosts));
        return ExitCode.OK.code();
    }
}
