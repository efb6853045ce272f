package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.testbed.ExecResult;
import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * gpuctl gpus and gpuctl job submit on a bootstrapped bed whose workers have different GPU counts (h1: 1, h2: 2):
 * what gpuctl reports is compared with what the master's kubectl and each node's nvidia-smi say, and a submitted
 * Job's pod is found on the node the scheduler picked, holding its GPUs.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GpusJobE2E {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String KUBECTL = "kubectl --kubeconfig=/etc/kubernetes/admin.conf ";
    static TestBed bed;
    static Path inventory;
    /** The same cluster with storage.nfs (exports on the master) for the jobs' dataset and checkpoint mounts. */
    static Path withNfs;
    static String w1;
    static String w2;

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() throws IOException {
        bed = TestBed.own("gj", 2);
        w1 = bed.workers().get(0);
        w2 = bed.workers().get(1);
        bed.ok(w2, "echo 2 > /etc/gpuctl-testbed/gpus"); // before bootstrap: h2's nvidia-smi lists 2 GPUs
        inventory = bed.inventory("docker", "flannel");
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        withNfs = inventory.resolveSibling("inventory-nfs.yaml");
        Files.writeString(withNfs, Files.readString(inventory) + """
            storage:
              nfs:
                server: %s
                exports:
                  - { path: /export/dataset, readOnly: true }
                  - { path: /export/ckpt }
            """.formatted(bed.master()));
    }

    static JsonNode kubectl(String args) throws IOException {
        return JSON.readTree(bed.ok(bed.master(), KUBECTL + args));
    }

    static JsonNode node(JsonNode gpusDoc, String name) {
        for (JsonNode n : gpusDoc.path("nodes")) if (n.path("name").asText().equals(name)) return n;
        throw new AssertionError("no node " + name + " in " + gpusDoc);
    }

    static JsonNode gpusJson() throws IOException {
        Gpuctl.Run r = Gpuctl.run("gpus", "--json", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        return JSON.readTree(r.out());
    }

    static Path spec(String name, int gpus) throws IOException {
        Path f = inventory.resolveSibling(name + ".yaml");
        Files.writeString(f, """
            name: %s
            image: registry.internal/trainer:cu118
            command: [sleep, "600"]
            gpus: %d
            env: { EXPERIMENT: %s }
            dataset: dataset
            checkpoint: { export: /export/ckpt, mountPath: /ckpt }
            """.formatted(name, gpus, name));
        return f;
    }

    /** The one pod of a Job, once the scheduler bound it to a node (kubectl on the master). */
    static JsonNode boundPod(String job) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
            JsonNode pods = kubectl("get pods -n default -l job-name=" + job + " -o json").path("items");
            if (pods.size() == 1 && !pods.get(0).path("spec").path("nodeName").asText().isEmpty()) return pods.get(0);
            assertTrue(System.nanoTime() < deadline, () -> "no bound pod for job " + job + ": " + pods);
            Thread.sleep(1000);
        }
    }

    @Test @Order(1) void gpusShowsEveryGpuNodeWithItsCountAndFreeGpus() throws IOException {
        Gpuctl.Run table = Gpuctl.run("gpus", inventory.toString());
        assertEquals(0, table.code(), table::toString);
        System.out.println("$ gpuctl gpus inventory.yaml\n" + table.out());
        JsonNode doc = gpusJson();
        assertEquals("gpuctl.gpus/v1", doc.path("schema").asText());
        JsonNode nodes = kubectl("get nodes -o json");
        int total = 0;
        for (String w : bed.workers()) {
            int smi = bed.ok(w, "nvidia-smi -L").strip().split("\n").length;
            String allocatable = "";
            for (JsonNode n : nodes.path("items")) {
                if (n.path("metadata").path("name").asText().equals(w)) {
                    allocatable = n.path("status").path("allocatable").path("nvidia.com/gpu").asText();
                }
            }
            JsonNode mine = node(doc, w);
            assertEquals(smi, mine.path("gpus").asInt(), mine::toString);
            assertEquals(allocatable, String.valueOf(mine.path("allocatable").asInt()), mine::toString);
            assertEquals(smi, mine.path("free").asInt(), mine::toString);
            assertEquals(0, mine.path("allocated").asInt(), mine::toString);
            assertTrue(mine.path("model").asText().startsWith("NVIDIA"), mine::toString);
            assertTrue(table.out().lines().anyMatch(l -> l.startsWith(w + " ") && l.contains(mine.path("model").asText())), table::toString);
            total += smi;
        }
        assertEquals(List.of(1, 2), List.of(node(doc, w1).path("gpus").asInt(), node(doc, w2).path("gpus").asInt()));
        assertEquals(total, doc.path("total").path("free").asInt(), doc::toString);
        assertTrue(table.out().lines().anyMatch(l -> l.matches("TOTAL\\s+3\\s+3\\s+0\\s+3")), table::toString);
        assertFalse(table.out().contains(bed.master() + " "), "the GPU-less master is no GPU node\n" + table.out());
    }

    @Test @Order(2) void aSubmittedJobHoldsItsGpusOnTheNodeTheSchedulerPicked() throws IOException, InterruptedException {
        Gpuctl.Run submit = Gpuctl.run("job", "submit", spec("train-a", 2).toString(), withNfs.toString());
        assertEquals(0, submit.code(), submit::toString);
        System.out.println("$ gpuctl job submit train-a.yaml inventory.yaml\n" + submit.out());
        assertTrue(submit.out().contains("job.batch/train-a created"), submit::toString);
        assertTrue(submit.out().contains("  gpuctl gpus " + withNfs + "\n"), submit::toString);
        assertTrue(submit.out().contains("admin.conf -n default logs -f job/train-a\n"), submit::toString);

        // the real state: the Job as the guide writes it, its pod on the only node with 2 GPUs
        JsonNode job = kubectl("get job train-a -n default -o json");
        assertEquals(0, job.path("spec").path("backoffLimit").asInt(-1), job::toString);
        JsonNode podSpec = job.path("spec").path("template").path("spec");
        assertEquals("Never", podSpec.path("restartPolicy").asText());
        JsonNode resources = podSpec.path("containers").get(0).path("resources");
        assertEquals("2", resources.path("limits").path("nvidia.com/gpu").asText(), resources::toString);
        assertTrue(resources.path("requests").isMissingNode(), "GPUs go in limits only: " + resources);
        JsonNode volumes = podSpec.path("volumes");
        assertEquals(bed.address(bed.master()), volumes.get(0).path("nfs").path("server").asText(), volumes::toString);
        assertEquals("/export/dataset", volumes.get(0).path("nfs").path("path").asText(), volumes::toString);
        assertTrue(volumes.get(0).path("nfs").path("readOnly").asBoolean(), volumes::toString);
        assertFalse(volumes.get(1).path("nfs").path("readOnly").asBoolean(false), volumes::toString);
        bed.ok(bed.master(), "test -f /etc/kubernetes/gpuctl/jobs/default.train-a.yaml");

        JsonNode pod = boundPod("train-a");
        String podName = pod.path("metadata").path("name").asText();
        assertEquals(w2, pod.path("spec").path("nodeName").asText(), pod::toString);
        assertEquals("Job", pod.path("metadata").path("ownerReferences").get(0).path("kind").asText(), pod::toString);
        JsonNode onW2 = node(gpusJson(), w2);
        assertEquals(2, onW2.path("allocated").asInt(), onW2::toString);
        assertEquals(0, onW2.path("free").asInt(), onW2::toString);
        assertEquals(podName, onW2.path("pods").get(0).path("name").asText(), onW2::toString);
        assertEquals("train-a", onW2.path("pods").get(0).path("job").asText(), onW2::toString);
        assertEquals(2, onW2.path("pods").get(0).path("gpus").asInt(), onW2::toString);
        // what submit says to run to follow it works on the master
        bed.ok(bed.master(), KUBECTL + "-n default logs job/train-a");

        // h2 is full now: a 1-GPU job can only go to h1, and gpus shows both
        Gpuctl.Run second = Gpuctl.run("job", "submit", spec("train-b", 1).toString(), withNfs.toString());
        assertEquals(0, second.code(), second::toString);
        assertEquals(w1, boundPod("train-b").path("spec").path("nodeName").asText());
        Gpuctl.Run table = Gpuctl.run("gpus", inventory.toString());
        assertEquals(0, table.code(), table::toString);
        System.out.println("$ gpuctl gpus inventory.yaml\n" + table.out());
        assertTrue(table.out().lines().anyMatch(l -> l.matches("TOTAL\\s+3\\s+3\\s+3\\s+0")), table::toString);
        assertTrue(table.out().contains("default/" + podName + " (job train-a, 2 GPUs"), table::toString);
        Gpuctl.Run json = Gpuctl.run("gpus", "--json", inventory.toString());
        System.out.println("$ gpuctl gpus --json inventory.yaml\n" + json.out());
        assertEquals(1, node(JSON.readTree(json.out()), w1).path("allocated").asInt(), json::toString);

        // every GPU is held: a third job is accepted (a node could run it) and waits, as the scheduler says
        Gpuctl.Run third = Gpuctl.run("job", "submit", spec("train-c", 1).toString(), withNfs.toString());
        assertEquals(0, third.code(), third::toString);
        JsonNode waiting = null;
        for (long deadline = System.nanoTime() + 60_000_000_000L; System.nanoTime() < deadline; Thread.sleep(1000)) {
            JsonNode pods = kubectl("get pods -n default -l job-name=train-c -o json").path("items");
            waiting = gpusJson().path("waiting");
            if (pods.size() == 1 && waiting.size() == 1) {
                assertEquals("", pods.get(0).path("spec").path("nodeName").asText(), pods::toString);
                assertEquals("Pending", pods.get(0).path("status").path("phase").asText(), pods::toString);
                assertEquals(pods.get(0).path("metadata").path("name").asText(), waiting.get(0).path("name").asText());
                break;
            }
        }
        JsonNode w = waiting;
        assertEquals(1, w.size(), () -> "train-c is not waiting: " + w);
        assertEquals("train-c", w.get(0).path("job").asText(), w::toString);
        assertTrue(w.get(0).path("reason").asText().contains("Insufficient nvidia.com/gpu"), w::toString);
        Gpuctl.Run full = Gpuctl.run("gpus", inventory.toString());
        assertEquals(0, full.code(), full::toString);
        System.out.println("$ gpuctl gpus inventory.yaml\n" + full.out());
        assertTrue(full.out().contains("waiting for GPUs:\n  default/" + w.get(0).path("name").asText() + " (job train-c, 1 GPU, Pending"),
            full::toString);

        // the same name again is refused: a Job's pods cannot be changed
        Gpuctl.Run again = Gpuctl.run("job", "submit", spec("train-a", 1).toString(), withNfs.toString());
        assertEquals(2, again.code(), again::toString);
        assertTrue(again.err().contains("job default/train-a already exists"), again::toString);
    }

    @Test @Order(3) void aJobLargerThanEveryNodeIsRefusedBeforeAnythingIsApplied() throws IOException {
        Path spec = spec("too-big", 3);
        Gpuctl.Run r = Gpuctl.run("job", "submit", spec.toString(), withNfs.toString());
        assertEquals(2, r.code(), r::toString);
        System.out.println("$ gpuctl job submit too-big.yaml inventory.yaml\n" + r.err());
        assertTrue(r.err().contains(spec + ":4:7: gpus: 3 is more than any node has: the largest, " + w2 + ", has 2 GPUs"), r::toString);
        assertEquals("", r.out(), r::toString);
        ExecResult job = bed.ssh(bed.master(), KUBECTL + "get job too-big -n default");
        assertEquals(1, job.exit(), job::toString);
        assertTrue(job.err().contains("NotFound"), job::toString);
        assertEquals(1, bed.ssh(bed.master(), "test -e /etc/kubernetes/gpuctl/jobs/default.too-big.yaml").exit());

        // render, offline, checks against what gpuctl gpus saw (recorded beside the inventory)
        Gpuctl.Run render = Gpuctl.run("job", "render", spec.toString(), withNfs.toString());
        assertEquals(2, render.code(), render::toString);
        assertTrue(render.err().contains("gpus: 3 is more than any node has"), render::toString);
        Gpuctl.Run fits = Gpuctl.run("job", "render", spec("fits", 2).toString(), withNfs.toString());
        assertEquals(0, fits.code(), fits::toString);
        assertTrue(fits.out().contains("nvidia.com/gpu: 2"), fits::toString);
    }
}
