package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Manifest URLs: plain http and credentials need a sha256, given as { url, sha256 } beside the URL. */
class ManifestChecksumTest {
    static final String SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    static Inventory parse(String cluster) {
        return InventoryLoader.parse("inv.yaml", yaml(cluster), Path.of("/srv/lab"), Map.of("HOME", "/home/ops"));
    }

    static String yaml(String cluster) {
        return "cluster:\n  name: gpu-lab\n  kubernetesVersion: \"1.35\"\n" + cluster
            + "nodes: [{ name: m, address: 10.0.0.1, role: master }]\n";
    }

    static List<String> errors(String cluster) {
        InventoryException e = assertThrows(InventoryException.class,
            () -> InventoryLoader.parse("inv.yaml", yaml(cluster), Path.of("/srv/lab"), Map.of("HOME", "/home/ops")));
        return e.errors().stream().map(InventoryError::format).toList();
    }

    @Test void plainHttpAndCredentialsAreRefusedAtLoadWithFileLineColumn() {
        assertEquals(List.of(
            "inv.yaml:4:16: cluster.cniManifest: a plain http:// URL is refused without a sha256 (write { url: ..., sha256: ... }"
                + " with the manifest's sha256sum, or use an https:// URL without credentials)",
            "inv.yaml:6:15: cluster.devicePlugin.manifest: a URL with credentials in it (user:password@) is refused without a sha256"
                + " (write { url: ..., sha256: ... } with the manifest's sha256sum, or use an https:// URL without credentials)"),
            errors("""
                  cniManifest: http://mirror.lab/flannel.yml
                  devicePlugin:
                    manifest: https://ci:t0ken@mirror.lab/plugin.yml
                """));
    }

    @Test void aSha256BesideTheUrlLetsThemThroughAndIsKept() {
        Cluster c = parse("""
              cniManifest: { url: "http://mirror.lab/flannel.yml", sha256: %s }
              devicePlugin:
                manifest: { url: "https://ci:t0ken@mirror.lab/plugin.yml", sha256: %s }
            """.formatted(SHA.toUpperCase(), SHA)).cluster();
        assertEquals(ManifestRef.ofUrl("http://mirror.lab/flannel.yml", SHA), c.cniManifest());
        assertEquals(ManifestRef.ofUrl("https://ci:t0ken@mirror.lab/plugin.yml", SHA), c.devicePlugin().manifest());
        assertEquals(ManifestRef.ofUrl("https://mirror.lab/x.yml"),
            parse("  cniManifest: https://mirror.lab/x.yml\n").cluster().cniManifest(), "https needs no sha256");
    }

    @Test void theMappingFormIsChecked() {
        assertEquals(List.of(
            "inv.yaml:4:54: cluster.cniManifest.sha256: 'abc' is not a sha256 (expected 64 hex digits, as sha256sum prints them)",
            "inv.yaml:4:59: unknown key 'sha1' in cluster.cniManifest (expected one of: url, sha256)"),
            errors("  cniManifest: { url: \"https://a.lab/x.yml\", sha256: abc, sha1: x }\n"));
        assertEquals(List.of("inv.yaml:4:16: missing required key 'sha256' in cluster.cniManifest (expected the sha256 of the manifest's content (64 hex digits))"),
            errors("  cniManifest: { url: \"http://a.lab/x.yml\" }\n"));
    }

    @Test void urlsThatNeedAChecksum() {
        assertEquals("a plain http:// URL", ManifestReader.urlNeedsChecksum("HTTP://a/b").orElseThrow());
        assertEquals("a URL with credentials in it (user:password@)", ManifestReader.urlNeedsChecksum("https://u@a/b").orElseThrow());
        assertEquals(java.util.Optional.empty(), ManifestReader.urlNeedsChecksum("https://a/b?x=@y"));
    }
}
