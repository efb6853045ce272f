package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** plan: the summary first, --hosts and --only, and --json against docs/plan.schema.json. */
class PlanCliTest {
    static final Path SCHEMA = Path.of("docs/plan.schema.json");
    static final ObjectMapper JSON = new ObjectMapper();

    static Schema schema() throws IOException {
        return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(Files.newInputStream(SCHEMA));
    }

    static List<String> errors(JsonNode doc) throws IOException {
        return schema().validate(doc).stream().map(e -> e.getInstanceLocation() + ": " + e.getMessage()).toList();
    }

    @Test void theSummaryComesBeforeTheDetailsAndSaysWhichHostGetsWhichStep() {
        CliTest.Run r = CliTest.run("plan", CliTest.EXAMPLE.toString());
        assertEquals(0, r.code(), r::toString);
        int summary = r.out().indexOf("Summary: 4 hosts, 16 steps");
        int details = r.out().indexOf("== phase 0");
        assertTrue(summary >= 0 && summary < details, r::toString);
        List<String> lines = r.out().lines().toList();
        String header = lines.stream().filter(l -> l.trim().startsWith("HOST ")).findFirst().orElseThrow();
        assertEquals(List.of("HOST", "ROLE", "GPU", "preflight", "cluster-identity", "proxy", "time", "swap", "kernel", "runtime", "packages", "driver-hold", "init", "cni",
            "join", "gpu", "gpu-record", "gpu-health", "nfs"), List.of(header.trim().split(" +")));
        assertEquals(List.of("master", "master", "no", "x", "x", "x", "x", "x", "x", "x", "x", "-", "x", "x", "-", "x", "x", "-", "x"),
            List.of(lines.stream().filter(l -> l.startsWith("  master ")).findFirst().orElseThrow().trim().split(" +")));
        assertEquals(List.of("worker-2", "worker", "yes", "x", "x", "x", "x", "x", "x", "x", "x", "x", "-", "-", "x", "-", "-", "x", "x"),
            List.of(lines.stream().filter(l -> l.startsWith("  worker-2 ")).findFirst().orElseThrow().trim().split(" +")));
    }

    @Test void hostsAndOnlyNarrowThePlanAsTheyNarrowBootstrap() {
        CliTest.Run r = CliTest.run("plan", "--hosts", "worker-1,master", "--only", "join,gpu", CliTest.EXAMPLE.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("Summary: 2 hosts, 4 steps"), r::toString);
        assertFalse(r.out().contains("[worker-2 "), r::toString);
        assertFalse(r.out().contains("step time:"), r::toString);
        assertTrue(r.out().contains("step preflight:"), "preflight always runs, so the plan shows it");
        assertTrue(r.out().contains("[worker-1 172.16.10.100 worker]\n  step join:"), r::toString);
        assertTrue(r.out().contains("[master 172.16.10.90 master]\n  step gpu:"), r::toString);
    }

    @Test void anUnknownHostOrStepIsExit2AndNamesWhatExists() {
        CliTest.Run h = CliTest.run("plan", "--hosts", "worker-9", CliTest.EXAMPLE.toString());
        assertEquals(2, h.code(), h::toString);
        assertTrue(h.err().contains("unknown host 'worker-9' for --hosts (the inventory has: master, worker-1, worker-2, worker-3)"), h::toString);
        CliTest.Run s = CliTest.run("plan", "--only", "gpus", CliTest.EXAMPLE.toString());
        assertEquals(2, s.code(), s::toString);
        assertTrue(s.err().contains("unknown step 'gpus' for --only (expected: preflight, cluster-identity, proxy, time,"), s::toString);
        assertEquals("", s.out());
    }

    @Test void oneHostIsOneHostNotOneHosts(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("one.yaml");
        Files.writeString(f, """
            cluster: { name: solo, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
            """);
        CliTest.Run r = CliTest.run("plan", f.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("packages upstream, 1 host (0 with GPUs)"), r::toString);
        assertTrue(r.out().contains("Summary: 1 host, "), r::toString);
    }

    @Test void theJsonOfTheExampleAndOfACalicoNfsPlanIsValidAgainstTheSchemaInTheRepository() throws IOException {
        for (String[] args : new String[][] {{"plan", "--json", CliTest.EXAMPLE.toString()},
                {"plan", "--json", "--hosts", "worker-3", "--only", "join", CliTest.EXAMPLE.toString()}}) {
            CliTest.Run r = CliTest.run(args);
            assertEquals(0, r.code(), r::toString);
            JsonNode doc = JSON.readTree(r.out());
            assertEquals(List.of(), errors(doc), "plan --json against " + SCHEMA);
            assertEquals(PlanCommand.SCHEMA, doc.get("schema").asText());
        }
        JsonNode doc = JSON.readTree(CliTest.run("plan", "--json", CliTest.EXAMPLE.toString()).out());
        JsonNode worker1 = doc.get("hostSteps").get(1);
        assertEquals("worker-1", worker1.get("name").asText());
        assertTrue(worker1.get("gpu").asBoolean());
        assertEquals(List.of("preflight", "cluster-identity", "proxy", "time", "swap", "kernel", "runtime", "packages", "driver-hold", "join", "gpu-health", "nfs"),
            JSON.convertValue(worker1.get("steps"), List.class));
    }

    @Test void theSchemaRefusesWhatThePlanMustNotBe() throws IOException {
        ObjectNode doc = (ObjectNode) JSON.readTree(CliTest.run("plan", "--json", CliTest.EXAMPLE.toString()).out());
        ObjectNode noSummary = doc.deepCopy();
        noSummary.remove("hostSteps");
        assertFalse(errors(noSummary).isEmpty(), "hostSteps is required");
        ObjectNode badOp = doc.deepCopy();
        ((ObjectNode) badOp.at("/phases/1/hosts/0/steps/0/apply/0")).put("kind", "teleport");
        assertFalse(errors(badOp).isEmpty(), "an unknown op kind is refused");
        ObjectNode writeWithoutContent = doc.deepCopy();
        for (JsonNode op : writeWithoutContent.findValues("apply").stream().flatMap(a -> iterable(a).stream()).toList()) {
            if (op.get("kind").asText().equals("write")) {
                ((ObjectNode) op).remove("content");
                break;
            }
        }
        assertFalse(errors(writeWithoutContent).isEmpty(), "a write op names its content");
    }

    private static List<JsonNode> iterable(JsonNode array) {
        List<JsonNode> out = new java.util.ArrayList<>();
        array.forEach(out::add);
        return out;
    }
}
