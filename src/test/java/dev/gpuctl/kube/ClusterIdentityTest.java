package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.text.Fixtures;
import dev.gpuctl.text.HostConfException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** One cluster or none: every case of what the master, the workers and this machine say before bootstrap. */
class ClusterIdentityTest {
    // openssl x509 -pubkey -noout -in ca-rsa.crt | openssl pkey -pubin -outform der | sha256sum (and ca-ec.crt)
    static final String A = "sha256:5f87f60006b7064ebfb0ec4909df42d1d62936a45faec548484e60e9e2368967";
    static final String B = "sha256:5ccc6a606931886f7342685b9eed120eaa777e45277c1d3e67c7751a2ffcd8d1";
    static final String FILE = ".gpuctl/lab/ca-cert-hash";
    static final Optional<String> BACKUP = Optional.of(".gpuctl/backups/lab-20261204T120000Z.tar.gz");

    static Map<String, Optional<ClusterIdentity.Joined>> workers(String... caOrNone) {
        Map<String, Optional<ClusterIdentity.Joined>> m = new LinkedHashMap<>();
        for (int i = 0; i < caOrNone.length; i++) {
            m.put("h" + (i + 1), caOrNone[i] == null ? Optional.empty() : Optional.of(new ClusterIdentity.Joined("https://10.0.0.10:6443", caOrNone[i])));
        }
        return m;
    }

    static Optional<String> problem(String master, Map<String, Optional<ClusterIdentity.Joined>> workers, String recorded, Optional<String> backup) {
        return ClusterIdentity.problem(new ClusterIdentity.Seen("h0", Optional.ofNullable(master), workers, Optional.ofNullable(recorded), FILE, backup));
    }

    @Test
    void theHashIsKubeadmsOfTheFixtureCas() {
        assertEquals(A, Kubeadm.caCertHash(Fixtures.read("kubeadm/ca-rsa.crt")));
        assertEquals(B, Kubeadm.caCertHash(Fixtures.read("kubeadm/ca-ec.crt")));
    }

    @Test
    void noClusterAnywhereOrOneThatAllAgreeOnGoesOn() {
        assertEquals(Optional.empty(), problem(null, workers(null, null), null, Optional.empty()), "a fresh lab");
        assertEquals(Optional.empty(), problem(A, workers(null, null), null, Optional.empty()), "first bootstrap after init, workers not yet joined");
        assertEquals(Optional.empty(), problem(A, workers(A, null), A, BACKUP), "one worker joined, one added later");
        assertEquals(Optional.empty(), problem(A, workers(A, A), null, Optional.empty()), "a cluster from before the record existed");
        assertEquals(Optional.empty(), problem(A, Map.of(), A, Optional.empty()), "a master alone (--hosts h0)");
    }

    @Test
    void aBlankMasterBesideJoinedWorkersStops() {
        String p = problem(null, workers(A, A, A, A), A, BACKUP).orElseThrow();
        assertEquals("h0 has no cluster, but h1, h2, h3, h4 are joined to one (CA " + A + ", the one this machine recorded): restore it with"
            + " `gpuctl restore BACKUP` (the newest is .gpuctl/backups/lab-20261204T120000Z.tar.gz), or take the workers out first"
            + " (`gpuctl reset`) to start a new cluster. Nothing was changed.", p);
        String one = problem(null, workers(null, B), null, Optional.empty()).orElseThrow();
        assertTrue(one.startsWith("h0 has no cluster, but h2 is joined to one (CA " + B + "): restore it with `gpuctl restore BACKUP`"
            + " (no backup is kept on this machine under .gpuctl/backups/)"), one);
    }

    @Test
    void aBlankMasterWithARecordStops() {
        String p = problem(null, workers(null, null), A, BACKUP).orElseThrow();
        assertTrue(p.startsWith("h0 has no cluster, but this machine recorded one at the first bootstrap (CA " + A + ", " + FILE + "): restore it"), p);
        assertTrue(p.contains("move " + FILE + " away (`gpuctl reset` archives it)"), p);
    }

    @Test
    void aMasterWhoseCaIsNotTheRecordedOneStops() {
        String p = problem(B, workers(A, A), A, BACKUP).orElseThrow();
        assertTrue(p.startsWith("h0's cluster CA is " + B + ", not the one this machine recorded at the first bootstrap (" + A + ", " + FILE + ")"), p);
        assertTrue(p.contains("restore it on h0 with `gpuctl restore BACKUP` (the newest is "), p);
        assertTrue(problem(B, workers((String) null), A, Optional.empty()).isPresent(), "even with no worker joined");
    }

    @Test
    void workersJoinedToAnotherCaStop() {
        String p = problem(A, workers(A, B, B), null, Optional.empty()).orElseThrow();
        assertEquals("h2, h3 are joined to a cluster with CA " + B + ", not h0's (CA " + A + "): take them out of that cluster first"
            + " (`kubeadm reset -f` on each), then bootstrap joins them to h0's. Nothing was changed.", p);
    }

    @Test
    void aWorkersKubeletConfAsItsProbePrintsIt() {
        String data = Base64.getEncoder().encodeToString(Fixtures.read("kubeadm/ca-rsa.crt").getBytes(StandardCharsets.US_ASCII));
        assertEquals(Optional.of(new ClusterIdentity.Joined("https://10.0.0.10:6443", A)),
            ClusterIdentity.parseKubeletConf("ca-data " + data + "\nserver https://10.0.0.10:6443\n"));
        assertEquals(Optional.empty(), ClusterIdentity.parseKubeletConf(""));
        assertThrows(HostConfException.class, () -> ClusterIdentity.parseKubeletConf("server https://10.0.0.10:6443\n"));
        assertThrows(HostConfException.class, () -> ClusterIdentity.parseKubeletConf("server x\nca-data !!!\n"));
    }
}
