package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A one-host lab: the master has GPUs (two, emulated: the bed's NVIDIA driver stand-in installed on h0 from the bed's
 * apt repository, as an admin would install the driver) and {@code controlPlaneSchedulable: true}. The inventory
 * names the master only, so a GPU job has nowhere else to go. The bed's worker h1 is not in the inventory.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ControlPlaneSchedulableE2E {
    static final String KUBECTL = "kubectl --kubeconfig=/etc/kubernetes/admin.conf ";
    static final String TAINT = "node-role.kubernetes.io/control-plane";
    static final int GPUS = 2;
    static final ObjectMapper JSON = new ObjectMapper();
    static TestBed bed;
    static Path inventory;
    static String master;

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() throws IOException {
        bed = TestBed.own("cps", 1);
        master = bed.master();
        bed.ok(master, "echo " + GPUS + " > /etc/gpuctl-testbed/gpus && DEBIAN_FRONTEND=noninteractive apt-get -qq update"
            + " && DEBIAN_FRONTEND=noninteractive apt-get -qq install -y nvidia-driver-emu >/dev/null");
        assertEquals(GPUS, bed.ok(master, "nvidia-smi -L").strip().lines().count(), "the master's driver lists its GPUs");
        Path full = bed.inventory("docker", "flannel");
        inventory = full.resolveSibling("inventory-master-only.yaml");
        Files.writeString(inventory, Files.readString(full).lines()
            .filter(l -> !l.contains("role: worker"))
            .map(l -> l.contains("role: master") ? l.replace("role: master }", "role: master, gpu: true }") : l)
            .map(l -> l.startsWith("  kubernetesVersion:") ? l + "\n  controlPlaneSchedulable: true" : l)
            .collect(Collectors.joining("\n", "", "\n")));
    }

    static JsonNode kubectl(String args) throws IOException {
        return JSON.readTree(bed.ok(master, KUBECTL + args));
    }

    static JsonNode masterNode() throws IOException {
        return kubectl("get node " + master + " -o json");
    }

    static List<String> taintKeys(JsonNode node) {
        List<String> keys = new ArrayList<>();
        for (JsonNode t : node.path("spec").path("taints")) keys.add(t.path("key").asText());
        return keys;
    }

    /** The master's state that a re-run must leave alone: taints, allocatable GPUs, the device plugin pod's uid. */
    static String state() throws IOException {
        JsonNode n = masterNode();
        return taintKeys(n) + " gpu=" + n.path("status").path("allocatable").path("nvidia.com/gpu").asText()
            + " plugin=" + pluginPods().stream().map(p -> p.path("metadata").path("uid").asText()).toList();
    }

    static List<JsonNode> pluginPods() throws IOException {
        List<JsonNode> pods = new ArrayList<>();
        for (JsonNode p : kubectl("get pods -A -o json").path("items")) {
            if (p.path("metadata").path("name").asText().startsWith("nvidia-device-plugin")) pods.add(p);
        }
        return pods;
    }

    @Test @Order(1) void theInventoryAsksForIt() throws IOException {
        assertTrue(Files.readString(inventory).contains("controlPlaneSchedulable: true"), inventory::toString);
        Gpuctl.Run plan = Gpuctl.run("plan", inventory.toString());
        assertEquals(0, plan.code(), plan::toString);
        assertTrue(plan.out().contains("schedulable"), plan.out());
    }

    @Test @Order(2) void bootstrapUntaintsTheMasterAndTheDevicePluginCoversItsGpus() throws Exception {
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        JsonNode node = masterNode();
        assertFalse(taintKeys(node).contains(TAINT), node.path("spec")::toString);
        List<JsonNode> plugins = pluginPods();
        assertEquals(1, plugins.size(), plugins::toString);
        assertEquals(master, plugins.get(0).path("spec").path("nodeName").asText(), plugins::toString);
        assertEquals("Running", plugins.get(0).path("status").path("phase").asText(), plugins::toString);
        assertEquals(String.valueOf(GPUS), node.path("status").path("allocatable").path("nvidia.com/gpu").asText(),
            node.path("status")::toString);
    }

    @Test @Order(3) void aGpuJobLandsOnTheMaster() throws Exception {
        Path spec = inventory.resolveSibling("on-master.yaml");
        Files.writeString(spec, """
            name: on-master
            image: registry.internal/trainer:cu118
            command: [sleep, "600"]
            gpus: %d
            """.formatted(GPUS));
        Gpuctl.Run submit = Gpuctl.run("job", "submit", spec.toString(), inventory.toString());
        assertEquals(0, submit.code(), submit::toString);
        JsonNode pod = null;
        for (long deadline = System.nanoTime() + 90_000_000_000L; System.nanoTime() < deadline; Thread.sleep(1000)) {
            JsonNode pods = kubectl("get pods -n default -l job-name=on-master -o json").path("items");
            if (pods.size() == 1 && !pods.get(0).path("spec").path("nodeName").asText().isEmpty()) {
                pod = pods.get(0);
                break;
            }
        }
        assertTrue(pod != null, "the job's pod was never bound to a node");
        assertEquals(master, pod.path("spec").path("nodeName").asText(), pod::toString);
        Gpuctl.Run del = Gpuctl.run("job", "delete", "on-master", inventory.toString());
        assertEquals(0, del.code(), del::toString);
    }

    @Test @Order(4) void aReRunChangesNothingAndVerifyIsClean() throws IOException {
        String before = state();
        Gpuctl.Run again = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertFalse(again.err().lines().anyMatch(l -> l.contains("schedulable") && l.contains("changed")), again::toString);
        assertEquals(before, state(), "a re-run left the master as it was");
        Gpuctl.Run verify = Gpuctl.run("verify", inventory.toString());
        assertEquals(0, verify.code(), verify::toString);
        assertTrue(verify.out().contains("no " + TAINT + " taint on " + master), verify.out());
    }
}
