package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The plan names each GPU node's sharing and what sharing does not isolate. */
class PlanTextSharingTest {
    @Test void eachGpuNodeWithItsSharing() {
        Inventory inv = InventoryLoader.parse("inv.yaml", """
            cluster: { name: c, kubernetesVersion: "1.35", gpuSharing: { mode: time-slicing, replicas: 4 } }
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
              - { name: w1, address: 10.0.0.2, role: worker }
              - { name: w2, address: 10.0.0.3, role: worker, gpuSharing: { mode: none } }
            """, Path.of("/tmp"), Map.of("HOME", "/root"));
        assertEquals("""
            GPU sharing (each shared GPU is advertised replicas times as nvidia.com/gpu):
              w1: time-slicing × 4
              w2: none
              time-slicing and MPS share a GPU's time, not its memory or its faults: a pod can use all of a GPU's memory, \
            and one pod's fault can end the others' work on that GPU
            """, PlanText.gpuSharing(inv));
    }

    @Test void migNodesSayHowTheirGpusAreCut() {
        Inventory inv = InventoryLoader.parse("inv.yaml", """
            cluster: { name: c, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
              - { name: w1, address: 10.0.0.2, role: worker, gpuSharing: { mig: { strategy: single, profile: 1g.18gb } } }
              - { name: w2, address: 10.0.0.3, role: worker }
            """, Path.of("/tmp"), Map.of("HOME", "/root"));
        assertEquals("""
            GPU sharing (each shared GPU is advertised replicas times as nvidia.com/gpu):
              w1: MIG single 1g.18gb
              w2: none
              MIG cuts each GPU into instances with their own memory, cache and compute (single: each advertised as \
            nvidia.com/gpu; mixed: as nvidia.com/mig-PROFILE); turning MIG mode on needs the GPUs idle, and on some systems a reboot
            """, PlanText.gpuSharing(inv));
    }
}
