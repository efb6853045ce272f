package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.testbed.TestBed;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Never a second cluster by accident: a 1+1 cluster bootstrapped (its CA hash recorded on this machine) and backed up,
 * then the master's disk lost (`bed wipe`): bootstrap stops at preflight with exit 3 before any change — no
 * /etc/kubernetes/pki on the master, the worker's kubelet.conf untouched — and names the newest backup to restore.
 */
class ClusterIdentityE2E {
    static TestBed bed;
    static Path inventory;

    static BootstrappedCluster.Lease cluster;

    /** The shared 1+1 cluster as right after bootstrap (its own inventory and .gpuctl/, where that bootstrap recorded the CA). */
    @BeforeAll static void up() {
        cluster = BootstrappedCluster.acquire(1);
        bed = cluster.bed();
        inventory = cluster.inventory();
    }

    @AfterAll static void down() {
        BootstrappedCluster.release(cluster);
    }

    /** kubeadm's caCertHash of the master's CA, as openssl computes it on the master. */
    static String caHash(String master) {
        return "sha256:" + bed.ok(master, "openssl x509 -pubkey -noout -in /etc/kubernetes/pki/ca.crt | openssl pkey -pubin -outform der"
            + " | sha256sum | cut -d' ' -f1").strip();
    }

    @Test void aWipedMasterBesideAJoinedWorkerStopsBootstrapBeforeAnyChange() throws Exception {
        String master = bed.master(), worker = bed.workers().get(0);
        String ca = caHash(master);
        Path record = inventory.getParent().resolve(".gpuctl/gpu-lab/ca-cert-hash");
        try (Stream<Path> s = Files.list(inventory.getParent().resolve(".gpuctl"))) {
            List<Path> dirs = s.filter(Files::isDirectory).filter(d -> Files.exists(d.resolve("ca-cert-hash"))).toList();
            assertEquals(1, dirs.size(), dirs::toString);
            record = dirs.get(0).resolve("ca-cert-hash");
        }
        assertEquals(ca, Files.readString(record).strip(), "the first bootstrap recorded the cluster's CA");
        Gpuctl.Run backup = Gpuctl.run("backup", inventory.toString());
        assertEquals(0, backup.code(), backup::toString);
        Path newest;
        try (Stream<Path> s = Files.list(inventory.getParent().resolve(".gpuctl/backups"))) {
            newest = s.filter(p -> p.toString().endsWith(".tar.gz")).sorted().reduce((a, b) -> b).orElseThrow();
        }

        var wiped = bed.bed("wipe", master);
        assertEquals(0, wiped.exit(), wiped::toString);
        String workerConf = bed.ok(worker, "sha256sum /etc/kubernetes/kubelet.conf");
        Gpuctl.Run again = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(3, again.code(), "preflight refuses a second cluster:\n" + again);
        assertTrue(again.err().contains(master + " has no cluster, but " + worker + " is joined to one (CA " + ca
            + ", the one this machine recorded): restore it with `gpuctl restore BACKUP` (the newest is " + newest + "), or take the"
            + " workers out first (`gpuctl reset`) to start a new cluster."), again::toString);
        assertEquals("absent", bed.ok(master, "test -e /etc/kubernetes/pki && echo present || echo absent").strip(), "no kubeadm init ran");
        assertEquals("absent", bed.ok(master, "command -v kubeadm >/dev/null && echo present || echo absent").strip(), "nothing was installed");
        assertEquals(workerConf, bed.ok(worker, "sha256sum /etc/kubernetes/kubelet.conf"), "the worker is untouched");
        assertEquals(ca, Files.readString(record).strip(), "the record is kept");
    }
}
