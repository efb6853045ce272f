package dev.gpuctl.workflow;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** An inventory in a test's directory: cluster t at 1.35, master m (10.0.0.1) and the workers named (10.0.0.2, ...). */
final class TestInventory {
    private TestInventory() {}

    static Inventory of(Path dir, String... workers) throws IOException {
        StringBuilder yaml = new StringBuilder("cluster: { name: t, kubernetesVersion: \"1.35\" }\nnodes:\n"
            + "  - { name: m, address: 10.0.0.1, role: master }\n");
        for (int i = 0; i < workers.length; i++) {
            yaml.append("  - { name: ").append(workers[i]).append(", address: 10.0.0.").append(i + 2).append(", role: worker }\n");
        }
        Path f = dir.resolve("inventory.yaml");
        Files.writeString(f, yaml.toString());
        return InventoryLoader.load(f);
    }

    /** Three masters m1, m2, m3 (10.0.0.11-13) behind a VIP and the workers named (10.0.0.21, ...). */
    static Inventory ha(Path dir, String... workers) throws IOException {
        StringBuilder yaml = new StringBuilder("cluster: { name: t, kubernetesVersion: \"1.35\", controlPlaneEndpoint: { vip: 10.0.0.100 } }\n"
            + "nodes:\n");
        for (int i = 1; i <= 3; i++) yaml.append("  - { name: m").append(i).append(", address: 10.0.0.1").append(i).append(", role: master }\n");
        for (int i = 0; i < workers.length; i++) {
            yaml.append("  - { name: ").append(workers[i]).append(", address: 10.0.0.2").append(i + 1).append(", role: worker }\n");
        }
        Path f = dir.resolve("inventory.yaml");
        Files.writeString(f, yaml.toString());
        return InventoryLoader.load(f);
    }
}
