package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryError;
import dev.gpuctl.inventory.InventoryException;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Probe;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** storage.nfs.server outside the inventory (a NAS): only the clients are set up, the exports proven by test mounts. */
class NfsExternalTest {
    static Inventory inv(String server) {
        return InventoryLoader.parse("inv.yaml", """
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
              - { name: w1, address: 10.0.0.2, role: worker }
            storage:
              nfs:
                server: %s
                exports: [ { path: /vol/data, readOnly: true }, { path: /vol/ckpt, rootSquash: true } ]
            """.formatted(server), Path.of("/srv/lab"), Map.of("HOME", "/home/ops"));
    }

    @Test void anAddressOutsideTheNodesIsAnExternalServerThatNoStepConfigures() {
        Inventory inv = inv("10.0.5.20");
        assertTrue(inv.nfs().orElseThrow().external());
        assertEquals("10.0.5.20", inv.nfs().orElseThrow().address(inv));
        for (var n : inv.nodes()) assertFalse(new NfsServerStep().runsOn(new HostContext(inv, n)), n.name());
        HostContext w1 = new HostContext(inv, inv.node("w1").orElseThrow());
        assertTrue(new NfsClientStep().runsOn(w1));
        List<String> probes = new NfsClientStep().verify(w1).stream().map(Probe::what).toList();
        assertTrue(probes.contains("mounts 10.0.5.20:/vol/data, a write is refused (read-only)"), probes::toString);
        assertTrue(probes.contains("mounts 10.0.5.20:/vol/ckpt, a write succeeds or root is squashed"), probes::toString);
        assertTrue(inv("nas.lab.example").nfs().orElseThrow().external(), "a fully qualified name");
        assertFalse(inv("m").nfs().orElseThrow().external());
    }

    @Test void aNameThatIsNeitherANodeNorAQualifiedHostIsATypo() {
        InventoryException e = assertThrows(InventoryException.class, () -> inv("wokrer-1"));
        assertEquals(List.of("inv.yaml:7:13: storage.nfs.server: no node named 'wokrer-1' (expected the name of a node: m, w1; or, for a NAS"
            + " that is not a node, its IP address or fully qualified host name)"), e.errors().stream().map(InventoryError::format).toList());
    }
}
