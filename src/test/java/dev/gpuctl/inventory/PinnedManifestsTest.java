package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The default manifests' pinned sha256s are those of the upstream files (kept unchanged in testbed/manifests). */
class PinnedManifestsTest {
    static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }

    @Test void eachPinIsTheSha256OfTheUpstreamFileAndEveryDefaultIsPinned() throws Exception {
        Map<String, Path> upstream = Map.of(
            ManifestReader.defaultCniManifest(Cni.FLANNEL), Path.of("testbed/manifests/kube-flannel-v0.28.9.yml"),
            ManifestReader.defaultCniManifest(Cni.CALICO), Path.of("testbed/manifests/calico-custom-resources.yaml"),
            ManifestReader.defaultDevicePluginManifest("v0.20.0"), Path.of("testbed/manifests/nvidia-device-plugin-v0.20.0.yml"));
        assertEquals(upstream.keySet(), ManifestReader.PINNED_SHA256.keySet());
        for (var e : upstream.entrySet()) assertEquals(sha256(e.getValue()), ManifestReader.PINNED_SHA256.get(e.getKey()), e.getKey());
    }

    @Test void theDefaultsCarryTheirPinAndAnotherPluginVersionHasNone() {
        Inventory inv = InventoryLoader.parse("inv.yaml", """
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """, Path.of("/srv/lab"), Map.of("HOME", "/home/ops"));
        assertEquals("e875824be2f552b45711dbda91af81b17eb961d00025d914d9fef18fad8f09c0", inv.cluster().cniManifest().checksum().orElseThrow());
        assertEquals("325835e0b0d9263ae673e41d878f849e880642142e9f9b15d1a3400da6a2260d",
            inv.cluster().devicePlugin().manifest().checksum().orElseThrow());
        Inventory other = InventoryLoader.parse("inv.yaml", """
            cluster: { name: gpu-lab, kubernetesVersion: "1.35", devicePlugin: { version: v0.19.0 } }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """, Path.of("/srv/lab"), Map.of("HOME", "/home/ops"));
        assertEquals(java.util.Optional.empty(), other.cluster().devicePlugin().manifest().checksum(), "no pin known for that version");
    }
}
