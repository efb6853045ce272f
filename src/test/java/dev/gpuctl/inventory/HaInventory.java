package dev.gpuctl.inventory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The tests' control plane of several masters: cluster ha at 1.35, masters m1, m2, m3 (10.0.0.11-13) behind the VIP
 * 10.0.0.100, worker w1 (10.0.0.21). One text for the tests of plan (cli) and of the HA steps.
 */
public final class HaInventory {
    private HaInventory() {}

    public static final String YAML = """
        cluster: { name: ha, kubernetesVersion: "1.35", controlPlaneEndpoint: { vip: 10.0.0.100 } }
        ssh: { identityFile: /dev/null }
        nodes:
          - { name: m1, address: 10.0.0.11, role: master }
          - { name: m2, address: 10.0.0.12, role: master }
          - { name: m3, address: 10.0.0.13, role: master }
          - { name: w1, address: 10.0.0.21, role: worker }
        """;

    /** {@link #YAML} written to {@code dir}/inventory.yaml. */
    public static Path write(Path dir) throws IOException {
        return Files.writeString(dir.resolve("inventory.yaml"), YAML);
    }

    /** {@link #YAML} written to {@code dir} and loaded. */
    public static Inventory load(Path dir) throws IOException {
        return InventoryLoader.load(write(dir), Map.of());
    }
}
