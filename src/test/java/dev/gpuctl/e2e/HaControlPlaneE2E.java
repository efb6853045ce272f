package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

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
 * A control plane of three masters behind a VIP, and a worker: bootstrap initialises the first master with the shared
 * certificates uploaded under a certificate key, the other two join with kubeadm join --control-plane (the key and the
 * token only in 0600 files, never in a log), the worker joins through the VIP; the VIP holder's host going down leaves
 * kubectl through the VIP working (the other two masters are a majority of etcd); with the host back a re-run changes
 * nothing.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HaControlPlaneE2E {
    static TestBed bed;
    static Path inventory;
    static String vip;
    static List<String> masters;
    static String worker;

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() throws IOException {
        bed = TestBed.own("hacp", 3);
        List<String> hosts = bed.hosts();
        masters = hosts.subList(0, 3);
        worker = hosts.get(3);
        Path generated = bed.inventory("docker", "flannel");
        String address = bed.address(bed.master());
        vip = address.substring(0, address.lastIndexOf('.')) + ".202";
        inventory = generated.resolveSibling("inventory.yaml");
        String text = Files.readString(generated).replace("cluster:\n", "cluster:\n  controlPlaneEndpoint: { vip: " + vip + " }\n");
        for (String m : masters.subList(1, 3)) {
            text = text.replace("{ name: " + m + ", address: " + bed.address(m) + ", role: worker }",
                "{ name: " + m + ", address: " + bed.address(m) + ", role: master, gpu: false }");
        }
        Files.writeString(inventory, text);
    }

    static String holder() throws InterruptedException {
        for (int i = 0; i < 60; i++) {
            List<String> now = masters.stream().filter(h -> bed.ssh(h, "ip -o -4 addr show").out().contains(" " + vip + "/")).toList();
            if (now.size() == 1) return now.get(0);
            Thread.sleep(1000);
        }
        return fail("no single master holds the VIP " + vip);
    }

    static String nodesThroughTheVip(String from) {
        return bed.ok(from, "kubectl --kubeconfig=/etc/kubernetes/admin.conf get nodes -o name");
    }

    @Test @Order(1) void bootstrapMakesThreeControlPlanesAndAWorker() throws IOException {
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        String nodes = nodesThroughTheVip(worker.equals(masters.get(0)) ? masters.get(1) : masters.get(0));
        for (String h : bed.hosts()) assertTrue(nodes.contains("node/" + h + "\n"), nodes);
        for (String m : masters) {
            assertTrue(bed.ok(m, "grep server: /etc/kubernetes/admin.conf").contains("https://" + vip + ":8443"), m);
            assertEquals("", bed.ok(m, "test -f /etc/kubernetes/manifests/kube-apiserver.yaml && test -f /etc/kubernetes/manifests/etcd.yaml"
                + " && test -f /etc/kubernetes/pki/ca.key && find /etc/kubernetes/gpuctl -name 'kubeadm-join*' -o -name 'kubeadm-upload*'"), m);
            // each master's own API server answers, and serves the one cluster (the same nodes)
            assertTrue(bed.ok(m, "kubectl --kubeconfig=/etc/kubernetes/admin.conf --server=https://" + bed.address(m)
                + ":6443 get nodes -o name").contains("node/" + worker + "\n"), m);
            assertTrue(bed.ok(masters.get(0), "kubectl --kubeconfig=/etc/kubernetes/admin.conf get node " + m
                + " -o jsonpath='{.metadata.labels}'").contains("node-role.kubernetes.io/control-plane"), m);
        }
        // the same CA everywhere: downloaded from kubeadm-certs, not made anew
        String ca = bed.ok(masters.get(0), "sha256sum < /etc/kubernetes/pki/ca.key");
        for (String m : masters) assertEquals(ca, bed.ok(m, "sha256sum < /etc/kubernetes/pki/ca.key"), m);
        // the certificate key never in a log: the upload and the joins show it masked
        String logs = bed.ok(masters.get(0), "kubectl --kubeconfig=/etc/kubernetes/admin.conf get secret -n kube-system kubeadm-certs -o name");
        assertEquals("secret/kubeadm-certs\n", logs);
        try (var files = Files.walk(inventory.resolveSibling(".gpuctl"))) {
            for (Path f : files.filter(Files::isRegularFile).filter(f -> f.toString().endsWith(".log")).toList()) {
                String log = Files.readString(f);
                assertFalse(log.matches("(?s).*certificateKey: \"[0-9a-f]{64}\".*"), f + " shows a certificate key");
            }
        }
    }

    @Test @Order(2) void theVipHolderDownKubectlThroughTheVipStillWorks() throws InterruptedException {
        String first = holder();
        BedResult stop = bed.bed("stop", first);
        assertEquals(0, stop.exit(), stop.toString());
        try {
            stillWorks(first);
        } finally {
            BedResult back = bed.bed("up", "3");
            assertEquals(0, back.exit(), back.toString());
        }
    }

    static void stillWorks(String first) throws InterruptedException {
        List<String> rest = masters.stream().filter(m -> !m.equals(first)).toList();
        String next = holder();
        assertTrue(rest.contains(next), next);
        String nodes = "";
        for (int i = 0; i < 30; i++) {  // haproxy marks the stopped master's API server down after its failed checks
            BedResult r = bed.ssh(worker, "kubectl --kubeconfig=/etc/kubernetes/kubelet.conf get nodes -o name");
            nodes = r.out();
            if (r.exit() == 0 && nodes.contains("node/" + worker + "\n")) break;
            Thread.sleep(1000);
        }
        for (String h : bed.hosts()) assertTrue(nodes.contains("node/" + h + "\n"), nodes);
        assertEquals("", bed.ok(rest.get(0), "kubectl --kubeconfig=/etc/kubernetes/admin.conf label node " + worker
            + " gpuctl.test/written=yes --overwrite >/dev/null"), "a write with one master of three down");
    }

    @Test @Order(3) void withTheHostBackAReRunChangesNothing() throws InterruptedException {
        holder();
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(0, r.count("changed"), r::toString);
    }
}
