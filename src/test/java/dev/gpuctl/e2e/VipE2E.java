package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * cluster.controlPlaneEndpoint: { vip } on a single master (the cluster that can grow into three): Debian's real
 * keepalived holds the VIP on the master, Debian's real haproxy forwards 8443 to the API server, kubeadm init gets the
 * VIP as its endpoint (certificate and kubeconfigs), the worker joins through it; a re-run changes nothing.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class VipE2E {
    static TestBed bed;
    static Path inventory;
    static String vip;

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() throws IOException {
        bed = TestBed.own("vip", 1);
        Path generated = bed.inventory("docker", "flannel");
        String address = bed.address(bed.master());
        vip = address.substring(0, address.lastIndexOf('.')) + ".200";
        inventory = generated.resolveSibling("inventory.yaml");
        Files.writeString(inventory, Files.readString(generated).replace("cluster:\n", "cluster:\n  controlPlaneEndpoint: { vip: " + vip + " }\n"));
    }

    @Test @Order(1) void bootstrapPutsTheApiBehindTheVip() throws IOException {
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        String master = bed.master();
        String worker = bed.workers().get(0);
        // the real packages, as services, and the VIP held by the master's keepalived on its bridge interface
        assertEquals("install ok installed\ninstall ok installed\n",
            bed.ok(master, "dpkg-query -W -f='${Status}\\n' keepalived haproxy"));
        assertEquals("active\nactive\n", bed.ok(master, "systemctl is-active keepalived haproxy"));
        assertTrue(bed.ok(master, "ip -o -4 addr show").contains(" " + vip + "/24 "), "the master holds the VIP");
        assertTrue(bed.ok(master, "journalctl -u keepalived --no-pager").contains("Entering MASTER STATE"), "keepalived's own account");
        // kubeadm init got the VIP: in the API server's certificate, in kubeadm-config, in admin.conf and the worker's kubelet.conf
        assertTrue(bed.ok(master, "openssl x509 -in /etc/kubernetes/pki/apiserver.crt -noout -ext subjectAltName").contains("IP Address:" + vip));
        assertTrue(bed.ok(master, "kubectl --kubeconfig=/etc/kubernetes/admin.conf get configmap -n kube-system kubeadm-config"
            + " -o jsonpath='{.data.ClusterConfiguration}'").contains("controlPlaneEndpoint: " + vip + ":8443"));
        assertTrue(bed.ok(master, "grep server: /etc/kubernetes/admin.conf").contains("https://" + vip + ":8443"));
        assertTrue(bed.ok(worker, "grep server: /etc/kubernetes/kubelet.conf").contains("https://" + vip + ":8443"), "the worker joined through the VIP");
        assertTrue(Files.readString(inventory.resolveSibling(".gpuctl/gpu-bed/admin.conf")).contains("server: https://" + vip + ":8443"));
        // kubectl through the VIP (admin.conf names it), and the worker reaches the API server through it
        assertTrue(bed.ok(master, "kubectl --kubeconfig=/etc/kubernetes/admin.conf get nodes -o name").contains("node/" + worker));
        assertEquals("node/" + worker, bed.ok(worker, "kubectl --kubeconfig=/etc/kubernetes/kubelet.conf get node " + worker + " -o name").strip(),
            "the worker's kubelet credentials work through the VIP");
    }

    @Test @Order(2) void reRunChangesNothing() {
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(0, r.count("changed"), r::toString);
    }

    @Test @Order(3) void aConfigChangedByHandIsPutBack() {
        bed.ok(bed.master(), "sed -i 's/priority 101/priority 7/' /etc/keepalived/keepalived.conf");
        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", "vip", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.count("changed") > 0, r::toString);
        assertTrue(bed.ok(bed.master(), "cat /etc/keepalived/keepalived.conf").contains("\n    priority 101\n"));
        assertTrue(bed.ok(bed.master(), "ip -o -4 addr show").contains(" " + vip + "/24 "), "the master still holds the VIP");
    }
}
