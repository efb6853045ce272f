package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.Certificates.Cert;
import dev.gpuctl.kube.Certificates.Kind;
import dev.gpuctl.kube.Certificates.Standing;
import dev.gpuctl.text.HostConfException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** kubeadm certs check-expiration's tables, openssl's end date and a kubeconfig's client certificate, read. */
class CertificatesTest {
    /** kubeadm certs check-expiration on a v1.35 control plane, as kubeadm's tabwriter aligns it; one leaf expired. */
    static final String CHECK_EXPIRATION = """
        [check-expiration] Reading configuration from the cluster...
        [check-expiration] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'

        CERTIFICATE                EXPIRES                  RESIDUAL TIME   CERTIFICATE AUTHORITY   EXTERNALLY MANAGED
        admin.conf                 Dec 04, 2027 05:49 UTC   364d            ca                      no
        apiserver                  Dec 14, 2026 06:01 UTC   9d              ca                      no
        apiserver-etcd-client      Dec 04, 2027 05:49 UTC   364d            etcd-ca                 no
        apiserver-kubelet-client   Nov 30, 2026 05:49 UTC   <invalid>       ca                      no
        controller-manager.conf    Dec 04, 2027 05:49 UTC   364d            ca                      no
        front-proxy-client         Dec 04, 2027 05:49 UTC   364d            front-proxy-ca          yes
        !MISSING! etcd-server
        scheduler.conf             Dec 04, 2027 05:49 UTC   364d            ca                      no
        super-admin.conf           Dec 04, 2027 05:49 UTC   364d            ca                      no

        CERTIFICATE AUTHORITY   EXPIRES                  RESIDUAL TIME   EXTERNALLY MANAGED
        ca                      Dec 02, 2036 05:49 UTC   9y              no
        etcd-ca                 Dec 02, 2036 05:49 UTC   9y              no
        front-proxy-ca          Dec 02, 2036 05:49 UTC   9y              no
        """;

    static final Instant NOW = Instant.parse("2026-12-04T06:00:00Z");

    @Test void readsBothTablesRowByRow() {
        List<Cert> certs = Certificates.parseCheckExpiration(CHECK_EXPIRATION);
        assertEquals(12, certs.size(), certs::toString);
        assertEquals(new Cert("apiserver", Kind.CONTROL_PLANE, Instant.parse("2026-12-14T06:01:00Z"), "ca", false), certs.get(1));
        assertEquals(new Cert("front-proxy-client", Kind.CONTROL_PLANE, Instant.parse("2027-12-04T05:49:00Z"), "front-proxy-ca", true), certs.get(5));
        assertEquals(new Cert("ca", Kind.CA, Instant.parse("2036-12-02T05:49:00Z"), "", false), certs.get(9));
        assertEquals("front-proxy-ca", certs.get(11).name());
        Cert missing = certs.get(6);
        assertEquals("etcd-server", missing.name());
        assertNull(missing.notAfter());
        assertEquals(Standing.MISSING, missing.standing(NOW));
    }

    @Test void aJoinedMasterHasNoSuperAdminConfAndThatIsNoProblem() {
        List<Cert> certs = Certificates.parseCheckExpiration(CHECK_EXPIRATION.replaceFirst("super-admin.conf .*", "!MISSING! super-admin.conf"));
        Cert superAdmin = certs.stream().filter(c -> c.name().equals("super-admin.conf")).findFirst().orElseThrow();
        assertNull(superAdmin.notAfter());
        assertEquals(Standing.OK, superAdmin.standing(NOW), "kubeadm writes it on the init master only");
        assertEquals(Standing.MISSING, certs.stream().filter(c -> c.name().equals("etcd-server")).findFirst().orElseThrow().standing(NOW));
    }

    @Test void judgesEachCertificateAgainstNowWithThirtyDaysOfWarning() {
        List<Cert> certs = Certificates.parseCheckExpiration(CHECK_EXPIRATION);
        assertEquals(Standing.OK, certs.get(0).standing(NOW));
        assertEquals(Standing.EXPIRING, certs.get(1).standing(NOW));
        assertEquals(Standing.EXPIRED, certs.get(3).standing(NOW));
        assertEquals(Standing.OK, certs.get(9).standing(NOW));
        assertEquals(10, certs.get(1).daysLeft(NOW));
        assertEquals("apiserver (control-plane certificate) expires 2026-12-14 06:01 UTC, in 10 days", certs.get(1).describe(NOW));
        assertEquals("apiserver-kubelet-client (control-plane certificate) expired 2026-11-30 05:49 UTC", certs.get(3).describe(NOW));
    }

    @Test void thirtyDaysIsTheEdge() {
        Instant end = NOW.plus(Duration.ofDays(30));
        assertEquals(Standing.OK, Certificates.standing(end, NOW));
        assertEquals(Standing.EXPIRING, Certificates.standing(end.minusSeconds(1), NOW));
        assertEquals(Standing.EXPIRED, Certificates.standing(NOW, NOW));
        assertEquals(Standing.EXPIRING, Certificates.standing(NOW.plusSeconds(1), NOW));
    }

    @Test void outputWithoutATableIsAnErrorNamingTheLastLine() {
        HostConfException e = assertThrows(HostConfException.class, () -> Certificates.parseCheckExpiration(
            "[check-expiration] Reading configuration from the cluster...\nerror: failed to load admin kubeconfig\n"));
        assertTrue(e.getMessage().contains("error: failed to load admin kubeconfig"), e.getMessage());
    }

    @Test void aRowWithABadDateNamesTheRow() {
        String out = CHECK_EXPIRATION.replace("Dec 14, 2026 06:01 UTC", "2026-12-14 06:01 UTC ");
        HostConfException e = assertThrows(HostConfException.class, () -> Certificates.parseCheckExpiration(out));
        assertTrue(e.getMessage().contains("apiserver") && e.getMessage().contains("2026-12-14"), e.getMessage());
    }

    @Test void opensslEndDateWithASpacePaddedDay() {
        assertEquals(Instant.parse("2027-01-05T23:36:00Z"), Certificates.parseOpensslEndDate("notAfter=Jan  5 23:36:00 2027 GMT\n"));
        assertEquals(Instant.parse("2027-12-30T23:36:00Z"), Certificates.parseOpensslEndDate("notAfter=Dec 30 23:36:00 2027 GMT"));
        assertThrows(HostConfException.class, () -> Certificates.parseOpensslEndDate("Could not open file or uri for loading certificate"));
    }

    @Test void kubeconfigClientCertificateIsReadWithJavaSecurity() throws IOException {
        byte[] pem = Files.readAllBytes(Path.of("src/test/resources/kubeadm/ca-rsa.crt"));
        String admin = KubeconfigTest.ADMIN.replace(KubeconfigTest.CERT, Base64.getEncoder().encodeToString(pem));
        assertEquals(Optional.of(Instant.parse("2036-11-29T12:19:40Z")), Certificates.kubeconfigClientNotAfter(admin, "admin.conf"));
        String token = KubeconfigTest.ADMIN.replace("client-certificate-data: " + KubeconfigTest.CERT, "token: abc");
        assertEquals(Optional.empty(), Certificates.kubeconfigClientNotAfter(token, "admin.conf"));
        HostConfException e = assertThrows(HostConfException.class, () -> Certificates.kubeconfigClientNotAfter(
            KubeconfigTest.ADMIN.replace(KubeconfigTest.CERT, "Q0VSVA=="), "admin.conf"));
        assertTrue(e.getMessage().startsWith("admin.conf's client-certificate-data is not an X.509 certificate"), e.getMessage());
    }
}
