package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.step.Facts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The VIP must be in a subnet of every master: checked on the masters' interfaces, reported at the VIP's FILE:LINE:COLUMN. */
class PreflightVipTest {
    static final String YAML = """
        cluster: { name: ha, kubernetesVersion: "1.35" }
          controlPlaneEndpoint: { vip: 10.0.0.100 }
        nodes:
          - { name: m1, address: 10.0.0.11, role: master }
          - { name: m2, address: 10.1.0.12, role: master }
          - { name: m3, address: 10.0.0.13, role: master }
          - { name: w1, address: 10.2.0.21, role: worker }
        """.replace("\" }\n  controlPlaneEndpoint: { vip: 10.0.0.100 }", "\",\n  controlPlaneEndpoint: { vip: 10.0.0.100 } }");

    static String eth(String cidr) {
        String[] p = cidr.split("/");
        return "[{\"ifname\":\"eth0\",\"addr_info\":[{\"family\":\"inet\",\"local\":\"" + p[0] + "\",\"prefixlen\":" + p[1] + "}]}]\n[]\n";
    }

    @Test void aMasterWhoseSubnetsHoldNoVipIsNamedAtTheVip(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("inventory.yaml"), YAML);
        Inventory inv = InventoryLoader.load(file, Map.of("HOME", "/root"));
        Facts facts = new Facts();
        facts.put("host.m1.ip", eth("10.0.0.11/24"), false);
        facts.put("host.m2.ip", eth("10.1.0.12/24"), false);
        facts.put("host.w1.ip", eth("10.2.0.21/24"), false);
        List<Preflight.Problem> problems = Preflight.problems(inv, inv.nodes(), facts).stream()
            .filter(p -> p.kind() == Preflight.Kind.VIP).toList();
        assertEquals(List.of(file + ":2:32: cluster.controlPlaneEndpoint.vip: m2: the VIP 10.0.0.100 is in none of this master's"
            + " subnets (eth0 10.1.0.12/24): keepalived can only hold it on a subnet the master is on (expected"
            + " cluster.controlPlaneEndpoint.vip to be a free address in the masters' subnet)"), problems.stream().map(Preflight.Problem::message).toList());
        assertEquals(List.of("m2"), problems.get(0).hosts());
        assertTrue(Preflight.checkedOn(inv, inv.node("m1").orElseThrow(), facts).contains(Preflight.Kind.VIP));
        assertTrue(!Preflight.checkedOn(inv, inv.node("w1").orElseThrow(), facts).contains(Preflight.Kind.VIP));
        assertTrue(!Preflight.checkedOn(inv, inv.node("m3").orElseThrow(), facts).contains(Preflight.Kind.VIP), "m3 was not asked");
    }

    @Test void noVipNoCheck(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("inventory.yaml"), "cluster: { name: t, kubernetesVersion: \"1.35\" }\n"
            + "nodes:\n  - { name: m1, address: 10.0.0.11, role: master }\n");
        Inventory inv = InventoryLoader.load(file, Map.of("HOME", "/root"));
        Facts facts = new Facts();
        facts.put("host.m1.ip", eth("10.9.0.11/24"), false);
        assertEquals(List.of(), Preflight.problems(inv, inv.nodes(), facts));
        assertEquals(List.of(), Preflight.checkedOn(inv, inv.node("m1").orElseThrow(), facts).stream().filter(k -> k == Preflight.Kind.VIP).toList());
    }
}
