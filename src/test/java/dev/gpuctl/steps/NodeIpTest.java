package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Which IP the cluster uses for a node, and preflight's probe that finds it for a node addressed by name. */
class NodeIpTest {
    static final Inventory INV = InventoryLoader.parse("inventory.yaml", """
        cluster: { name: t, kubernetesVersion: "1.35" }
        nodes:
          - { name: m, address: master.lab, role: master }
          - { name: w1, address: 10.0.0.2, role: worker }
          - { name: w2, address: w2.lab, role: worker, nodeIp: 10.0.0.3 }
          - { name: w3, address: w3.lab, role: worker }
        """, Path.of("."), Map.of("HOME", "/home/admin"));

    static HostContext ctx(String name) {
        return new HostContext(INV, INV.node(name).orElseThrow());
    }

    @Test void anIpAddressOrNodeIpIsUsedAsItIsAndANameWaitsForPreflight() {
        assertEquals("{{node.m.ip}}", ctx("m").nodeIp());
        assertEquals("10.0.0.2", ctx("w1").nodeIp());
        assertEquals("10.0.0.3", ctx("w2").nodeIp());
        assertEquals("{{node.w3.ip}}", ctx("w3").nodeIp());
        assertTrue(ControlPlaneStep.config(ctx("m")).contains("advertiseAddress: \"{{node.m.ip}}\""));
        assertTrue(JoinStep.config(ctx("w3")).contains("value: \"{{node.w3.ip}}\""));
    }

    @Test void preflightAsksForTheNodeIpOnlyWhereTheInventoryDoesNotGiveIt() {
        assertTrue(new PreflightStep().check(ctx("m")).stream().anyMatch(p -> p.what().startsWith("node IP")));
        assertTrue(new PreflightStep().check(ctx("w3")).stream().anyMatch(p -> p.what().startsWith("node IP")));
        assertFalse(new PreflightStep().check(ctx("w1")).stream().anyMatch(p -> p.what().startsWith("node IP")));
        assertFalse(new PreflightStep().check(ctx("w2")).stream().anyMatch(p -> p.what().startsWith("node IP")));
        assertTrue(PreflightStep.nodeIp(ctx("w3")).command().contains("getent ahostsv4 master.lab"));
    }

    @Test void theSourceAddressTowardsTheMasterIsLearnedAndAnUnresolvedNameFailsNamingTheHost() {
        Probe p = PreflightStep.nodeIp(ctx("w3"));
        String answer = "10.0.0.1\n[{\"dst\":\"10.0.0.1\",\"dev\":\"eth0\",\"prefsrc\":\"10.0.0.4\",\"flags\":[],\"uid\":0,\"cache\":[]}]\n";
        ExecResult ok = new ExecResult(0, answer, "");
        assertEquals(Optional.empty(), p.judge().apply(ok, new Facts()));
        assertEquals(Map.of("node.w3.ip", "10.0.0.4"), p.learn().apply(ok));
        ExecResult unresolved = new ExecResult(0, "unresolved\n", "");
        Optional<String> problem = p.judge().apply(unresolved, new Facts());
        assertTrue(problem.orElseThrow().startsWith("the master's address 'master.lab' does not resolve here"), problem::toString);
        assertTrue(problem.get().contains("on w3"), problem.get());
        assertEquals(Map.of(), p.learn().apply(unresolved));
        // a name that leads only to loopback (Debian's 127.0.1.1 line) gives no node IP
        ExecResult loop = new ExecResult(0, "127.0.1.1\n[{\"type\":\"local\",\"dst\":\"127.0.1.1\",\"dev\":\"lo\",\"prefsrc\":\"127.0.0.1\"}]\n", "");
        assertTrue(p.judge().apply(loop, new Facts()).isPresent());
        // on the master itself: its own address, the answer of ip route get for a local address
        ExecResult own = new ExecResult(0, "10.0.0.1\n[{\"type\":\"local\",\"dst\":\"10.0.0.1\",\"dev\":\"lo\",\"prefsrc\":\"10.0.0.1\"}]\n", "");
        assertEquals(Map.of("node.m.ip", "10.0.0.1"), PreflightStep.nodeIp(ctx("m")).learn().apply(own));
        assertTrue(PreflightStep.nodeIp(ctx("m")).judge().apply(unresolved, new Facts()).orElseThrow().startsWith("its own address 'master.lab'"));
    }

    @Test void aUnitOnItsWayUpIsStillStartingAFailedOrMaskedOneIsDefinite() {
        assertTrue(Sh.stillStarting("docker enabled active\nkubelet enabled activating\n"));
        assertTrue(Sh.stillStarting("kubelet enabled reloading\n"));
        assertFalse(Sh.stillStarting("kubelet enabled failed\n"));
        assertFalse(Sh.stillStarting("kubelet enabled activating\ndocker enabled inactive\n"));
        assertFalse(Sh.stillStarting("kubelet masked inactive\n"));
        assertFalse(Sh.stillStarting("kubelet  \n"));
        assertFalse(Sh.stillStarting("kubelet enabled active\n"));
    }
}
