package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.kube.Certificates;
import dev.gpuctl.testbed.TestBed;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.yaml.snakeyaml.Yaml;

/**
 * Certificates on a 1 master + 1 worker cluster: verify reports every certificate's date; apiserver.crt re-issued by
 * the cluster CA to expire in 10 days makes verify warn (exit 5) naming it and its date; certs renew renews it,
 * restarts the API server (which then serves the renewed certificate) and refreshes the kubeconfigs; verify is clean
 * again with about a year left; renewing twice is safe; the laptop's kubeconfig still reaches the API server.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CertificatesE2E {
    static TestBed bed;
    static Path inventory;
    static String master;
    static final String PKI = "/etc/kubernetes/pki";

    static BootstrappedCluster.Lease cluster;

    @AfterAll static void down() {
        BootstrappedCluster.release(cluster);
    }

    /** The shared 1+1 cluster as right after bootstrap (its own inventory and .gpuctl/). */
    @BeforeAll static void up() {
        cluster = BootstrappedCluster.acquire(1);
        bed = cluster.bed();
        inventory = cluster.inventory();
        master = bed.master();
    }

    static JsonNode verifyJson(int expectedCode) throws Exception {
        Gpuctl.Run r = Gpuctl.run("verify", "--json", inventory.toString());
        assertEquals(expectedCode, r.code(), r::toString);
        return new ObjectMapper().readTree(r.out());
    }

    static JsonNode host(JsonNode doc, String name) {
        for (JsonNode h : doc.path("hosts")) if (h.path("name").asText().equals(name)) return h;
        throw new AssertionError("no host " + name + " in " + doc);
    }

    static JsonNode cert(JsonNode host, String name) {
        for (JsonNode c : host.path("certificates")) if (c.path("name").asText().equals(name)) return c;
        throw new AssertionError("no certificate " + name + " in " + host.path("certificates"));
    }

    /** The serial of the certificate the API server serves now, and of apiserver.crt on disk. */
    static String servedSerial() {
        return bed.ok(master, "echo | openssl s_client -connect " + bed.address(master) + ":6443 2>/dev/null | openssl x509 -noout -serial").strip();
    }

    static String fileSerial() {
        return bed.ok(master, "openssl x509 -noout -serial -in " + PKI + "/apiserver.crt").strip();
    }

    static final String[] PODS = {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"};

    /** The running container of a static pod, as crictl lists it. */
    static String container(String pod) {
        return bed.ok(master, "crictl --runtime-endpoint unix:///var/run/cri-dockerd.sock ps --name '^" + pod + "$' --state running -q").strip();
    }

    static Instant fileNotAfter(String path) {
        return Certificates.parseOpensslEndDate(bed.ok(master, "openssl x509 -noout -enddate -in " + path));
    }

    @Test @Order(1) void aFreshClusterVerifiesCleanAndJsonCarriesEveryDate() throws Exception {
        JsonNode doc = verifyJson(0);
        JsonNode m = host(doc, master);
        for (String name : new String[] {"admin.conf", "apiserver", "apiserver-etcd-client", "etcd-server", "front-proxy-client",
            "scheduler.conf", "super-admin.conf", "ca", "etcd-ca", "front-proxy-ca", ".gpuctl/admin.conf", "kubelet-client-current.pem"}) {
            JsonNode c = cert(m, name);
            assertEquals("ok", c.path("standing").asText(), c::toString);
            assertTrue(c.path("daysLeft").asLong() >= 364, c::toString);
        }
        assertEquals("ca", cert(m, "ca").path("kind").asText());
        JsonNode w = host(doc, bed.workers().get(0));
        assertEquals("kubelet", cert(w, "kubelet-client-current.pem").path("kind").asText());
        long certChecks = 0;
        for (JsonNode h : doc.path("hosts")) {
            for (JsonNode c : h.path("checks")) {
                if (!c.path("step").asText().equals("certs")) continue;
                certChecks++;
                assertTrue(c.path("ok").asBoolean() && c.path("warning").asText().isEmpty(), c::toString);
            }
        }
        assertEquals(6, certChecks, "master: kubeadm's table, the laptop's kubeconfig, kubelet rotation and validity; worker: the kubelet's two");
    }

    @Test @Order(2) void anApiserverCertificateTenDaysFromExpiryWarnsWithExitFiveNamingItAndItsDate() throws Exception {
        // re-issued by the cluster CA, same key, subject and SANs, valid for 10 days
        bed.ok(master, "set -e; cd " + PKI + "; sans=$(openssl x509 -in apiserver.crt -noout -ext subjectAltName | tail -n1 | sed 's/IP Address/IP/g; s/ //g'); "
            + "printf 'basicConstraints=critical,CA:FALSE\\nkeyUsage=critical,digitalSignature,keyEncipherment\\nextendedKeyUsage=serverAuth\\nsubjectAltName=%s\\n' \"$sans\" > /tmp/apiserver.ext; "
            + "openssl req -new -key apiserver.key -subj /CN=kube-apiserver -out /tmp/apiserver.csr; "
            + "openssl x509 -req -in /tmp/apiserver.csr -CA ca.crt -CAkey ca.key -set_serial 4242 -days 10 -sha256 -extfile /tmp/apiserver.ext -out apiserver.crt; "
            + "rm -f /tmp/apiserver.csr /tmp/apiserver.ext");
        Instant end = fileNotAfter(PKI + "/apiserver.crt");
        assertTrue(Duration.between(Instant.now(), end).toDays() == 9, () -> "expires " + end);
        String date = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneOffset.UTC).format(end);

        Gpuctl.Run table = Gpuctl.run("verify", inventory.toString());
        assertEquals(5, table.code(), table::toString);
        assertTrue(table.out().contains("WARN\n      soon:  apiserver (control-plane certificate) expires " + date + " UTC, in 9 days\n"), table::toString);
        assertTrue(table.out().contains("      fix:   gpuctl certs renew " + inventory), table::toString);
        assertTrue(table.out().contains(", 1 with a warning"), table::toString);

        JsonNode doc = verifyJson(5);
        assertTrue(doc.path("ok").asBoolean(), "a warning is no failure");
        JsonNode apiserver = cert(host(doc, master), "apiserver");
        assertEquals("expiring", apiserver.path("standing").asText());
        assertEquals(9, apiserver.path("daysLeft").asLong());
        assertEquals(end.truncatedTo(java.time.temporal.ChronoUnit.MINUTES).toString(), apiserver.path("expires").asText(),
            "kubeadm's table gives the minute");

        Gpuctl.Run check = Gpuctl.run("certs", "check", inventory.toString());
        assertEquals(5, check.code(), check::toString);
    }

    @Test @Order(3) void renewRenewsRestartsTheApiServerRefreshesTheKubeconfigsAndVerifyIsClean() throws Exception {
        String servedBefore = servedSerial();
        String laptopBefore = Files.readString(localKubeconfig());
        Map<String, String> containers = new java.util.HashMap<>();
        for (String pod : PODS) containers.put(pod, container(pod));
        Gpuctl.Run renew = Gpuctl.run("certs", "renew", inventory.toString());
        assertEquals(0, renew.code(), renew::toString);
        assertTrue(renew.out().contains("certificates renewed; every certificate checked again:"), renew::toString);
        for (String pod : PODS) {
            bed.ok(master, "test -f /etc/kubernetes/manifests/" + pod + ".yaml");
            String now = container(pod);
            assertTrue(!now.isEmpty() && !now.equals(containers.get(pod)), () -> pod + " was restarted: " + containers.get(pod) + " -> " + now);
        }
        assertEquals("", bed.ok(master, "ls -A /etc/kubernetes/gpuctl-restart").strip(), "every manifest back in place");

        assertTrue(Duration.between(Instant.now(), fileNotAfter(PKI + "/apiserver.crt")).toDays() >= 364);
        String served = servedSerial();
        assertEquals(fileSerial(), served, "the restarted API server serves the renewed certificate");
        assertNotEquals(servedBefore, served);

        // the new admin.conf: the ssh user's ~/.kube/config and this machine's copy
        bed.ok(master, "cmp /etc/kubernetes/admin.conf /root/.kube/config");
        String adminConf = bed.ok(master, "cat /etc/kubernetes/admin.conf");
        String laptop = Files.readString(localKubeconfig());
        for (String field : List.of("client-certificate-data:", "client-key-data:", "certificate-authority-data:")) {
            String line = adminConf.lines().map(String::strip).filter(l -> l.startsWith(field)).findFirst().orElseThrow();
            assertTrue(laptop.lines().map(String::strip).anyMatch(line::equals), () -> "this machine's copy has the master's " + field);
        }
        assertTrue(laptop.contains("name: " + clusterName() + "-admin"), "rebuilt (gpuctl's names), not copied\n" + laptop);
        assertNotEquals(laptopBefore, Files.readString(localKubeconfig()));

        JsonNode doc = verifyJson(0);
        JsonNode apiserver = cert(host(doc, master), "apiserver");
        assertEquals("ok", apiserver.path("standing").asText());
        assertTrue(apiserver.path("daysLeft").asLong() >= 364, apiserver::toString);
        assertEquals(200, apiStatusWithLaptopKubeconfig(), "this machine's kubeconfig still reaches the API server");
    }

    @Test @Order(4) void renewingTwiceIsSafe() throws Exception {
        String served = servedSerial();
        Gpuctl.Run again = Gpuctl.run("certs", "renew", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertNotEquals(served, servedSerial(), "renewed and restarted again");
        assertEquals(fileSerial(), servedSerial());
        verifyJson(0);
        assertEquals(200, apiStatusWithLaptopKubeconfig());
        Gpuctl.Run dry = Gpuctl.run("certs", "renew", "--dry-run", inventory.toString());
        assertEquals(0, dry.code(), dry::toString);
        assertEquals(fileSerial(), servedSerial(), "a dry run changes nothing");
    }

    static Path localKubeconfig() {
        return inventory.getParent().resolve(".gpuctl").resolve(clusterName()).resolve("admin.conf");
    }

    static String clusterName() {
        try {
            Map<String, Object> inv = new Yaml().load(Files.readString(inventory));
            @SuppressWarnings("unchecked") Map<String, Object> cluster = (Map<String, Object>) inv.get("cluster");
            return cluster.get("name").toString();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** GET /api/v1/nodes with the laptop kubeconfig's CA, client certificate and key, from this JVM. */
    @SuppressWarnings("unchecked")
    static int apiStatusWithLaptopKubeconfig() throws Exception {
        Map<String, Object> kc = new Yaml().load(Files.readString(localKubeconfig()));
        Map<String, Object> cluster = (Map<String, Object>) ((Map<String, Object>) ((java.util.List<Object>) kc.get("clusters")).get(0)).get("cluster");
        Map<String, Object> user = (Map<String, Object>) ((Map<String, Object>) ((java.util.List<Object>) kc.get("users")).get(0)).get("user");
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        Certificate ca = cf.generateCertificate(new ByteArrayInputStream(Base64.getDecoder().decode(cluster.get("certificate-authority-data").toString())));
        Certificate client = cf.generateCertificate(new ByteArrayInputStream(Base64.getDecoder().decode(user.get("client-certificate-data").toString())));
        String keyPem = new String(Base64.getDecoder().decode(user.get("client-key-data").toString()), StandardCharsets.US_ASCII);
        byte[] der = Base64.getMimeDecoder().decode(keyPem.replaceAll("-----[A-Z ]+-----", "").strip());
        var key = KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(der));
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("client", key, new char[0], new Certificate[] {client});
        KeyStore ts = KeyStore.getInstance("PKCS12");
        ts.load(null, null);
        ts.setCertificateEntry("ca", ca);
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, new char[0]);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ts);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        HttpClient http = HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(10)).build();
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(cluster.get("server") + "/api/v1/nodes"))
            .timeout(Duration.ofSeconds(20)).GET().build(), HttpResponse.BodyHandlers.ofString());
        return r.statusCode();
    }
}
