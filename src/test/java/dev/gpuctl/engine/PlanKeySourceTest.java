package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.inventory.SshSettings;
import dev.gpuctl.inventory.SshSettings.KeyOrigin;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The plan says per host which keys log it in, in the order they are offered. */
class PlanKeySourceTest {
    static SshSettings key(String file, KeyOrigin origin) {
        return new SshSettings("ops", 22, Path.of(file), Path.of("/h/.ssh/known_hosts"), Optional.empty(), Optional.empty(), origin);
    }

    @Test void eachOriginReads() {
        assertEquals("key /keys/lab", PlanText.keySource(key("/keys/lab", KeyOrigin.INVENTORY)));
        assertEquals("key /h/.ssh/lab (from ~/.ssh/config)", PlanText.keySource(key("/h/.ssh/lab", KeyOrigin.SSH_CONFIG)));
        assertEquals("keys from the ssh-agent, then /h/.ssh/id_ed25519, id_ecdsa, id_rsa",
            PlanText.keySource(key("/h/.ssh/id_ed25519", KeyOrigin.DEFAULT)));
    }

    @Test void theConnectionsSectionShowsIt(@TempDir Path home) throws Exception {
        Files.createDirectories(home.resolve(".ssh"));
        Files.writeString(home.resolve(".ssh/config"), "Host gpu1\n  IdentityFile ~/.ssh/lab\n");
        Path inv = Files.writeString(home.resolve("inventory.yaml"), """
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
              - { name: w1, address: gpu1, role: worker }
            """);
        String text = PlanText.connections(InventoryLoader.load(inv, Map.of("HOME", home.toString())));
        assertTrue(text.contains("m   ssh root@10.0.0.1:22 (root), keys from the ssh-agent, then " + home + "/.ssh/id_ed25519, id_ecdsa, id_rsa\n"), text);
        assertTrue(text.contains("w1  ssh root@gpu1:22 (root), key " + home + "/.ssh/lab (from ~/.ssh/config)\n"), text);
    }
}
