package dev.gpuctl.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.gpuctl.engine.Plan;
import dev.gpuctl.engine.PlanText;
import dev.gpuctl.hostconf.Secrets;
import dev.gpuctl.inventory.Inventory;
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
        Plan plan = Plan.of(inv);
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
            out.println(mapper.writeValueAsString(redacted(mapper.valueToTree(plan))));
        } else {
            out.print(Secrets.redact(PlanText.render(plan, inv)));
        }
        out.flush();
        if (!plan.cidrConflicts().isEmpty()) {
            throw new GpuctlException(ExitCode.PREFLIGHT_REFUSED, "the CIDR check failed:\n  "
                + String.join("\n  ", plan.cidrConflicts())
                + "\nPick a podCidr/serviceCidr that overlaps none of these (and matches your CNI), then run plan again.");
        }
        return ExitCode.OK.code();
    }

    /** The tree with every string value redacted ({@link Secrets}): a value is redacted as text, never the JSON around it. */
    static JsonNode redacted(JsonNode node) {
        if (node instanceof ObjectNode o) {
            o.fields().forEachRemaining(e -> e.setValue(redacted(e.getValue())));
        } else if (node instanceof ArrayNode a) {
            for (int i = 0; i < a.size(); i++) a.set(i, redacted(a.get(i)));
        } else if (node.isTextual()) {
            String r = Secrets.redact(node.textValue());
            if (!r.equals(node.textValue())) return TextNode.valueOf(r);
        }
        return node;
    }
}
