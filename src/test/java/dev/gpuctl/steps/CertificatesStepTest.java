package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.Certificates.Kind;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Probe;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** verify's certificate checks: what fails (expired, missing), what only warns (under 30 days), per host. */
class CertificatesStepTest {
    static final Instant NOW = Instant.parse("2026-12-04T06:00:00Z");

    static final String TABLE = """
        [check-expiration] Reading configuration from the cluster...

        CERTIFICATE                EXPIRES                  RESIDUAL TIME   CERTIFICATE AUTHORITY   EXTERNALLY MANAGED
        admin.conf                 Dec 04, 2027 05:49 UTC   364d            ca                      no
        apiserver                  Dec 14, 2026 06:01 UTC   10d             ca                      no

        CERTIFICATE AUTHORITY   EXPIRES                  RESIDUAL TIME   EXTERNALLY MANAGED
        ca                      Dec 02, 2036 05:49 UTC   9y              no
        """;

    @Test void anExpiredOrMissingControlPlaneCertificateFailsNamingItsDate() {
        assertEquals(Optional.empty(), CertificatesStep.controlPlaneProblem(TABLE, NOW));
        Instant later = Instant.parse("2026-12-15T00:00:00Z");
        assertEquals(Optional.of("apiserver (control-plane certificate) expired 2026-12-14 06:01 UTC"), CertificatesStep.controlPlaneProblem(TABLE, later));
        String missing = TABLE.replace("apiserver                  Dec 14, 2026 06:01 UTC   10d             ca                      no", "!MISSING! apiserver");
        assertEquals(Optional.of("apiserver (control-plane certificate) is missing"), CertificatesStep.controlPlaneProblem(missing, NOW));
        assertTrue(CertificatesStep.controlPlaneProblem("error: no table", NOW).orElseThrow().contains("no certificate table"));
    }

    @Test void aJoinedMasterHasNoSuperAdminConfAndThatIsRight() {
        String admin = TABLE.lines().filter(l -> l.startsWith("admin.conf")).findFirst().orElseThrow();
        String joined = TABLE.replace(admin, admin + "\n!MISSING! super-admin.conf");
        assertEquals(Optional.empty(), CertificatesStep.controlPlaneProblem(joined, NOW));
    }

    @Test void rotationNeedsTheSettingAndTheLink() {
        assertEquals(Optional.empty(), CertificatesStep.rotationProblem("rotate=on\nlink=/var/lib/kubelet/pki/kubelet-client-2026-12-04-05-49-00.pem\n"));
        assertEquals(Optional.of("/var/lib/kubelet/config.yaml does not set rotateCertificates: true"),
            CertificatesStep.rotationProblem("rotate=off\nlink=/var/lib/kubelet/pki/kubelet-client-2026.pem\n"));
        assertTrue(CertificatesStep.rotationProblem("rotate=on\nlink=none\n").orElseThrow().contains("kubelet-client-current.pem is missing"));
        assertTrue(CertificatesStep.rotationProblem("rotate=on\nlink=file\n").orElseThrow().contains("plain file"));
    }

    @Test void theKubeletsCertificateFailsOnceExpiredAndWhenOpensslCannotReadIt() {
        assertEquals(Optional.empty(), CertificatesStep.kubeletProblem(0, "notAfter=Dec  4 05:49:00 2027 GMT\n", NOW));
        assertEquals(Optional.of("/var/lib/kubelet/pki/kubelet-client-current.pem (kubelet client certificate) expired 2026-12-01 05:49 UTC"),
            CertificatesStep.kubeletProblem(0, "notAfter=Dec  1 05:49:00 2026 GMT\n", NOW));
        assertTrue(CertificatesStep.kubeletProblem(1, "Could not open file or uri for loading certificate", NOW).orElseThrow().contains("exit 1"));
    }

