package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A local file given as a manifest is checked at load: a kubeconfig, a document without kind, a private key are
 * refused (FILE:LINE:COLUMN of the inventory's value, the manifest's line, exit 2); the plan shows a manifest as its
 * objects and sha256, never its text; a URL's password is never echoed.
 */
class ManifestSafetyCliTest {
    @TempDir Path dir;

    static final String KUBECONFIG = """
        apiVersion: v1
        clusters:
        - cluster:
            certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
            server: https://10.0.0.1:6443
          name: lab
        contexts:
        - context: { cluster: lab, user: admin }
          name: admin@lab
        current-context: admin@lab
        kind: Config
        users:
        - name: admin
          user:
            token: s3cr3t-t0ken
        """;

    Path inventory(String devicePlugin) throws IOException {
        Path f = dir.resolve("inventory.yaml");
        Files.writeString(f, Files.readString(CliTest.EXAMPLE).replaceFirst("(?m)^    # manifest: .*$", "    manifest: " + devicePlugin));
        assertTrue(Files.readString(f).contains("    manifest: " + devicePlugin), "the example's devicePlugin block moved");
        return f;
    }

    /** The line and column of the devicePlugin.manifest value in the inventory, as the loader names them. */
    static String valueAt(Path inv) throws IOException {
        List<String> lines = Files.readAllLines(inv);
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("    manifest: ")) return inv + ":" + (i + 1) + ":" + ("    manifest: ".length() + 1);
        }
        throw new AssertionError("no manifest line");
    }

    @Test void aKubeconfigGivenAsTheDevicePluginManifestIsExit2AtTheInventorysValue() throws IOException {
        Path kube = dir.resolve("config");
        Files.writeString(kube, KUBECONFIG);
        Path inv = inventory(kube.toString());
        for (String cmd : List.of("plan", "bootstrap")) {
            CliTest.Run r = CliTest.run(cmd, inv.toString());
            assertEquals(2, r.code(), r::toString);
            assertTrue(r.err().contains(valueAt(inv) + ": cluster.devicePlugin.manifest: manifest " + kube
                + ", document 1 (line 1) is a kubeconfig (kind: Config"), r::toString);
            assertFalse((r.out() + r.err()).contains("s3cr3t-t0ken"), r::toString);
            assertFalse(r.err().contains("Exception") || r.err().contains("\tat "), r::toString);
        }
    }

    @Test void aPrivateKeyOrADocumentWithoutKindIsRefused() throws IOException {
        Path key = dir.resolve("plugin.yml");
        Files.writeString(key, "apiVersion: v1\nkind: Secret\nmetadata: { name: k }\nstringData:\n  id: |\n    -----BEGIN OPENSSH PRIVATE KEY-----\n    b3BlbnNzaC1rZXktdjEAAAAA\n    -----END OPENSSH PRIVATE KEY-----\n");
        Path inv = inventory(key.toString());
        CliTest.Run r = CliTest.run("plan", inv.toString());
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains(valueAt(inv) + ": cluster.devicePlugin.manifest: manifest " + key
            + " line 6, column 5: holds a private key (-----BEGIN OPENSSH PRIVATE KEY-----)"), r::toString);
        assertFalse((r.out() + r.err()).contains("b3BlbnNzaC1rZXktdjEAAAAA"), r::toString);

        Files.writeString(key, "apiVersion: v1\nmetadata: { name: k }\n");
        r = CliTest.run("plan", inv.toString());
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains(valueAt(inv) + ": cluster.devicePlugin.manifest: manifest " + key
            + ", document 1 (line 1) has no kind"), r::toString);
    }

    @Test void thePlanShowsAManifestAsItsObjectsAndSha256NeverItsText() throws IOException {
        Path plugin = dir.resolve("plugin.yml");
        String text = Files.readString(Path.of("testbed/manifests/nvidia-device-plugin-v0.20.0.yml"))
            + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: site-notes, namespace: kube-system }\ndata: { note: only-in-the-file }\n";
        Files.writeString(plugin, text);
        String sha = sha256(text);
        Path inv = inventory(plugin.toString());
        CliTest.Run r = CliTest.run("plan", "--details", inv.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains(": a manifest of 2 objects, sha256 " + sha + " (its text is not shown):\n"
            + "            DaemonSet/kube-system/nvidia-device-plugin-daemonset\n"
            + "            ConfigMap/kube-system/site-notes\n"), r::toString);
        assertFalse(r.out().contains("only-in-the-file"), r::toString);

        CliTest.Run json = CliTest.run("plan", "--json", inv.toString());
        assertEquals(0, json.code(), json::toString);
        assertFalse(json.out().contains("only-in-the-file"), json::toString);
        JsonNode doc = new ObjectMapper().readTree(json.out());
        List<JsonNode> writes = new ArrayList<>();
        doc.findParents("objects").forEach(writes::add);
        assertEquals(1, writes.size(), "one manifest write (the master's device plugin)");
        assertEquals("DaemonSet/kube-system/nvidia-device-plugin-daemonset\nConfigMap/kube-system/site-notes", writes.get(0).get("objects").asText());
        assertEquals(sha, writes.get(0).get("sha256").asText());
        assertFalse(writes.get(0).has("content"));
        assertEquals(List.of(), PlanCliTest.errors(doc));
    }

    @Test void aUrlsPasswordIsMaskedInLoadErrors() throws IOException {
        Path inv = inventory("\"https://ci:s3cret@mirror lab/plugin.yml\"");
        CliTest.Run r = CliTest.run("plan", inv.toString());
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("cluster.devicePlugin.manifest: 'https://ci:***@mirror lab/plugin.yml' is not a valid URL"), r::toString);
        assertFalse(r.err().contains("s3cret"), r::toString);
    }

    static String sha256(String text) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
