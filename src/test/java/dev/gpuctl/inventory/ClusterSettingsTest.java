package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** cluster.controlPlaneSchedulable and calico's operator manifest (cluster.cniOperatorManifest). */
class ClusterSettingsTest {
    @TempDir Path dir;

    Inventory parse(String cluster) {
        return InventoryLoader.parse("inv.yaml", "cluster:\n" + cluster + "nodes: [{ name: m, address: 10.0.0.1, role: master }]\n",
            dir, Map.of("HOME", "/home/ops"));
    }

    List<String> errors(String cluster) {
        InventoryException e = assertThrows(InventoryException.class, () -> parse(cluster));
        return e.errors().stream().map(InventoryError::format).toList();
    }

    static final String HEAD = "  name: lab\n  kubernetesVersion: \"1.35\"\n";

    @Test void controlPlaneSchedulableDefaultsToFalseAndTakesOnlyABoolean() {
        assertFalse(parse(HEAD).cluster().controlPlaneSchedulable());
        assertTrue(parse(HEAD + "  controlPlaneSchedulable: true\n").cluster().controlPlaneSchedulable());
        assertEquals(List.of("inv.yaml:4:28: cluster.controlPlaneSchedulable: expected true or false, got a string ('maybe')"),
            errors(HEAD + "  controlPlaneSchedulable: maybe\n"));
    }

    @Test void calicoByUrlTakesTheOperatorBesideTheCustomResources() {
        Cluster c = parse(HEAD + "  cni: calico\n").cluster();
        assertEquals("https://raw.githubusercontent.com/projectcalico/calico/v3.32.1/manifests/tigera-operator.yaml",
            c.cniOperatorManifest().toString());
        assertNull(parse(HEAD).cluster().cniOperatorManifest(), "flannel has no operator");
    }

    @Test void aLocalCustomResourcesFileTakesTheOperatorBesideIt() throws IOException {
        Files.createDirectories(dir.resolve("calico"));
        Files.writeString(dir.resolve("calico/custom-resources.yaml"), "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: { name: default }\n");
        Files.writeString(dir.resolve("calico/tigera-operator.yaml"), "apiVersion: v1\nkind: List\nitems: [ { apiVersion: v1, kind: Namespace, metadata: { name: tigera-operator } } ]\n");
        Cluster c = parse(HEAD + "  cni: calico\n  cniManifest: calico/custom-resources.yaml\n").cluster();
        assertEquals(ManifestRef.ofFile(dir.resolve("calico/tigera-operator.yaml")), c.cniOperatorManifest());
    }

    @Test void aLocalCustomResourcesFileWithoutTheOperatorIsRefusedAtLoadWithTheFix() throws IOException {
        Files.writeString(dir.resolve("custom-resources.yaml"), "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: { name: default }\n");
        List<String> errors = errors(HEAD + "  cni: calico\n  cniManifest: custom-resources.yaml\n");
        assertEquals(1, errors.size(), errors::toString);
        String e = errors.get(0);
        assertTrue(e.startsWith("inv.yaml:5:16: cluster.cniManifest: Calico's custom resources " + dir.resolve("custom-resources.yaml")
            + " have no tigera-operator.yaml beside them"), e);
        assertTrue(e.contains("no matches for kind Installation") && e.contains("set cniOperatorManifest"), e);
    }

    @Test void anOperatorManifestGivenApartIsUsedWhereverItIs() throws IOException {
        Files.writeString(dir.resolve("custom-resources.yaml"), "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: { name: default }\n");
        Files.createDirectories(dir.resolve("vendor"));
        Files.writeString(dir.resolve("vendor/operator-v3.32.1.yaml"), "apiVersion: v1\nkind: List\nitems: [ { apiVersion: v1, kind: Namespace, metadata: { name: tigera-operator } } ]\n");
        Cluster c = parse(HEAD + "  cni: calico\n  cniManifest: custom-resources.yaml\n"
            + "  cniOperatorManifest: vendor/operator-v3.32.1.yaml\n").cluster();
        assertEquals(ManifestRef.ofFile(dir.resolve("vendor/operator-v3.32.1.yaml")), c.cniOperatorManifest());
        String sha = "a".repeat(64);
        Cluster u = parse(HEAD + "  cni: calico\n  cniManifest: custom-resources.yaml\n"
            + "  cniOperatorManifest: { url: \"https://mirror.lab/calico/tigera-operator.yaml\", sha256: " + sha + " }\n").cluster();
        assertEquals(ManifestRef.ofUrl("https://mirror.lab/calico/tigera-operator.yaml", sha), u.cniOperatorManifest());
    }

    @Test void aMissingOperatorFileIsNamedAndFlannelTakesNoOperator() throws IOException {
        Files.writeString(dir.resolve("custom-resources.yaml"), "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: { name: default }\n");
        List<String> missing = errors(HEAD + "  cni: calico\n  cniManifest: custom-resources.yaml\n  cniOperatorManifest: op.yaml\n");
        assertEquals(1, missing.size(), missing::toString);
        assertTrue(missing.get(0).startsWith("inv.yaml:6:24: cluster.cniOperatorManifest: file " + dir.resolve("op.yaml") + " does not exist"),
            missing::toString);
        assertEquals(List.of("inv.yaml:4:24: cluster.cniOperatorManifest: only calico has an operator manifest (expected no"
            + " cniOperatorManifest with cni: flannel)"), errors(HEAD + "  cniOperatorManifest: https://mirror.lab/op.yaml\n"));
    }

    @Test void checksummedCustomResourcesNeedAChecksummedOperator() {
        String sha = "b".repeat(64);
        List<String> errors = errors(HEAD + "  cni: calico\n  cniManifest: { url: \"https://mirror.lab/calico/custom-resources.yaml\", sha256: "
            + sha + " }\n");
        assertEquals(1, errors.size(), errors::toString);
        assertTrue(errors.get(0).contains("cluster.cniManifest: the custom resources are pinned by sha256, but the Tigera operator"
            + " beside them (https://mirror.lab/calico/tigera-operator.yaml) would be fetched unchecked"), errors::toString);

        // the operator's URL, derived from one with a password, is shown with the password masked
        List<String> masked = errors(HEAD + "  cni: calico\n  cniManifest: { url: \"https://ci:s3cret@mirror.lab/calico/custom-resources.yaml\","
            + " sha256: " + sha + " }\n");
        assertTrue(masked.get(0).contains("beside them (https://ci:***@mirror.lab/calico/tigera-operator.yaml) would be fetched unchecked"
            + " (expected cluster.cniOperatorManifest: { url: https://ci:***@mirror.lab/calico/tigera-operator.yaml,"), masked::toString);
        assertFalse(String.join("\n", masked).contains("s3cret"), masked::toString);
    }
}
