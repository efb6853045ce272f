package dev.gpuctl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.gpuctl.engine.Plan;
import dev.gpuctl.engine.PlanText;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.steps.Steps;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "plan",
    description = {"Validate the inventory, check that networks do not overlap, and print every step and the exact "
        + "commands and files bootstrap would run and write on each host.", "Offline: opens no connection."})
final class PlanCommand implements java.util.concurrent.Callable<Integer> {
    @Mixin InventoryOption inventory;
    @Option(names = "--json", description = "Print the plan as JSON.") boolean json;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() throws Exception {
        Inventory inv = Inventories.load(inventory.resolve(parent.env));
        Plan plan = Plan.of(inv, Steps.phases());
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(plan));
        } else {
            out.print(PlanText.render(plan, inv));
        }
        out.flush();
        if (!plan.cidrConflicts().isEmpty()) {
            throw new GpuctlException(ExitCode.PREFLIGHT_REFUSED, "the CIDR check failed:\n  "
                + String.join("\n  ", plan.cidrConflicts())
                + "\nPick a podCidr/serviceCidr that overlaps none of these (and matches your CNI), then run plan again.");
        }
        return ExitCode.OK.code();
    }
}
