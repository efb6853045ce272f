package dev.gpuctl.hostconf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/** Merging kubeadm's admin.conf into a user's kubeconfig: the user's other entries and settings stay. */
class KubeconfigTest {
    /** kubeadm's admin.conf, as kubeadm init writes it (data shortened). */
    static final String ADMIN = """
        apiVersion: v1
        clusters:
        - cluster:
            certificate-authority-data: Q0FDRVJU
            server: https://10.213.1.10:6443
          name: kubernetes
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
            client-certificate-data: Q0VSVA==
            client-key-data: S0VZ
        """;

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
        Kubeconfig.Merged m = Kubeconfig.merge(USERS, ADMIN, "gpu-lab", "gpu-lab");
        Map<String, Object> doc = yaml(m.text());
        assertEquals(List.of("prod", "gpu-lab"), Kubeconfig.contexts(m.text()));
        assertEquals(Map.of("cluster", "prod", "user", "me", "namespace", "web"), entry(doc, "contexts", "prod").get("context"));
        assertEquals(Map.of("token", "abc"), entry(doc, "users", "me").get("user"));
        assertEquals(2, ((List<?>) doc.get("clusters")).size(), "the old gpu-lab cluster entry is replaced, not doubled");
        assertEquals(Map.of("certificate-authority-data", "Q0FDRVJU", "server", "https://10.213.1.10:6443"), entry(doc, "clusters", "gpu-lab").get("cluster"));
        assertEquals(Map.of("client-certificate-data", "Q0VSVA==", "client-key-data", "S0VZ"), entry(doc, "users", "gpu-lab-admin").get("user"));
        assertEquals(Map.of("cluster", "gpu-lab", "user", "gpu-lab-admin"), entry(doc, "contexts", "gpu-lab").get("context"));
        assertEquals("prod", doc.get("current-context"), "the user's current context is kept");
        assertFalse(m.setCurrentContext());
        assertEquals(Map.of("colors", true), doc.get("preferences"));
        assertEquals(m.text(), Kubeconfig.merge(m.text(), ADMIN, "gpu-lab", "gpu-lab").text(), "merging again changes nothing");
    }

    @Test void intoNoFileItMakesAKubeconfigWhoseCurrentContextIsTheCluster() {
        Kubeconfig.Merged m = Kubeconfig.merge("", ADMIN, "gpu-lab", "lab");
        Map<String, Object> doc = yaml(m.text());
        assertEquals("Config", doc.get("kind"));
        assertEquals("lab", doc.get("current-context"));
        assertTrue(m.setCurrentContext());
        assertEquals(List.of("lab"), Kubeconfig.contexts(m.text()));
    }

    @Test void aFileThatIsNoKubeconfigIsRefusedWithWhatIsWrong() {
        assertTrue(assertThrows(Kubeconfig.Invalid.class, () -> Kubeconfig.merge("a: [b", ADMIN, "gpu-lab", "gpu-lab"))
            .getMessage().startsWith("the kubeconfig file is not valid YAML"));
        assertEquals("the kubeconfig file is not a kubeconfig (kind: Pod, expected Config)",
            assertThrows(Kubeconfig.Invalid.class, () -> Kubeconfig.merge("kind: Pod\n", ADMIN, "gpu-lab", "gpu-lab")).getMessage());
        assertEquals("the kubeconfig file: 'contexts' is not a list",
            assertThrows(Kubeconfig.Invalid.class, () -> Kubeconfig.merge("contexts: 3\n", ADMIN, "gpu-lab", "gpu-lab")).getMessage());
        assertEquals("the master's admin.conf does not hold exactly one entry under 'users' with a 'user'",
            assertThrows(Kubeconfig.Invalid.class, () -> Kubeconfig.merge("", "kind: Config\nclusters: [{name: a, cluster: {}}]\n", "gpu-lab", "gpu-lab")).getMessage());
    }
}
