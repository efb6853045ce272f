package dev.gpuctl.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.gpuctl.engine.Plan;
import dev.gpuctl.engine.PlanConnections;
import dev.gpuctl.engine.PlanFilter;
import dev.gpuctl.engine.PlanSummary;
import dev.gpuctl.engine.PlanText;
import dev.gpuctl.engine.ShellHelpers;
import dev.gpuctl.text.Secrets;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryPlaces;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "plan",
    description = {"Validate the inventory, check that networks do not overlap, and print a summary of what bootstrap would do: "
        + "which host gets which step, what each step changes, how each host is reached, and the warnings.",
        "With --details, also every phase, host, step, command and file. Offline: opens no connection."})
final class PlanCommand implements Callable<Integer> {
    /** The id of the --json document's shape; docs/plan.schema.json describes it. Fields are only ever added. */
    static final String SCHEMA = "gpuctl.plan/v1";

    @Mixin InventoryOption inventory;
    @Option(names = "--json", description = "Print the plan as JSON (schema " + SCHEMA + ": docs/plan.schema.json).") boolean json;
    @Option(names = "--only", split = ",", paramLabel = "STEP", description = "Only these steps, as bootstrap --only runs them "
        + "(preflight always): ${COMPLETION-CANDIDATES}", completionCandidates = BootstrapCommand.StepIds.class)
    List<String> only = List.of();
    @Option(names = "--hosts", split = ",", paramLabel = "NAME", description = "Only these hosts.") List<String> hosts = List.of();
    @Option(names = "--details", description = "Also print every phase, host, step, command and file (commands as they can be pasted into a shell).")
    boolean details;
    @Option(names = "--upgrade", description = "Print what `gpuctl upgrade` would do instead (as upgrade --dry-run with its defaults).") boolean upgrade;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() throws Exception {
        Inventory inv = Inventories.loadForPlan(inventory.resolve(parent.env), parent.env);
        // offline, a key that is not on this machine yet is a warning: the connecting commands refuse it (exit 2)
        List<String> warnings = InventoryPlaces.missingIdentityFiles(inv, inventory.resolve(parent.env), parent.env).stream()
            .map(e -> e.format() + "; the commands that connect refuse to start without it").toList();
        if (upgrade) {
            spec.commandLine().getOut().print(UpgradeCommand.planText(inv, UpgradeCommand.options(inv, null, "1", Duration.ofMinutes(10), false),
                warnings, details));
            spec.commandLine().getOut().flush();
            return ExitCode.OK.code();
        }
        Selection.checkSteps(only);
        Selection.checkHosts(inv, hosts);
        Plan plan = PlanFilter.hosts(Plan.of(inv, new LinkedHashSet<>(only)), new LinkedHashSet<>(hosts));
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
            out.println(mapper.writeValueAsString(redacted(document(mapper, plan, inv, warnings))));
        } else {
            out.print(Secrets.redact(PlanText.render(plan, inv, warnings, details)));
        }
        out.flush();
        if (!plan.cidrConflicts().isEmpty()) {
            throw new GpuctlException(ExitCode.USAGE, "the CIDR check failed:\n  "
                + String.join("\n  ", plan.cidrConflicts())
                + "\nPick a podCidr/serviceCidr that overlaps none of these (and matches your CNI), then run plan again.");
        }
        return ExitCode.OK.code();
    }

    /**
     * The --json document: its schema id, the plan's fields, the summary (hosts × steps) as {@code hostSteps}, how each
     * host is reached ({@code connections}), the plan's {@code warnings} (as the text plan shows them) and the shell
     * functions some commands call ({@code shellFunctions}, empty when none does).
     */
    static ObjectNode document(ObjectMapper mapper, Plan plan, Inventory inv, List<String> warnings) {
        ObjectNode doc = mapper.createObjectNode();
        doc.put("schema", SCHEMA);
        doc.setAll((ObjectNode) mapper.valueToTree(plan));
        doc.set("hostSteps", mapper.valueToTree(PlanSummary.rows(plan, name -> inv.node(name).map(n -> n.gpu()).orElse(false))));
        ArrayNode connections = doc.putArray("connections");
        for (PlanConnections.Connection c : PlanConnections.of(inv)) {
            ObjectNode o = connections.addObject();
            o.put("name", c.name());
            o.put("connection", c.connection());
            if (c.connection().equals("ssh")) {
                o.put("user", c.user());
                o.put("address", c.address());
                o.put("port", c.port());
                o.put("privilege", c.privilege());
                o.put("keySource", c.keySource());
                c.bastion().ifPresentOrElse(b -> o.put("bastion", b), () -> o.putNull("bastion"));
            }
            o.set("sshConfigWarnings", mapper.valueToTree(c.sshConfigWarnings()));
        }
        doc.set("warnings", mapper.valueToTree(PlanConnections.warnings(inv, warnings)));
        doc.put("shellFunctions", ShellHelpers.needed(PlanText.commands(plan)) ? ShellHelpers.PREAMBLE : "");
        return doc;
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
