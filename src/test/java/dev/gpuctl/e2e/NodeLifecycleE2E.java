package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.testbed.BedResult;
import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * drain, uncordon, remove-node and reset on one bootstrapped cluster (h0 + h1, h2), in order: a running GPU Job on h1
 * is waited for and named, never killed; --force evicts it; uncordon; h2 is removed (asked of the host: no kubelet, no
 * CNI configuration or interfaces) and bootstrapped back; reset leaves every host clean, and again changes nothing.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NodeLifecycleE2E {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String KUBECTL = "kubectl --kubeconfig=/etc/kubernetes/admin.conf ";
    static TestBed bed;
    static Path inventory;
    static String h1;
    static String h2;

    static BootstrappedCluster.Lease cluster;

    @AfterAll static void down() {
        BootstrappedCluster.release(cluster);
    }

    /** The shared 1+2 cluster as right after bootstrap (its own inventory and .gpuctl/). */
    @BeforeAll static void up() {
        cluster = BootstrappedCluster.acquire(2);
        bed = cluster.bed();
        h1 = bed.workers().get(0);
        h2 = bed.workers().get(1);
        inventory = cluster.inventory();
    }

    static String kubectl(String args) {
        return bed.ok(bed.master(), KUBECTL + args);
    }

    /** The pods on a node that are not a DaemonSet's: "NS/NAME OWNERKIND PHASE". */
    static List<String> workloadPodsOn(String node) throws IOException {
        JsonNode pods = JSON.readTree(kubectl("get pods -A --field-selector spec.nodeName=" + node + " -o json"));
        List<String> out = new ArrayList<>();
        for (JsonNode p : pods.path("items")) {
            String owner = p.path("metadata").path("ownerReferences").path(0).path("kind").asText("");
            if (owner.equals("DaemonSet")) continue;
            out.add(p.path("metadata").path("namespace").asText() + "/" + p.path("metadata").path("name").asText() + " " + owner + " "
                + p.path("status").path("phase").asText());
        }
        return out;
    }

    static String unschedulable(String node) {
        return kubectl("get node " + node + " -o jsonpath={.spec.unschedulable}").strip();
    }

    @Test @Order(1) void aRunningGpuJobIsWaitedForAndNamedAndNothingIsEvicted() throws Exception {
        kubectl("label node " + h1 + " pick=" + h1);
        Path manifest = inventory.resolveSibling("work.yaml");
        Files.writeString(manifest, """
            apiVersion: batch/v1
            kind: Job
            metadata: { name: train-42, namespace: default }
            spec:
              backoffLimit: 0
              template:
                spec:
                  restartPolicy: Never
                  nodeSelector: { pick: %1$s }
                  containers:
                    - name: train
                      image: registry.internal/trainer:cu118
                      command: ["sh", "-c", "sleep 900"]
                      resources: { limits: { nvidia.com/gpu: 1 } }
            ---
            apiVersion: apps/v1
            kind: Deployment
            metadata: { name: web, namespace: default }
            spec:
              replicas: 1
              selector: { matchLabels: { app: web } }
              template:
                metadata: { labels: { app: web } }
                spec:
                  nodeSelector: { pick: %1$s }
                  containers: [ { name: web, image: nginx } ]
            """.formatted(h1));
        bed.ok(bed.master(), "cat > /root/work.yaml <<'EOF'\n" + Files.readString(manifest) + "EOF\n" + KUBECTL + "apply -f /root/work.yaml");
        for (int i = 0; i < 30 && workloadPodsOn(h1).stream().filter(p -> p.endsWith(" Running")).count() < 2; i++) Thread.sleep(1000);
        List<String> before = workloadPodsOn(h1);
        assertEquals(2, before.stream().filter(p -> p.endsWith(" Running")).count(), before::toString);

        Gpuctl.Run r = Gpuctl.run("drain", "-i", inventory.toString(), "--drain-timeout", "6s", h1);
        assertEquals(1, r.code(), r::toString);
        assertTrue(r.err().contains(h1 + ": still runs default/train-42-") && r.err().contains(" on 1 GPU; re-run later, or with --force to evict it"), r::err);
        assertTrue(r.err().contains("gpu-jobs   waiting up to 6s for: " + h1 + ": still runs default/train-42-"), r::err);
        assertEquals("true", unschedulable(h1), "cordoned");
        assertEquals(before, workloadPodsOn(h1), "neither the Job's pod nor the Deployment's was evicted");

        Gpuctl.Run verify = Gpuctl.run("verify", inventory.toString());
        assertEquals(4, verify.code(), verify::toString);
        assertTrue(verify.out().contains(h1 + " is cordoned (SchedulingDisabled)"), verify::out);
    }

    @Test @Order(2) void forceEvictsThemAndARerunChangesNothing() throws Exception {
        Gpuctl.Run r = Gpuctl.run("drain", "-i", inventory.toString(), "--force", h1);
        assertEquals(0, r.code(), r::toString);
        assertEquals(List.of(), workloadPodsOn(h1), "only DaemonSet pods are left");
        assertTrue(kubectl("get pods -l app=web -o jsonpath={.items[*].status.phase}").contains("Pending"),
            "the Deployment's new pod waits: its only node is cordoned");

        Gpuctl.Run again = Gpuctl.run("drain", "-i", inventory.toString(), h1);
        assertEquals(0, again.code(), again::toString);
        assertFalse(again.err().contains("changed"), again::err);
    }

    @Test @Order(3) void uncordonPutsTheNodeBackAndVerifyIsClean() throws Exception {
        Gpuctl.Run r = Gpuctl.run("uncordon", "-i", inventory.toString(), h1);
        assertEquals(0, r.code(), r::toString);
        assertEquals("", unschedulable(h1));
        kubectl("delete job train-42 --ignore-not-found");
        kubectl("delete deployment web --ignore-not-found");
        Gpuctl.Run verify = Gpuctl.run("verify", inventory.toString());
        assertEquals(0, verify.code(), verify::toString);
    }

    static List<String> cniLinks(String host) {
        return Stream.of(bed.ok(host, "ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1").split("\n"))
            .map(String::strip).filter(n -> n.equals("cni0") || n.equals("flannel.1") || n.equals("vxlan.calico")).toList();
    }

    /** What a host still has of the cluster, each asked of the host; empty when clean. */
    static List<String> leftOn(String host) {
        List<String> left = new ArrayList<>();
        if (bed.ssh(host, "systemctl is-active -q kubelet").exit() == 0) left.add("kubelet running");
        BedResult files = bed.ssh(host, "ls -d /etc/kubernetes/kubelet.conf /etc/kubernetes/admin.conf /etc/kubernetes/pki/ca.crt "
            + "/var/lib/kubelet/config.yaml /etc/cni/net.d 2>/dev/null");
        if (!files.out().isBlank()) left.add("files: " + files.out().strip().replace('\n', ' '));
        if (!cniLinks(host).isEmpty()) left.add("links: " + cniLinks(host));
        BedResult chains = bed.ssh(host, "command -v iptables-save >/dev/null && iptables-save | grep -E '^:(KUBE-|CNI-|FLANNEL-)'");
        if (!chains.out().isBlank()) left.add("chains: " + chains.out().strip());
        return left;
    }

    @Test @Order(4) void removeNodeLeavesTheHostCleanTheRestVerifiesAndBootstrapBringsItBack() throws Exception {
        assertEquals(List.of("flannel.1", "cni0"), cniLinks(h2).stream().sorted(java.util.Comparator.reverseOrder()).toList(),
            "the CNI's interfaces are there before");
        Gpuctl.Run master = Gpuctl.run("remove-node", "-i", inventory.toString(), bed.master());
        assertEquals(2, master.code(), master::toString);

        Gpuctl.Run r = Gpuctl.run("remove-node", "-i", inventory.toString(), h2);
        assertEquals(0, r.code(), r::toString);
        assertTrue(bed.ssh(bed.master(), KUBECTL + "get node " + h2).err().contains("NotFound"), "the node is gone");
        assertEquals(List.of(), leftOn(h2));
        assertEquals("active", bed.ok(h2, "systemctl is-active chrony").strip(), "the host preparation stays");

        Gpuctl.Run again = Gpuctl.run("remove-node", "-i", inventory.toString(), h2);
        assertEquals(0, again.code(), again::toString);
        assertFalse(again.err().contains("changed"), again::err);

        Path without = inventory.resolveSibling("inventory-without.yaml");
        Files.writeString(without, Files.readString(inventory).lines().filter(l -> !l.contains("name: " + h2 + ","))
            .reduce("", (a, b) -> a + b + "\n"));
        Gpuctl.Run verify = Gpuctl.run("verify", without.toString());
        assertEquals(0, verify.code(), verify::toString);

        Gpuctl.Run back = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, back.code(), back::toString);
        assertTrue(back.err().lines().anyMatch(l -> l.startsWith(h2) && l.contains("join") && l.contains("changed")), back::err);
        assertTrue(back.err().lines().anyMatch(l -> l.startsWith(h1) && l.contains("join") && l.contains("ok")), back::err);
        assertTrue(kubectl("get node " + h2).contains(" Ready "), "it joined alone");
    }

    @Test @Order(5) void resetLeavesEveryHostCleanAndArchivesTheLocalStateAndAgainChangesNothing() throws Exception {
        Path state = inventory.resolveSibling(".gpuctl");
        assertTrue(Files.isDirectory(state.resolve("gpu-bed")), "bootstrap's local state is there");
        Gpuctl.Run r = Gpuctl.run("reset", "--yes", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.err().startsWith("reset of cluster gpu-bed:"), r::err);
        int workers = r.err().indexOf("== phase 0: reset the workers ==");
        int master = r.err().indexOf("== phase 1: reset the master ==");
        assertTrue(workers >= 0 && master > workers, r::err);
        for (String h : bed.hosts()) assertEquals(List.of(), leftOn(h), h);
        assertFalse(Files.exists(state.resolve("gpu-bed")));
        try (var archived = Files.list(state.resolve("archive"))) {
            assertTrue(archived.anyMatch(p -> p.getFileName().toString().startsWith("gpu-bed-reset-")
                && Files.exists(p.resolve("admin.conf"))), "archived, not deleted");
        }

        Gpuctl.Run again = Gpuctl.run("reset", "--yes", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertFalse(again.err().contains("changed"), again::err);
        assertTrue(again.out().contains("no local state to archive"), again::out);
    }
}
