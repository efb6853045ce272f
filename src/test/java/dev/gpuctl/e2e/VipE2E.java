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

    /** The emulated kubeadm's upload-certs, as kubeadm's copycerts.go does it: what an HA join downloads. */
    @Test @Order(4) void uploadCertsEncryptsTheSharedCertificatesUnderTheKey() {
        String master = bed.master();
        String key = bed.ok(master, "kubeadm certs certificate-key").strip();
        assertTrue(key.matches("[0-9a-f]{64}"), key);
        assertEquals("[upload-certs] Storing the certificates in Secret \"kubeadm-certs\" in the \"kube-system\" Namespace\n"
            + "[upload-certs] Using certificate key:\n" + key + "\n",
            bed.ok(master, "kubeadm init phase upload-certs --upload-certs --certificate-key " + key));
        // decrypted with the key by the cryptography library itself: nonce(12) || ciphertext || tag, AES-256-GCM
        String decrypt = "kubectl --kubeconfig=/etc/kubernetes/admin.conf get secret -n kube-system kubeadm-certs -o json | python3 -c '"
            + "import sys, json, base64\nfrom cryptography.hazmat.primitives.ciphers.aead import AESGCM\n"
            + "d = json.load(sys.stdin)[\"data\"]\nb = base64.b64decode(d[\"ca.crt\"])\n"
            + "print(\" \".join(sorted(d)))\nsys.stdout.write(AESGCM(bytes.fromhex(sys.argv[1])).decrypt(b[:12], b[12:], None).decode())' " + key;
        String got = bed.ok(master, decrypt);
        assertEquals("ca.crt ca.key etcd-ca.crt etcd-ca.key front-proxy-ca.crt front-proxy-ca.key sa.key sa.pub\n"
            + bed.ok(master, "cat /etc/kubernetes/pki/ca.crt"), got);
        assertTrue(bed.ok(master, "kubeadm token list").contains("Proxy for managing TTL for the kubeadm-certs secret"));
        // owned by that token: the garbage collector deletes the certificates with it
        assertEquals("Secret True True\n", bed.ok(master, "kubectl --kubeconfig=/etc/kubernetes/admin.conf get secret -n kube-system"
            + " kubeadm-certs -o json | python3 -c 'import sys, json\no = json.load(sys.stdin)[\"metadata\"][\"ownerReferences\"][0]\n"
            + "print(o[\"kind\"], o[\"name\"].startswith(\"bootstrap-token-\"), o[\"controller\"])'"));
        var wrong = bed.ssh(master, "kubeadm init phase upload-certs --upload-certs --certificate-key " + "00".repeat(16));
        assertEquals(1, wrong.exit(), wrong.toString());
        assertTrue(wrong.err().contains("certificateKey: Invalid value: \"" + "00".repeat(16) + "\": invalid certificate key size 16,"
            + " the key must be an AES key of size 32"), wrong.toString());
        assertEquals("[upload-certs] Skipping phase. Please see --upload-certs\n", bed.ok(master, "kubeadm init phase upload-certs"));
    }
}
