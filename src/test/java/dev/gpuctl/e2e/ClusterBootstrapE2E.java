package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The whole bootstrap on the test bed's real hosts (emulated kubeadm, kubelet, docker, NVIDIA): a cluster whose
 * workers offer nvidia.com/gpu, a re-run that changes nothing, a worker added later that joins alone, and
 * join-token. The bed has 3 workers; the inventory starts with the first two.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterBootstrapE2E {
    static TestBed bed;
    static Path full;
    static Path firstTwo;
    static final ObjectMapper JSON = new ObjectMapper();

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() throws IOException {
        bed = TestBed.own("cluster", 3);
        full = bed.inventory("docker", "flannel");
        String late = bed.workers().get(2);
        firstTwo = full.resolveSibling("inventory-first-two.yaml");
        Files.writeString(firstTwo, Files.readString(full).lines()
            .filter(l -> !l.contains("name: " + late + ","))
            .collect(Collectors.joining("\n", "", "\n")));
        Files.copy(full, full.resolveSibling("inventory.yaml"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    static JsonNode kubectl(String args) throws IOException {
        return JSON.readTree(bed.ok(bed.master(), "kubectl --kubeconfig=/etc/kubernetes/admin.conf " + args));
    }

    static String logs(Path inventory) throws IOException {
        Path logs = inventory.resolveSibling(".gpuctl/logs");
        try (Stream<Path> files = Files.walk(logs)) {
            StringBuilder sb = new StringBuilder();
            for (Path f : files.filter(Files::isRegularFile).toList()) sb.append(Files.readString(f));
            return sb.toString();
        }
    }

    static final String SAMPLER = "setsid nohup sh -c 'echo $$ > /run/ps-sampler.pid; while :; do ps -eo args >> /run/ps-samples; sleep 0.05; done' >/dev/null 2>&1 < /dev/null &";

    @Test @Order(1) void bootstrapMakesAClusterWithGpus() throws IOException {
        // every process's argv on the hosts, sampled while bootstrap runs: the join token must never be there
        for (String h : bed.hosts()) bed.ok(h, SAMPLER);
        Gpuctl.Run r = Gpuctl.run("bootstrap", firstTwo.toString());
        for (String h : bed.hosts()) bed.ok(h, "kill $(cat /run/ps-sampler.pid)");
        assertEquals(0, r.code(), r::toString);

        JsonNode nodes = kubectl("get nodes -o json");
        assertEquals(3, nodes.path("items").size(), nodes::toPrettyString);
        for (JsonNode n : nodes.path("items")) {
            String name = n.path("metadata").path("name").asText();
            boolean ready = false;
            for (JsonNode c : n.path("status").path("conditions")) {
                if (c.path("type").asText().equals("Ready")) ready = c.path("status").asText().equals("True");
            }
            assertTrue(ready, name + " Ready");
            if (!name.equals(bed.master())) {
                assertEquals("1", n.path("status").path("allocatable").path("nvidia.com/gpu").asText(), name + " GPUs");
                assertEquals("true", n.path("metadata").path("labels").path("nvidia.com/gpu.present").asText(), name + " label");
            }
        }
        for (JsonNode p : kubectl("get pods -n kube-flannel -o json").path("items")) {
            assertEquals("Running", p.path("status").path("phase").asText(), p.path("metadata").path("name").asText());
        }
        // flannel got the inventory's pod CIDR
        assertTrue(kubectl("get configmap -n kube-flannel kube-flannel-cfg -o json").path("data").path("net-conf.json").asText().contains("10.244.0.0/16"));

        // kubeconfig on the laptop: 0600, pointing at the master
        Path kubeconfig = firstTwo.resolveSibling(".gpuctl/gpu-bed/admin.conf");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(kubeconfig)));
        assertTrue(Files.readString(kubeconfig).contains("server: https://" + bed.address(bed.master()) + ":6443"));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(firstTwo.resolveSibling(".gpuctl"))));
        bed.ok(bed.master(), "cmp /etc/kubernetes/admin.conf /root/.kube/config");
        // every cluster gets a controlPlaneEndpoint (the master's address here), so that masters can be added later
        assertTrue(kubectl("get configmap -n kube-system kubeadm-config -o json").path("data").path("ClusterConfiguration").asText()
            .contains("controlPlaneEndpoint: " + bed.address(bed.master()) + ":6443"));

        // the join token is in no log and no file was left behind on the workers
        String allLogs = logs(firstTwo);
        String tokens = bed.ok(bed.master(), "kubeadm token list -o json");
        for (JsonNode t : JSON.readerFor(JsonNode.class).<JsonNode>readValues(tokens).readAll()) {
            String secret = t.path("token").asText();
            assertFalse(allLogs.contains(secret), "a token leaked into the logs");
            assertFalse(r.err().contains(secret) || r.out().contains(secret), "a token leaked into the output");
            for (String h : bed.hosts()) {
                assertEquals("0\n", bed.ok(h, "grep -c -F -- '" + secret + "' /run/ps-samples || true"), "the token was in a process's argv on " + h);
            }
        }
        assertNotEquals("0", bed.ok(bed.workers().get(0), "grep -c 'kubeadm join --config' /run/ps-samples || true").strip(), "the sampler saw the join run");
        for (String w : List.of(bed.workers().get(0), bed.workers().get(1))) {
            assertNotEquals(0, bed.ssh(w, "test -e /etc/kubernetes/gpuctl/kubeadm-join.yaml").exit(), w + " kept the join file");
        }
    }

    @Test @Order(2) void reRunChangesNothing() {
        Gpuctl.Run r = Gpuctl.run("bootstrap", firstTwo.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(0, r.count("changed"), r::toString);
    }

    @Test @Order(3) void aWorkerAddedLaterJoinsAloneAndNothingElseIsTouched() throws IOException {
        String late = bed.workers().get(2);
        String record = "gpuctl.dev/gpus-at-bootstrap";
        Map<String, String> recorded = new LinkedHashMap<>();
        for (String w : bed.workers().subList(0, 2)) {
            recorded.put(w, kubectl("get node " + w + " -o json").path("metadata").path("annotations").path(record).asText());
        }
        Gpuctl.Run r = Gpuctl.run("bootstrap", full.toString());
        assertEquals(0, r.code(), r::toString);
        List<String> changed = r.err().lines().filter(l -> l.matches("\\S+\\s+\\S+\\s+changed \\(.*")).toList();
        assertFalse(changed.isEmpty(), r::toString);
        for (String line : changed) {
            String host = line.split("\\s+")[0];
            String step = line.split("\\s+")[1];
            assertTrue(host.equals(late) || step.equals("gpu") || step.equals("gpu-record"),
                "only the new worker (and its labels and GPU record) change: " + line + "\n" + r);
        }
        // the master's gpu-record change is the new worker's record; the others' records are not touched
        for (Map.Entry<String, String> e : recorded.entrySet()) {
            assertFalse(e.getValue().isEmpty(), e.getKey() + " has its GPU record");
            assertEquals(e.getValue(), kubectl("get node " + e.getKey() + " -o json").path("metadata").path("annotations").path(record).asText(), e.getKey());
        }
        assertTrue(kubectl("get node " + late + " -o json").path("metadata").path("annotations").path(record).asText().startsWith("0:GPU-"), r::toString);
        JsonNode node = kubectl("get node " + late + " -o json");
        assertEquals("1", node.path("status").path("allocatable").path("nvidia.com/gpu").asText(), r::toString);
    }

    @Test @Order(4) void joinTokenRefreshPrintsAValidCommandAndTheCacheIsChecked() {
        Gpuctl.Run fresh = Gpuctl.run("join-token", "--refresh", "--ttl", "2h", full.toString());
        assertEquals(0, fresh.code(), fresh::toString);
        String command = fresh.out().strip();
        assertTrue(command.matches("kubeadm join \\S+:6443 --token [a-z0-9]{6}\\.[a-z0-9]{16} --discovery-token-ca-cert-hash sha256:[0-9a-f]{64} --cri-socket unix:///var/run/cri-dockerd.sock"), command);
        assertFalse(fresh.err().contains(command.split(" ")[4]), "the token goes to stdout only");

        Gpuctl.Run cached = Gpuctl.run("join-token", full.toString());
        assertEquals(0, cached.code(), cached::toString);
        assertEquals(command, cached.out().strip());

        String tokenId = command.split(" ")[4].split("\\.")[0];
        bed.ok(bed.master(), "kubeadm token delete " + tokenId);
        Gpuctl.Run expired = Gpuctl.run("join-token", full.toString());
        assertEquals(1, expired.code(), expired::toString);
        assertTrue(expired.err().contains("gpuctl join-token --refresh"), expired::toString);
        assertEquals("", expired.out());
    }

    @Test @Order(5) void aWorkerWhoseDefaultRuntimeIsNotNvidiaIsNamed() throws IOException {
        String w = bed.workers().get(0);
        bed.ok(w, "python3 -c \"import json;p='/etc/docker/daemon.json';d=json.load(open(p));d.pop('default-runtime');json.dump(d,open(p,'w'))\" && systemctl restart docker");
        Set<String> deleted = new HashSet<>();
        for (JsonNode p : kubectl("get pods -A -o json").path("items")) {
            if (p.path("spec").path("nodeName").asText().equals(w) && p.path("metadata").path("name").asText().contains("nvidia-device-plugin")) {
                deleted.add(p.path("metadata").path("name").asText());
                bed.ok(bed.master(), "kubectl --kubeconfig=/etc/kubernetes/admin.conf delete pod -n " + p.path("metadata").path("namespace").asText()
                    + " " + p.path("metadata").path("name").asText());
            }
        }
        // Wait until the node's GPUs are gone for the right reason: the new plugin pod crash-loops as the real plugin does
        // without NVML ("Incompatible platform detected": the kubelet has reported the runtime without nvidia) and the node
        // has no allocatable GPU. Allocatable alone also reads 0 while the plugin pod is being replaced, before the
        // kubelet has reported the runtime without nvidia.
        long deadline = System.nanoTime() + 240_000_000_000L; // generous: a loaded machine slows the kubelet's heartbeats
        boolean settled = false;
        while (!settled && System.nanoTime() < deadline) {
            boolean newPluginWithoutNvml = false;
            for (JsonNode p : kubectl("get pods -A -o json").path("items")) {
                String name = p.path("metadata").path("name").asText();
                if (p.path("spec").path("nodeName").asText().equals(w) && name.contains("nvidia-device-plugin") && !deleted.contains(name)
                    && p.path("status").path("containerStatuses").path(0).path("state").path("waiting").path("reason").asText()
                        .equals("CrashLoopBackOff")) newPluginWithoutNvml = true;
            }
            settled = newPluginWithoutNvml
                && kubectl("get node " + w + " -o json").path("status").path("allocatable").path("nvidia.com/gpu").asText("0").equals("0");
            if (!settled) {
                try { Thread.sleep(2000); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
            }
        }
        assertTrue(settled, "the bed never showed " + w + " with its new plugin pod crash-looping and no allocatable GPU after docker lost its nvidia default runtime");
        // the state it must name is settled and asserted above (plugin crash-looping, allocatable 0) and nothing in
        // `--only gpu` can bring the runtime back: its wait for allocatable = nvidia-smi's count always runs out, so 5 s
        // (it was 30 s, every second of them spent waiting for what never comes)
        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", "gpu", "--wait-timeout", "5", full.toString());
        assertEquals(1, r.code(), r::toString);
        assertTrue(r.err().contains("node " + w + " allocatable nvidia.com/gpu = its nvidia-smi count: allocatable nvidia.com/gpu is 0, nvidia-smi counts 1"), r::toString);
        assertTrue(r.err().contains("device plugin pod ") && r.err().contains("check that nvidia is the default runtime on " + w), r::toString);
        // the whole bootstrap repairs it
        Gpuctl.Run repaired = Gpuctl.run("bootstrap", full.toString());
        assertEquals(0, repaired.code(), repaired::toString);
        assertEquals("1", kubectl("get node " + w + " -o json").path("status").path("allocatable").path("nvidia.com/gpu").asText());
    }

    @Test @Order(6) void kubeconfigPrintsTheMastersAdminConfAndMergeKeepsTheUsersOtherContexts() throws IOException {
        String admin = bed.ok(bed.master(), "cat /etc/kubernetes/admin.conf");
        Gpuctl.Run print = Gpuctl.run("kubeconfig", full.toString());
        assertEquals(0, print.code(), print::toString);
        assertEquals(Files.readString(full.resolveSibling(".gpuctl").resolve("gpu-bed").resolve("admin.conf")), print.out(),
            "what it prints is the kubeconfig rebuilt from the master's admin.conf, as kept beside the inventory");
        for (String field : List.of("client-certificate-data:", "client-key-data:", "certificate-authority-data:")) {
            String line = admin.lines().map(String::strip).filter(l -> l.startsWith(field)).findFirst().orElseThrow();
            assertTrue(print.out().lines().map(String::strip).anyMatch(line::equals), "the master's " + field);
        }

        Path dir = Files.createTempDirectory("gpuctl-kube");
        Path config = dir.resolve("config");
        String users = "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster: {server: 'https://prod.example:6443'}\n"
            + "users:\n- name: me\n  user: {token: abc}\ncontexts:\n- name: prod\n  context: {cluster: prod, user: me}\ncurrent-context: prod\n";
        Files.writeString(config, users);
        Gpuctl.Run merge = Gpuctl.run("kubeconfig", "--merge", "--kubeconfig", config.toString(), full.toString());
        assertEquals(0, merge.code(), merge::toString);
        assertTrue(merge.err().contains("merged context gpu-bed") && merge.err().contains("kubectl config use-context gpu-bed"), merge::toString);
        String merged = Files.readString(config);
        assertEquals(List.of("prod", "gpu-bed"), dev.gpuctl.kube.Kubeconfig.contexts(merged));
        assertTrue(merged.contains("server: https://" + bed.address(bed.master()) + ":6443"), merged);
        String key = admin.lines().filter(l -> l.strip().startsWith("client-key-data:")).findFirst().orElseThrow().strip();
        assertTrue(merged.contains(key), "the master's admin credentials");
        assertTrue(merged.contains("current-context: prod"), "the user's current context stays");
        assertEquals(users, Files.readString(dir.resolve("config.gpuctl-orig")), "backed up as it was");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(config)));
        Gpuctl.Run again = Gpuctl.run("kubeconfig", "--merge", "--kubeconfig", config.toString(), full.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(merged, Files.readString(config), "a second merge changes nothing");
        assertEquals(users, Files.readString(dir.resolve("config.gpuctl-orig")), "the first backup is kept");
    }
}
