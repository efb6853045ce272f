package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.text.HostConfException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A manifest is Kubernetes objects, and never a kubeconfig, a private key or cloud credentials. */
class ManifestObjectsTest {
    static String refused(String text) {
        return assertThrows(HostConfException.class, () -> ManifestObjects.objects(text, "manifest m.yml")).getMessage();
    }

    static List<String> labels(String text) {
        return ManifestObjects.objects(text, "manifest m.yml").stream().map(ManifestObjects.KubeObject::label).toList();
    }

    @Test void theObjectsOfEveryDocumentAndOfAList() {
        assertEquals(List.of("Namespace/kube-flannel", "DaemonSet/kube-system/nvidia-device-plugin-daemonset", "Pod/default/job-*",
            "ConfigMap/a", "ConfigMap/b"), labels("""
            # a comment-only document first
            ---
            apiVersion: v1
            kind: Namespace
            metadata: { name: kube-flannel }
            ---
            apiVersion: apps/v1
            kind: DaemonSet
            metadata:
              name: nvidia-device-plugin-daemonset
              namespace: kube-system
            ---
            apiVersion: v1
            kind: Pod
            metadata: { generateName: job-, namespace: default }
            ---
            apiVersion: v1
            kind: List
            items:
              - { apiVersion: v1, kind: ConfigMap, metadata: { name: a } }
              - { apiVersion: v1, kind: ConfigMap, metadata: { name: b } }
            """));
    }

    /** The pinned upstream manifests the bed serves pass, object for object. */
    @Test void theUpstreamManifestsPass() throws IOException {
        for (String f : List.of("kube-flannel-v0.28.9.yml", "calico-custom-resources.yaml", "nvidia-device-plugin-v0.20.0.yml")) {
            String text = Files.readString(Path.of("testbed/manifests", f));
            List<ManifestObjects.KubeObject> objects = ManifestObjects.objects(text, f);
            assertEquals(text.split("(?m)^kind: ").length - 1, objects.size(), f + ": " + objects);
        }
        assertTrue(labels(Files.readString(Path.of("testbed/manifests/nvidia-device-plugin-v0.20.0.yml")))
            .contains("DaemonSet/kube-system/nvidia-device-plugin-daemonset"));
    }

    @Test void aKubeconfigIsRefusedWithItsLine() {
        String kubeconfig = """
            apiVersion: v1
            clusters:
            - cluster: { certificate-authority-data: LS0tCg==, server: "https://10.0.0.1:6443" }
              name: lab
            contexts: []
            current-context: ""
            kind: Config
            users:
            - name: admin
              user: { client-certificate-data: Y2VydA==, client-key-data: a2V5 }
            """;
        String m = refused(kubeconfig);
        assertTrue(m.startsWith("manifest m.yml, document 1 (line 1) is a kubeconfig (kind: Config"), m);
        assertTrue(refused("apiVersion: v1\nkind: Config\npreferences: {}\n").contains("is a kubeconfig"));
        assertTrue(refused("---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\n---\nclusters: []\nusers: []\n")
            .startsWith("manifest m.yml, document 2 (line 6) is a kubeconfig"));
    }

    @Test void aDocumentWithoutKindOrApiVersionIsRefused() {
        assertEquals("manifest m.yml, document 2 (line 5) has no kind (expected a Kubernetes object: apiVersion, kind, metadata)",
            refused("apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\n---\napiVersion: v1\nmetadata: { name: y }\n"));
        assertEquals("manifest m.yml, document 1 (line 1) has no apiVersion (expected a Kubernetes object: apiVersion, kind, metadata)",
            refused("kind: ConfigMap\nmetadata: { name: x }\n"));
        assertTrue(refused("- a\n- b\n").contains("is not a Kubernetes object (expected a mapping with apiVersion and kind, got a list)"));
        assertTrue(refused("apiVersion: v1\nkind: List\nitems:\n  - { kind: ConfigMap }\n").startsWith("manifest m.yml, item at line 4 has no apiVersion"));
    }

    @Test void aPrivateKeyIsRefusedAtItsLineAndColumn() {
        String m = refused("""
            apiVersion: v1
            kind: Secret
            metadata: { name: tls }
            stringData:
              tls.key: |
                -----BEGIN EC PRIVATE KEY-----
                MHcCAQEEIA
                -----END EC PRIVATE KEY-----
            """);
        assertTrue(m.startsWith("manifest m.yml line 6, column 5: holds a private key (-----BEGIN EC PRIVATE KEY-----): gpuctl refuses"), m);
        assertFalse(m.contains("MHcCAQEEIA"), m);
    }

    @Test void aPrivateKeyOrCredentialsInBase64AreRefusedAtTheirValue() {
        String key = Base64.getEncoder().encodeToString("-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"
            .getBytes(StandardCharsets.US_ASCII));
        assertEquals("manifest m.yml line 5: holds a private key (-----BEGIN PRIVATE KEY-----) (base64-encoded in the value there):",
            refused("apiVersion: v1\nkind: Secret\nmetadata: { name: tls }\ndata:\n  tls.key: " + key + "\n").split(" gpuctl refuses")[0]);
        String aws = Base64.getEncoder().encodeToString("[default]\naws_access_key_id = AKIA\naws_secret_access_key = abc/def\n"
            .getBytes(StandardCharsets.US_ASCII));
        assertTrue(refused("apiVersion: v1\nkind: Secret\nmetadata: { name: aws }\ndata:\n  credentials: " + aws + "\n")
            .startsWith("manifest m.yml line 5: holds credentials (aws_secret_access_key) (base64-encoded"));
    }

    @Test void cloudCredentialsAreRefused() {
        assertTrue(refused("""
            apiVersion: v1
            kind: ConfigMap
            metadata: { name: aws }
            data:
              credentials: |
                [default]
                aws_secret_access_key = wJalrXUtnFEMI
            """).startsWith("manifest m.yml line 7, column 5: holds credentials (aws_secret_access_key)"));
        assertTrue(refused("""
            apiVersion: v1
            kind: ConfigMap
            metadata: { name: gcp }
            data:
              key.json: '{"type": "service_account", "private_key_id": "1", "private_key": "x"}'
            """).startsWith("manifest m.yml line 5, column 65: holds credentials (private_key)"), "gcp");
        assertTrue(refused("apiVersion: v1\nkind: ConfigMap\nmetadata: { name: k }\ndata: { client-key-data: abc }\n")
            .contains("holds credentials (client-key-data)"));
    }
}
