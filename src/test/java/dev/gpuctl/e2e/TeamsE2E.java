package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Two teams share four GPUs through Kueue (1 master + 2 workers with 2 GPUs each; teams a and b of 2 GPUs in one
 * cohort): bootstrap installs Kueue from the bed's manifest and the teams' queues; team a's third one-GPU job borrows
 * b's idle GPU; b's two-GPU job reclaims it: a's borrowed job is preempted (suspended and requeued, not failed) and b's
 * runs; gpuctl queue shows it; a re-run changes nothing and verify is clean.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TeamsE2E {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String KUBECTL = "kubectl --kubeconfig=/etc/kubernetes/admin.conf ";
    static final long WAIT_NANOS = 120_000_000_000L;
    static TestBed bed;
    static Path inventory;
    static String master;

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() throws IOException {
        bed = TestBed.own("tm", 2);
        master = bed.master();
        for (String w : bed.workers()) bed.ok(w, "echo 2 > /etc/gpuctl-testbed/gpus");
        Path plain = bed.inventory("docker", "flannel");
        inventory = plain.resolveSibling("inventory-teams.yaml");
        Files.writeString(inventory, Files.readString(plain).lines()
            .map(l -> l.contains("role: worker }") ? l.replace("role: worker }", "role: worker, gpus: 2 }") : l)
            .collect(Collectors.joining("\n", "", "\n")) + """
            teams:
              - { name: a, gpus: 2, members: [alice] }
              - { name: b, gpus: 2, members: [bob] }
            kueue:
              manifest: %s
            """.formatted(bed.repoRoot().resolve("testbed/manifests/kueue-v0.14.8-testbed.yaml")));
    }

    static JsonNode kubectl(String args) throws IOException {
        return JSON.readTree(bed.ok(master, KUBECTL + args));
    }

    static JsonNode job(String team, String name) throws IOException {
        return kubectl("-n team-" + team + " get job " + name + " -o json");
    }

    static JsonNode workload(String team, String job) throws IOException {
        for (JsonNode w : kubectl("-n team-" + team + " get workloads -o json").path("items")) {
            if (w.path("metadata").path("ownerReferences").path(0).path("name").asText().equals(job)) return w;
        }
        return JSON.createObjectNode();
    }

    static String condition(JsonNode obj, String type) {
        for (JsonNode c : obj.path("status").path("conditions")) {
            if (c.path("type").asText().equals(type)) return c.path("status").asText() + "/" + c.path("reason").asText();
        }
        return "";
    }

    static boolean running(String team, String name) throws IOException {
        JsonNode j = job(team, name);
        if (j.path("spec").path("suspend").asBoolean(false)) return false;
        for (JsonNode p : kubectl("-n team-" + team + " get pods -l job-name=" + name + " -o json").path("items")) {
            if (p.path("status").path("phase").asText().equals("Running")) return true;
        }
        return false;
    }

    interface Check { boolean holds() throws IOException; }

    static void await(String what, Check check) throws Exception {
        for (long deadline = System.nanoTime() + WAIT_NANOS; System.nanoTime() < deadline; Thread.sleep(1000)) {
            if (check.holds()) return;
        }
        fail("not within 2 min: " + what + "\n" + bed.ok(master, KUBECTL + "get workloads -A -o json"));
    }

    static void submit(String team, String name, int gpus) throws IOException { submit(Map.of(), team, name, gpus, 900); }

    /** A job of {@code seconds} (the bed's pods "run" a sleep that long), submitted with {@code env} (USER: who submits). */
    static void submit(Map<String, String> env, String team, String name, int gpus, int seconds) throws IOException {
        Path spec = inventory.resolveSibling(name + ".yaml");
        Files.writeString(spec, "{ name: " + name + ", image: registry.internal/trainer:cu118, command: [sleep, \"" + seconds + "\"], gpus: "
            + gpus + " }\n");
        Gpuctl.Run r = Gpuctl.run(env, "job", "submit", spec.toString(), inventory.toString(), "--team", team);
        assertEquals(0, r.code(), r::toString);
        JsonNode j = job(team, name);
        assertEquals(team, j.path("metadata").path("labels").path("kueue.x-k8s.io/queue-name").asText(), j::toString);
    }

    static JsonNode clusterQueue(String name) throws IOException {
        return kubectl("get clusterqueue " + name + " -o json");
    }

    static String gpuReservation(String cq) throws IOException {
        for (JsonNode f : clusterQueue(cq).path("status").path("flavorsReservation")) {
            for (JsonNode r : f.path("resources")) {
                if (r.path("name").asText().equals("nvidia.com/gpu")) return r.path("total").asText() + " borrowed " + r.path("borrowed").asText();
            }
        }
        return "";
    }

    @Test @Order(1) void planShowsTheTeams() {
        Gpuctl.Run plan = Gpuctl.run("plan", inventory.toString());
        assertEquals(0, plan.code(), plan::toString);
        assertTrue(plan.out().contains("a (namespace team-a): 2 GPUs, may borrow idle GPUs; members alice"), plan.out());
    }

    @Test @Order(2) void bootstrapInstallsKueueAndTheTeamsQueues() throws Exception {
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        JsonNode d = kubectl("-n kueue-system get deployment kueue-controller-manager -o json");
        assertEquals("True/MinimumReplicasAvailable", condition(d, "Available"), d::toString);
        for (String t : List.of("a", "b")) {
            JsonNode cq = clusterQueue(t);
            assertFalse(cq.path("spec").path("cohort").asText().isEmpty(), cq::toString);
            assertEquals(2, cq.path("spec").path("resourceGroups").path(0).path("flavors").path(0).path("resources").path(0)
                .path("nominalQuota").asInt(), cq::toString);
            assertEquals("True/Ready", condition(cq, "Active"), cq::toString);
            JsonNode lq = kubectl("-n team-" + t + " get localqueue " + t + " -o json");
            assertEquals(t, lq.path("spec").path("clusterQueue").asText(), lq::toString);
        }
        assertEquals(clusterQueue("a").path("spec").path("cohort").asText(), clusterQueue("b").path("spec").path("cohort").asText());
    }

    /** When condition {@code type} of {@code obj} turned True (its lastTransitionTime). */
    static Instant since(JsonNode obj, String type) {
        for (JsonNode c : obj.path("status").path("conditions")) {
            if (c.path("type").asText().equals(type) && c.path("status").asText().equals("True")) {
                return Instant.parse(c.path("lastTransitionTime").asText());
            }
        }
        return fail(type + " is not True: " + obj);
    }

    /** GPU-hours of a finished Workload, from the cluster's own record: its admitted GPUs × Admitted → Finished. */
    static double gpuHours(JsonNode w) {
        int gpus = w.path("status").path("admission").path("podSetAssignments").path(0).path("resourceUsage").path("nvidia.com/gpu").asInt();
        return gpus * Duration.between(since(w, "Admitted"), since(w, "Finished")).toMillis() / 3_600_000.0;
    }

    static JsonNode row(JsonNode doc, String field, String value) {
        for (JsonNode r : doc.path("rows")) if (r.path(field).asText().equals(value)) return r;
        return fail("no row " + field + "=" + value + ": " + doc);
    }

    @Test @Order(3) void usageSumsTheFinishedJobsGpuHoursPerTeamAndPerson() throws Exception {
        Path three = inventory.resolveSibling("three.yaml");
        Files.writeString(three, "{ name: three, image: registry.internal/trainer:cu118, gpus: 3 }\n");
        Gpuctl.Run refused = Gpuctl.run("job", "submit", three.toString(), inventory.toString(), "--team", "a");
        assertEquals(2, refused.code(), refused::toString);
        assertTrue(refused.err().contains("three.yaml:1:62: gpus: 3 is more than any node has free of the other teams' quota: the largest"
            + " node, ") && refused.err().contains("the other teams' quota (b: 2) is 2 of the cluster's 4, which leaves 2 for team a"),
            refused::toString);
        assertEquals("", bed.ok(master, KUBECTL + "-n team-a get jobs -o name").strip(), "nothing was submitted");

        submit(Map.of("USER", "alice"), "a", "short-a", 1, 4);
        submit(Map.of("USER", "bob"), "b", "short-b", 2, 4);
        await("both short jobs finished", () -> condition(workload("a", "short-a"), "Finished").startsWith("True")
            && condition(workload("b", "short-b"), "Finished").startsWith("True"));
        JsonNode wa = workload("a", "short-a");
        JsonNode wb = workload("b", "short-b");
        double a = gpuHours(wa);
        double b = gpuHours(wb);
        assertTrue(a > 0 && b > 0, wa + "\n" + wb);
        assertEquals(2, wb.path("status").path("admission").path("podSetAssignments").path(0).path("resourceUsage").path("nvidia.com/gpu")
            .asInt(), wb::toString);

        Gpuctl.Run byTeam = Gpuctl.run("usage", "--json", "--since", "1d", inventory.toString());
        assertEquals(0, byTeam.code(), byTeam::toString);
        JsonNode doc = JSON.readTree(byTeam.out());
        assertEquals(a, row(doc, "team", "a").path("gpuHours").asDouble(), 1e-5, byTeam.out());
        assertEquals(b, row(doc, "team", "b").path("gpuHours").asDouble(), 1e-5, byTeam.out());
        assertEquals(1, row(doc, "team", "b").path("jobs").asInt(), byTeam.out());
        Gpuctl.Run byPerson = Gpuctl.run("usage", "--json", "--by", "person", inventory.toString());
        assertEquals(0, byPerson.code(), byPerson::toString);
        JsonNode people = JSON.readTree(byPerson.out());
        assertEquals("a", row(people, "person", "alice").path("team").asText(), byPerson.out());
        assertEquals(a, row(people, "person", "alice").path("gpuHours").asDouble(), 1e-5, byPerson.out());
        assertEquals(b, row(people, "person", "bob").path("gpuHours").asDouble(), 1e-5, byPerson.out());
        Gpuctl.Run text = Gpuctl.run("usage", inventory.toString());
        assertEquals(0, text.code(), text::toString);
        assertTrue(text.out().contains("\na: GPU-hours per day\n") && text.out().contains("\nb: GPU-hours per day\n"), text.out());
        assertTrue(text.out().contains("measured utilisation is not kept in the cluster"), text.out());
    }

    @Test @Order(4) void teamAsThirdJobBorrowsBsIdleGpu() throws Exception {
        submit("a", "a1", 1);
        submit("a", "a2", 1);
        await("a1 and a2 run", () -> running("a", "a1") && running("a", "a2"));
        submit("a", "a3", 1);
        await("a3 runs on b's idle GPU", () -> running("a", "a3"));
        assertEquals("3 borrowed 1", gpuReservation("a"));
        assertEquals("True/QuotaReserved", condition(workload("a", "a3"), "QuotaReserved"));
    }

    @Test @Order(5) void teamBReclaimsItsGpusTheBorrowerIsRequeuedNotFailed() throws Exception {
        submit("b", "b1", 2);
        await("b1 runs", () -> running("b", "b1"));
        JsonNode a3 = workload("a", "a3");
        assertEquals("True/Preempted", condition(a3, "Evicted"), a3::toString);
        assertEquals("True/InCohortReclamation", condition(a3, "Preempted"), a3::toString);
        assertEquals("True/Preempted", condition(a3, "Requeued"), a3::toString);
        assertEquals("False/Pending", condition(a3, "QuotaReserved"), a3::toString);
        JsonNode j = job("a", "a3");
        assertTrue(j.path("spec").path("suspend").asBoolean(), j::toString);
        assertEquals(0, j.path("status").path("failed").asInt(0), j::toString);
        assertFalse(condition(j, "Failed").startsWith("True"), j::toString);
        assertTrue(running("a", "a1") && running("a", "a2"), "a's jobs within its quota are never preempted");
        assertEquals("2 borrowed 0", gpuReservation("a"));
        assertEquals("2 borrowed 0", gpuReservation("b"));
    }

    @Test @Order(6) void queueShowsIt() throws Exception {
        Gpuctl.Run r = Gpuctl.run("queue", "--json", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        JsonNode doc = JSON.readTree(r.out());
        JsonNode a = doc.path("teams").get(0);
        assertEquals("a", a.path("team").asText(), r.out());
        assertEquals(List.of(2, 2, 0, 0, 2), List.of(a.path("quota").asInt(), a.path("inUse").asInt(), a.path("borrowed").asInt(),
            a.path("lent").asInt(), a.path("running").asInt()), r.out());
        assertEquals(1, a.path("pending").size(), r.out());
        assertEquals("a3", a.path("pending").get(0).path("job").asText(), r.out());
        assertTrue(a.path("pending").get(0).path("reason").asText().startsWith(
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu, "), r.out());
        Gpuctl.Run text = Gpuctl.run("queue", "--team", "b", inventory.toString());
        assertEquals(0, text.code(), text::toString);
        assertTrue(text.out().startsWith("TEAM  QUOTA  IN USE  BORROWED  LENT  RUNNING  PENDING\nb     2      2       0         0     1        0\n"),
            text.out());
    }

    @Test @Order(7) void jobListShowsTheQueuePlaceAndGpusTheTeams() throws Exception {
        Gpuctl.Run list = Gpuctl.run("job", "list", inventory.toString());
        assertEquals(0, list.code(), list::toString);
        assertTrue(list.out().lines().anyMatch(l -> l.matches("team-a\\s+a3\\s+Pending #1 in a\\s+1\\s.*")), list.out());
        assertTrue(list.out().lines().anyMatch(l -> l.matches("team-b\\s+b1\\s+Running\\s+2\\s.*")), list.out());
        assertTrue(list.out().lines().anyMatch(l -> l.matches("team-a\\s+short-a\\s+Complete\\s.*")), list.out());
        Gpuctl.Run gpus = Gpuctl.run("gpus", "--json", "--sample", "0", inventory.toString());
        assertEquals(0, gpus.code(), gpus::toString);
        List<String> teams = new ArrayList<>();
        for (JsonNode n : JSON.readTree(gpus.out()).path("nodes")) {
            for (JsonNode p : n.path("pods")) teams.add(p.path("namespace").asText() + "=" + p.path("team").asText());
        }
        assertEquals(List.of("team-a=a", "team-a=a", "team-b=b"), teams.stream().sorted().toList(), gpus.out());
        Gpuctl.Run table = Gpuctl.run("gpus", "--sample", "0", inventory.toString());
        assertTrue(table.out().lines().findFirst().orElse("").endsWith("PODS  TEAM") || table.out().lines().findFirst().orElse("").contains("TEAM"),
            table.out());
    }

    @Test @Order(8) void aReRunChangesNothingAndVerifyIsClean() throws Exception {
        List<String> before = new ArrayList<>();
        for (String t : List.of("a", "b")) before.add(clusterQueue(t).path("metadata").path("generation").asText());
        Gpuctl.Run again = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
        List<String> after = new ArrayList<>();
        for (String t : List.of("a", "b")) after.add(clusterQueue(t).path("metadata").path("generation").asText());
        assertEquals(before, after);
        assertTrue(running("b", "b1"), "the re-run left the running jobs alone");
        Gpuctl.Run verify = Gpuctl.run("verify", inventory.toString());
        assertEquals(0, verify.code(), verify::toString);
        assertTrue(verify.out().contains("Kueue's controller and webhook available") || verify.err().contains("Kueue"), verify::toString);
    }

    /**
     * The webhook serves, not only is registered: with Kueue's controller scaled to 0 its webhook Service has no ready
     * endpoint, the API server refuses the verify's dry-run Job in its own words, and verify fails naming the webhook and
     * what to do; scaled back, once the controller's pod is ready again (the Deployment's own count), verify is clean.
     */
    @Test @Order(9) void verifyFailsWhileKueuesWebhookDoesNotServe() throws Exception {
        String deploy = "-n kueue-system scale deployment/kueue-controller-manager --replicas=";
        assertEquals("deployment.apps/kueue-controller-manager scaled", bed.ok(master, KUBECTL + deploy + "0").strip());
        try {
            Gpuctl.Run down = Gpuctl.run("verify", inventory.toString());
            assertEquals(4, down.code(), down::toString);
            String all = down.out() + down.err();
            assertTrue(all.contains("Kueue's webhook mjob.kb.io does not answer: the API server refused the dry-run (kubectl exit 1): Error from"
                + " server (InternalError): error when creating \"STDIN\": Internal error occurred: failed calling webhook \"mjob.kb.io\":"
                + " failed to call webhook: Post \"https://kueue-webhook-service.kueue-system.svc:443/mutate-batch-v1-job?timeout=10s\":"
                + " no endpoints available for service \"kueue-webhook-service\""), down::toString);
            assertTrue(all.contains("kubectl -n kueue-system scale deployment/kueue-controller-manager --replicas=1"), down::toString);
            assertFalse(bed.ok(master, KUBECTL + "-n team-a get jobs -o name").contains("gpuctl-kueue-webhook-check"), "the dry-run stored nothing");
        } finally {
            bed.ok(master, KUBECTL + deploy + "1");
        }
        bed.ok(master, KUBECTL + "-n kueue-system wait deployment/kueue-controller-manager --for=jsonpath='{.status.readyReplicas}'=1"
            + " --timeout=120s");
        assertEquals("1", bed.ok(master, KUBECTL + "-n kueue-system get deployment kueue-controller-manager -o jsonpath='{.status.readyReplicas}'")
            .strip());
        Gpuctl.Run up = Gpuctl.run("verify", inventory.toString());
        assertEquals(0, up.code(), up::toString);
        assertFalse((up.out() + up.err()).contains("does not answer"), up::toString);
        assertFalse(bed.ok(master, KUBECTL + "-n team-a get jobs -o name").contains("gpuctl-kueue-webhook-check"), "the dry-run stored nothing");
        assertTrue(running("b", "b1"), "the controller's restart left the running jobs alone");
    }

    @Test @Order(10) void aQuotaEditChangesThatClusterQueueOnly() throws Exception {
        String b = clusterQueue("b").path("metadata").path("resourceVersion").asText();
        Path edited = inventory.resolveSibling("inventory-teams-edited.yaml");
        Files.writeString(edited, Files.readString(inventory).replace("{ name: a, gpus: 2,", "{ name: a, gpus: 1,"));
        Gpuctl.Run r = Gpuctl.run("bootstrap", edited.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(1, clusterQueue("a").path("spec").path("resourceGroups").path(0).path("flavors").path(0).path("resources").path(0)
            .path("nominalQuota").asInt());
        assertEquals(b, clusterQueue("b").path("metadata").path("resourceVersion").asText(), "b's ClusterQueue untouched");
        assertTrue(running("a", "a1") && running("a", "a2") && running("b", "b1"), "a smaller quota preempts nothing");
    }

    @Test @Order(11) void aRemovedTeamIsRefusedWhileItHasJobs() throws Exception {
        Path without = inventory.resolveSibling("inventory-teams-without-b.yaml");
        Files.writeString(without, Files.readString(inventory).replace("  - { name: b, gpus: 2, members: [bob] }\n", ""));
        Gpuctl.Run r = Gpuctl.run("bootstrap", without.toString());
        assertEquals(1, r.code(), r::toString);
        assertTrue((r.out() + r.err()).contains("team b is no longer in the inventory, but its ClusterQueue holds 0 pending and 1 admitted"
            + " workload(s)"), r::toString);
        assertEquals("b", clusterQueue("b").path("metadata").path("name").asText(), "b's queue stays while it has a job");
        assertTrue(running("b", "b1"));
    }
}
