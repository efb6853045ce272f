package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.testbed.BedResult;
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
    static BootstrappedCluster.Lease cluster;
    static TestBed bed;
    static Path inventory;
    /** The same cluster with storage.nfs (exports on the master) for the jobs' dataset and checkpoint mounts. */
    static Path withNfs;
    static String w1;
    static String w2;

    @AfterAll static void down() {
        BootstrappedCluster.release(cluster);
    }

    /**
     * The shared 1+2 cluster (restored from its snapshot; this class bootstrapped a bed of its own before, ~55 s) with a
     * second GPU on w2: its nvidia-smi lists 2, the record of the GPUs at bootstrap says so as a bootstrap on 2 GPUs
     * writes it, and the cases start once the API server shows w2's allocatable nvidia.com/gpu 2 (what the scheduler
     * places by), waited for, bounded, and asserted.
     */
    @BeforeAll static void up() throws IOException, InterruptedException {
        cluster = BootstrappedCluster.acquire(2);
        bed = cluster.bed();
        inventory = cluster.inventory();
        w1 = bed.workers().get(0);
        w2 = bed.workers().get(1);
        bed.ok(w2, "echo 2 > /etc/gpuctl-testbed/gpus");
        String gpus = String.join(",", bed.ok(w2, "nvidia-smi --query-gpu=index,uuid --format=csv,noheader").strip().lines()
            .map(l -> l.replace(", ", ":")).toList());
        assertTrue(gpus.matches("0:GPU-[0-9a-f-]{36},1:GPU-[0-9a-f-]{36}"), gpus);
        bed.ok(bed.master(), KUBECTL + "annotate node " + w2 + " --overwrite gpuctl.dev/gpus-at-bootstrap=" + gpus);
        String allocatable = "";
        for (long deadline = System.nanoTime() + 90_000_000_000L; ; Thread.sleep(1000)) {
            allocatable = bed.ok(bed.master(), KUBECTL + "get node " + w2 + " -o jsonpath='{.status.allocatable.nvidia\\.com/gpu}'").strip();
            if (allocatable.equals("2")) break;
            assertTrue(System.nanoTime() < deadline, "w2's allocatable nvidia.com/gpu after its second GPU: " + allocatable);
        }
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
        BedResult job = bed.ssh(bed.master(), KUBECTL + "get job too-big -n default");
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

    @Test @Order(4) void listDeleteAndTheLogsOfAFinishedJobWithEveryPodSetting() throws IOException, InterruptedException {
        Gpuctl.Run list = Gpuctl.run("job", "list", inventory.toString());
        assertEquals(0, list.code(), list::toString);
        System.out.println("$ gpuctl job list inventory.yaml\n" + list.out());
        assertTrue(list.out().startsWith("NAMESPACE  NAME"), list::toString);
        assertTrue(list.out().lines().anyMatch(l -> l.matches("default\\s+train-a\\s+Running\\s+2\\s+" + w2 + "\\s+\\S+")), list::toString);
        assertTrue(list.out().lines().anyMatch(l -> l.matches("default\\s+train-b\\s+Running\\s+1\\s+" + w1 + "\\s+\\S+")), list::toString);
        assertTrue(list.out().lines().anyMatch(l -> l.matches("default\\s+train-c\\s+Pending\\s+1\\s+-\\s+\\S+")), list::toString);

        // delete frees h1: the Job and its pods are gone from the cluster
        String podB = boundPod("train-b").path("metadata").path("name").asText();
        for (String job : List.of("train-c", "train-b")) {
            Gpuctl.Run del = Gpuctl.run("job", "delete", job, inventory.toString());
            assertEquals(0, del.code(), del::toString);
            assertTrue(del.out().startsWith("job.batch \"" + job + "\" deleted"), del::toString); // kubectl's own line
            BedResult gone = bed.ssh(bed.master(), KUBECTL + "get job " + job + " -n default");
            assertEquals(1, gone.exit(), gone::toString);
            assertTrue(gone.err().contains("NotFound"), gone::toString);
            assertEquals(0, kubectl("get pods -n default -l job-name=" + job + " -o json").path("items").size(), job);
        }
        assertEquals(1, bed.ssh(bed.master(), KUBECTL + "get pod " + podB + " -n default").exit(), "the pod went with its Job");
        Gpuctl.Run again = Gpuctl.run("job", "delete", "train-b", inventory.toString());
        assertEquals(2, again.code(), again::toString);
        assertTrue(again.err().contains("no job default/train-b in the cluster"), again::toString);

        // a short job with every pod setting runs to completion on h1; its logs stay readable after it finished
        Path spec = inventory.resolveSibling("short.yaml");
        Files.writeString(spec, """
            name: short
            image: registry.internal/trainer:cu118
            command: [python, eval.py]
            args: [--split, val]
            workingDir: /workspace
            gpus: 1
            env:
              WANDB_API_KEY: { secret: wandb, key: api-key }
            nodeSelector: { kubernetes.io/hostname: %s }
            tolerations: [ { key: dedicated, operator: Equal, value: training, effect: NoSchedule } ]
            imagePullSecrets: [regcred]
            resources: { requests: { cpu: 500m, memory: 1Gi }, limits: { cpu: 2, memory: 4Gi } }
            shm: 2Gi
            ttlSecondsAfterFinished: 3600
            activeDeadlineSeconds: 600
            """.formatted(w1));
        Gpuctl.Run submit = Gpuctl.run("job", "submit", spec.toString(), inventory.toString());
        assertEquals(0, submit.code(), submit::toString);
        JsonNode job = kubectl("get job short -n default -o json");
        assertEquals(3600, job.path("spec").path("ttlSecondsAfterFinished").asInt(), job::toString);
        assertEquals(600, job.path("spec").path("activeDeadlineSeconds").asInt(), job::toString);
        JsonNode pod = job.path("spec").path("template").path("spec");
        assertEquals(w1, pod.path("nodeSelector").path("kubernetes.io/hostname").asText(), pod::toString);
        assertEquals("regcred", pod.path("imagePullSecrets").get(0).path("name").asText(), pod::toString);
        assertEquals("dedicated", pod.path("tolerations").get(0).path("key").asText(), pod::toString);
        JsonNode c = pod.path("containers").get(0);
        assertEquals("[\"--split\",\"val\"]", c.path("args").toString());
        assertEquals("/workspace", c.path("workingDir").asText());
        JsonNode ref = c.path("env").get(0).path("valueFrom").path("secretKeyRef");
        assertEquals(List.of("wandb", "api-key"), List.of(ref.path("name").asText(), ref.path("key").asText()), c::toString);
        assertEquals("500m", c.path("resources").path("requests").path("cpu").asText(), c::toString);
        assertEquals("4Gi", c.path("resources").path("limits").path("memory").asText(), c::toString);
        assertEquals("/dev/shm", c.path("volumeMounts").get(0).path("mountPath").asText(), c::toString);
        JsonNode shm = pod.path("volumes").get(0).path("emptyDir");
        assertEquals(List.of("Memory", "2Gi"), List.of(shm.path("medium").asText(), shm.path("sizeLimit").asText()), pod::toString);
        assertEquals(w1, boundPod("short").path("spec").path("nodeName").asText());

        Gpuctl.Run done = null;
        for (long deadline = System.nanoTime() + 90_000_000_000L; System.nanoTime() < deadline; Thread.sleep(1000)) {
            done = Gpuctl.run("job", "list", "-n", "default", inventory.toString());
            assertEquals(0, done.code(), done::toString);
            if (done.out().lines().anyMatch(l -> l.matches("default\\s+short\\s+Complete\\s+1\\s+" + w1 + "\\s+\\S+"))) break;
        }
        Gpuctl.Run finished = done;
        System.out.println("$ gpuctl job list -n default inventory.yaml\n" + finished.out());
        assertTrue(finished.out().contains(" short ") && finished.out().contains("Complete"), finished::toString);
        Gpuctl.Run logs = Gpuctl.run("job", "logs", "short", inventory.toString());
        assertEquals(0, logs.code(), logs::toString);
        System.out.println("$ gpuctl job logs short inventory.yaml\n" + logs.out());
        assertEquals(bed.ok(bed.master(), KUBECTL + "-n default logs job/short"), logs.out(), "the pod's log, as kubectl prints it");
        assertTrue(logs.out().contains("ran to completion"), logs::toString);
        Gpuctl.Run missing = Gpuctl.run("job", "logs", "nope", "-n", "default", inventory.toString());
        assertEquals(2, missing.code(), missing::toString);
        assertTrue(missing.err().contains("no job default/nope in the cluster"), missing::toString);
        Gpuctl.Run badName = Gpuctl.run("job", "logs", "Bad;rm", inventory.toString());
        assertEquals(2, badName.code(), badName::toString);
    }

    /** The inventory with h2 (2 GPUs) shared by time-slicing, 4 replicas each. */
    static Path sharedInventory() throws IOException {
        Path shared = inventory.resolveSibling("inventory-shared.yaml");
        String text = Files.readString(inventory);
        String withSharing = text.lines().map(l -> l.contains("{ name: " + w2 + ",")
                ? l.replace(" }", ", gpuSharing: { mode: time-slicing, replicas: 4 } }") : l)
            .collect(java.util.stream.Collectors.joining("\n", "", "\n"));
        assertTrue(withSharing.contains("replicas: 4"), withSharing);
        Files.writeString(shared, withSharing);
        return shared;
    }

    static String label(JsonNode nodes, String node, String key) {
        for (JsonNode n : nodes.path("items")) {
            if (n.path("metadata").path("name").asText().equals(node)) return n.path("metadata").path("labels").path(key).asText(null);
        }
        throw new AssertionError("no node " + node);
    }

    static String allocatable(JsonNode nodes, String node) {
        for (JsonNode n : nodes.path("items")) {
            if (n.path("metadata").path("name").asText().equals(node)) return n.path("status").path("allocatable").path("nvidia.com/gpu").asText();
        }
        throw new AssertionError("no node " + node);
    }

    @Test @Order(5) void timeSlicingAdvertisesEachGpuReplicasTimesAndAJobUsesTheShares() throws IOException, InterruptedException {
        Path shared = sharedInventory();
        Gpuctl.Run plan = Gpuctl.run("plan", "--details", shared.toString());
        assertEquals(0, plan.code(), plan::toString);
        assertTrue(plan.out().contains("GPU sharing: config manager and ConfigMap nvidia-device-plugin-configs (time-slicing-4)"), plan::toString);
        Gpuctl.Run r = Gpuctl.run("bootstrap", shared.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.count("changed") > 0, r::toString);

        // asked of the cluster: h2's 2 GPUs advertised 4 times each, h1 unshared, each node's config picked by its label
        JsonNode nodes = kubectl("get nodes -o json");
        assertEquals("8", allocatable(nodes, w2), nodes::toString);
        assertEquals("1", allocatable(nodes, w1), nodes::toString);
        assertEquals("time-slicing-4", label(nodes, w2, "nvidia.com/device-plugin.config"));
        assertEquals("none", label(nodes, w1, "nvidia.com/device-plugin.config"));
        JsonNode cm = kubectl("-n kube-system get configmap nvidia-device-plugin-configs -o json");
        assertTrue(cm.path("data").path("time-slicing-4").asText().contains("timeSlicing:"), cm::toString);
        assertTrue(cm.path("data").path("time-slicing-4").asText().contains("replicas: 4"), cm::toString);
        assertTrue(cm.path("data").has("none"), cm::toString);
        JsonNode ds = kubectl("-n kube-system get daemonset nvidia-device-plugin-daemonset -o json");
        JsonNode podSpec = ds.path("spec").path("template").path("spec");
        assertEquals("nvidia-device-plugin-init", podSpec.path("initContainers").get(0).path("name").asText(), podSpec::toString);
        assertEquals("nvidia-device-plugin", podSpec.path("serviceAccountName").asText(), podSpec::toString);
        JsonNode plugin = null;
        for (JsonNode p : kubectl("-n kube-system get pods -l name=nvidia-device-plugin-ds -o json").path("items")) {
            if (p.path("spec").path("nodeName").asText().equals(w2)) plugin = p;
        }
        assertTrue(plugin != null && plugin.path("spec").path("containers").toString().contains("nvidia-device-plugin-sidecar"),
            () -> "the plugin pod on " + w2 + " runs with the config manager");
        String log = bed.ok(bed.master(), KUBECTL + "-n kube-system logs " + plugin.path("metadata").path("name").asText()
            + " -c nvidia-device-plugin-ctr");
        assertTrue(log.contains("\"replicas\": 4"), log);

        // a job asking 3 shared GPUs: more than any node has unshared, it fits h2's 8 replicas
        Path spec = inventory.resolveSibling("shares.yaml");
        Files.writeString(spec, """
            name: shares
            image: registry.internal/trainer:cu118
            command: [sleep, "600"]
            gpus: 3
            """);
        Gpuctl.Run submit = Gpuctl.run("job", "submit", spec.toString(), shared.toString());
        assertEquals(0, submit.code(), submit::toString);
        assertEquals(w2, boundPod("shares").path("spec").path("nodeName").asText(), "the 3-share job runs on the shared node");

        Gpuctl.Run again = Gpuctl.run("bootstrap", shared.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
        Gpuctl.Run verify = Gpuctl.run("verify", "--json", shared.toString());
        assertEquals(0, verify.code(), verify::toString);
        boolean checked = false;
        for (JsonNode h : JSON.readTree(verify.out()).path("hosts")) {
            for (JsonNode c : h.path("checks")) {
                checked |= c.path("check").asText().equals("node " + w2 + " allocatable nvidia.com/gpu = its nvidia-smi count × 4 (time-slicing)")
                    && c.path("ok").asBoolean();
            }
        }
        assertTrue(checked, verify::toString);
    }

    @Test @Order(6) void droppingSharingPutsThePluginBackAsUpstreamShipsIt() throws IOException {
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        JsonNode nodes = kubectl("get nodes -o json");
        assertEquals("2", allocatable(nodes, w2), nodes::toString);
        assertNull(label(nodes, w2, "nvidia.com/device-plugin.config"), nodes::toString);
        assertNull(label(nodes, w1, "nvidia.com/device-plugin.config"), nodes::toString);
        JsonNode ds = kubectl("-n kube-system get daemonset nvidia-device-plugin-daemonset -o json");
        JsonNode podSpec = ds.path("spec").path("template").path("spec");
        assertTrue(podSpec.path("initContainers").isMissingNode() || podSpec.path("initContainers").isEmpty(), podSpec::toString);
        assertEquals(1, podSpec.path("containers").size(), podSpec::toString);
        Gpuctl.Run again = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, again.count("changed"), again::toString);
    }

    /** The sampled GPU of {@code gpus --json --sample}'s document that a pod of this job holds, or null. */
    static JsonNode sampledGpuOf(JsonNode doc, String podName) {
        for (JsonNode g : doc.path("sample").path("gpus")) {
            for (JsonNode p : g.path("pods")) if (p.path("name").asText().equals(podName)) return g;
        }
        return null;
    }

    /**
     * Two 1-GPU jobs, one driving its GPU (the emulated workload's GPUCTL_TESTBED_GPU_UTIL, see
     * testbed/emulators/README.md) and one holding it idle: the kubelet's device checkpoint on each node names the pod
     * by UID beside its GPU's UUID, and {@code gpus --sample} flags the idle one's GPU only, in the table and in --json;
     * when the idle job is deleted, its checkpoint entry goes and nothing is flagged. Runs alone too: it first deletes
     * the Jobs earlier tests left.
     */
    @Test @Order(7) void gpusSampleFlagsTheGpuAPodHoldsIdleAndNotTheBusyOne() throws IOException, InterruptedException {
        for (JsonNode j : kubectl("get jobs -n default -o json").path("items")) {
            bed.ok(bed.master(), KUBECTL + "-n default delete job " + j.path("metadata").path("name").asText());
        }
        Path busy = inventory.resolveSibling("busy.yaml"), idle = inventory.resolveSibling("idle.yaml");
        Files.writeString(busy, "name: busy\nimage: registry.internal/trainer:cu118\ncommand: [sleep, \"600\"]\ngpus: 1\n"
            + "env: { GPUCTL_TESTBED_GPU_UTIL: \"97\" }\n");
        Files.writeString(idle, "name: idle\nimage: registry.internal/notebook:cu118\ncommand: [sleep, \"600\"]\ngpus: 1\n");
        for (Path spec : List.of(busy, idle)) {
            Gpuctl.Run r = Gpuctl.run("job", "submit", spec.toString(), inventory.toString());
            assertEquals(0, r.code(), r::toString);
        }
        JsonNode busyPod = boundPod("busy"), idlePod = boundPod("idle");
        String busyName = busyPod.path("metadata").path("name").asText(), idleName = idlePod.path("metadata").path("name").asText();
        String idleNode = idlePod.path("spec").path("nodeName").asText();

        // each GPU beside its pod, once the kubelets have written their checkpoints (a heartbeat, 5 s, after Running)
        JsonNode doc = null, busyGpu = null, idleGpu = null;
        Gpuctl.Run json = null;
        for (long deadline = System.nanoTime() + 90_000_000_000L; System.nanoTime() < deadline; Thread.sleep(2000)) {
            json = Gpuctl.run("gpus", "--json", "--sample", "3s", inventory.toString());
            assertEquals(0, json.code(), json::toString);
            doc = JSON.readTree(json.out());
            busyGpu = sampledGpuOf(doc, busyName);
            idleGpu = sampledGpuOf(doc, idleName);
            if (busyGpu != null && idleGpu != null) break;
        }
        System.out.println("$ gpuctl gpus --json --sample 3s inventory.yaml\n" + json.out());
        assertTrue(busyGpu != null && idleGpu != null, doc::toString);
        assertEquals(3.0, doc.path("sample").path("windowSeconds").asDouble(), doc::toString);
        assertEquals(0, doc.path("sample").path("errors").size(), doc::toString);
        assertTrue(idleGpu.path("idle").asBoolean(), idleGpu::toString);
        assertEquals(0, idleGpu.path("utilizationMaxPercent").asInt(-1), idleGpu::toString);
        assertTrue(idleGpu.path("memoryUsedMiB").asLong() > 0, "held: memory allocated " + idleGpu);
        assertTrue(idleGpu.path("samples").asInt() >= 1, "sampled over the window: " + idleGpu);
        assertFalse(busyGpu.path("idle").asBoolean(), busyGpu::toString);
        assertTrue(busyGpu.path("utilizationMaxPercent").asInt() > 90, busyGpu::toString);
        int flagged = 0;
        for (JsonNode g : doc.path("sample").path("gpus")) flagged += g.path("idle").asBoolean() ? 1 : 0;
        assertEquals(1, flagged, "only the idle job's GPU: " + doc.path("sample"));
        assertNotEquals(busyGpu.path("uuid").asText(), idleGpu.path("uuid").asText());

        // the real state on the node: the kubelet's checkpoint gives the idle pod (by UID) that GPU (by UUID)
        String checkpoint = bed.ok(idleNode, "cat /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint");
        JsonNode entries = JSON.readTree(checkpoint).path("Data").path("PodDeviceEntries");
        boolean found = false;
        for (JsonNode e : entries) {
            found |= e.path("PodUID").asText().equals(idlePod.path("metadata").path("uid").asText())
                && e.path("DeviceIDs").toString().contains(idleGpu.path("uuid").asText());
        }
        assertTrue(found, checkpoint);
        assertTrue(bed.ok(idleNode, "nvidia-smi --query-gpu=uuid --format=csv,noheader").contains(idleGpu.path("uuid").asText()));

        Gpuctl.Run table = Gpuctl.run("gpus", "--sample", "3s", inventory.toString());
        assertEquals(0, table.code(), table::toString);
        System.out.println("$ gpuctl gpus --sample 3s inventory.yaml\n" + table.out());
        assertTrue(table.out().lines().anyMatch(l -> l.startsWith(idleNode + " ") && l.contains("default/" + idleName) && l.endsWith("IDLE")), table::toString);
        assertTrue(table.out().lines().anyMatch(l -> l.contains("default/" + busyName) && !l.contains("IDLE")), table::toString);
        assertTrue(table.out().contains("1 GPU is held but idle: " + idleNode + " GPU " + idleGpu.path("index").asInt() + " (default/" + idleName + ")"),
            table::toString);

        // the idle job deleted: the kubelet drops its entry, and nothing is flagged any more
        bed.ok(bed.master(), KUBECTL + "-n default delete job idle");
        String uid = idlePod.path("metadata").path("uid").asText();
        for (long deadline = System.nanoTime() + 60_000_000_000L; bed.ok(idleNode, "cat /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint").contains(uid);
             Thread.sleep(1000)) {
            assertTrue(System.nanoTime() < deadline, "the deleted pod's entry stays in the checkpoint on " + idleNode);
        }
        JsonNode after = JSON.readTree(Gpuctl.run("gpus", "--json", "--sample", "2s", inventory.toString()).out());
        for (JsonNode g : after.path("sample").path("gpus")) assertFalse(g.path("idle").asBoolean(), after::toString);
        assertTrue(sampledGpuOf(after, busyName) != null, after::toString);
        bed.ok(bed.master(), KUBECTL + "-n default delete job busy");
    }
}