    @Test void aCertificateUnderThirtyDaysWarnsOnItsOwnCheckOnly() {
        Facts facts = new Facts();
        facts.put(CertificatesStep.kubeadmFact("m"), TABLE, false);
        facts.put(CertificatesStep.kubeletFact("m"), "notAfter=Dec 20 05:49:00 2026 GMT", false);
        facts.put(CertificatesStep.kubeconfigFact("m"), "2027-12-04T05:49:00Z", false);
        CertificatesStep step = new CertificatesStep(Clock.fixed(NOW, ZoneOffset.UTC));
        Probe controlPlane = Probe.of("control-plane certificates and CAs not expired (kubeadm certs check-expiration)", "true", r -> Optional.empty());
        Probe kubelet = Probe.of("kubelet client certificate valid (x)", "true", r -> Optional.empty());
        Probe laptop = Probe.of("this machine's kubeconfig client certificate not expired (x)", "true", r -> Optional.empty());
        Probe rotation = Probe.of("kubelet rotates its client certificate (x)", "true", r -> Optional.empty());
        assertEquals("apiserver (control-plane certificate) expires 2026-12-14 06:01 UTC, in 10 days", step.warning(controlPlane, facts, "m"));
        assertEquals("kubelet-client-current.pem (kubelet client certificate) expires 2026-12-20 05:49 UTC, in 15 days", step.warning(kubelet, facts, "m"));
        assertEquals("", step.warning(laptop, facts, "m"));
        assertEquals("", step.warning(rotation, facts, "m"));
        assertEquals("", step.warning(controlPlane, facts, "w1"), "another host's facts are its own");
        assertEquals(List.of(Kind.CONTROL_PLANE, Kind.CONTROL_PLANE, Kind.CA, Kind.KUBECONFIG, Kind.KUBELET),
            CertificatesStep.certificates(facts, "m").stream().map(c -> c.kind()).toList());
    }

    @Test void theMasterAsksKubeadmAndReadsThisMachinesKubeconfigEveryHostAsksItsKubelet(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws java.io.IOException {
        var inv = dev.gpuctl.inventory.InventoryLoader.parse("inv.yaml", """
            cluster: { name: c, kubernetesVersion: "1.35", packages: system }
            nodes:
              - { name: m1, address: 10.1.0.1, role: master }
              - { name: w1, address: 10.1.0.2, role: worker }
            """, dir, java.util.Map.of("HOME", "/root"));
        CertificatesStep step = new CertificatesStep(Clock.fixed(NOW, ZoneOffset.UTC));
        List<Probe> master = step.check(new HostContext(inv, inv.node("m1").orElseThrow()));
        List<Probe> worker = step.check(new HostContext(inv, inv.node("w1").orElseThrow()));
        assertEquals(4, master.size());
        assertEquals(2, worker.size());
        assertTrue(master.get(0).command().startsWith("kubeadm certs check-expiration"));
        assertTrue(worker.get(1).command().contains("openssl x509 -noout -enddate -in /var/lib/kubelet/pki/kubelet-client-current.pem"));
        // this machine's kubeconfig is read here, not on the host: missing, then an expired client certificate
        var none = new dev.gpuctl.remote.ExecResult(0, "", "");
        assertTrue(master.get(1).judge().apply(none, new Facts()).orElseThrow().endsWith("admin.conf is missing"));
        java.nio.file.Files.createDirectories(inv.localKubeconfig().getParent());
        byte[] pem = java.nio.file.Files.readAllBytes(java.nio.file.Path.of("src/test/resources/kubeadm/ca-rsa.crt"));
        java.nio.file.Files.writeString(inv.localKubeconfig(), dev.gpuctl.kube.KubeconfigTestAccess.admin(pem));
        assertEquals(Optional.empty(), master.get(1).judge().apply(none, new Facts()));
        assertEquals(java.util.Map.of("certs.kubeconfig.m1", "2036-11-29T12:19:40Z"), master.get(1).learn().apply(none));
        CertificatesStep after = new CertificatesStep(Clock.fixed(Instant.parse("2037-01-01T00:00:00Z"), ZoneOffset.UTC));
        assertTrue(after.check(new HostContext(inv, inv.node("m1").orElseThrow())).get(1).judge().apply(none, new Facts())
            .orElseThrow().contains("expired 2036-11-29 12:19 UTC"));
    }
}
