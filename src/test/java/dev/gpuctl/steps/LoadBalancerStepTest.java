package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.LoadBalancer;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The vip step: on every master of a VIP endpoint only; its check compares the host's files with what it would write. */
class LoadBalancerStepTest {
    static final String IP_ADDR = "[{\"ifname\":\"host0\",\"addr_info\":[{\"family\":\"inet\",\"local\":\"10.0.0.12\",\"prefixlen\":24}]}]";

    static Inventory inventory(String endpoint) {
        return InventoryLoader.parse("inv.yaml", "cluster: { name: ha, kubernetesVersion: \"1.35\"" + endpoint + " }\nnodes:\n"
            + "  - { name: m1, address: 10.0.0.11, role: master }\n  - { name: m2, address: m2.lab, nodeIp: 10.0.0.12, role: master }\n"
            + "  - { name: m3, address: 10.0.0.13, role: master }\n  - { name: w1, address: 10.0.0.21, role: worker }\n",
            Path.of("/tmp"), Map.of("HOME", "/root"));
    }

    static HostContext on(Inventory inv, String node) { return new HostContext(inv, inv.node(node).orElseThrow()); }

    @Test void runsOnEveryMasterOfAVipEndpointOnly() {
        Inventory vip = inventory(", controlPlaneEndpoint: { vip: 10.0.0.100 }");
        LoadBalancerStep step = new LoadBalancerStep();
        assertEquals(List.of(true, true, true, false), List.of("m1", "m2", "m3", "w1").stream().map(n -> step.runsOn(on(vip, n))).toList());
        assertFalse(step.runsOn(on(inventory(", controlPlaneEndpoint: { address: lb.lab }"), "m1")));
    }

    @Test void theCheckComparesTheFilesWithWhatTheStepWrites() {
        HostContext m2 = on(inventory(", controlPlaneEndpoint: { vip: 10.0.0.100 }"), "m2");
        Facts facts = new Facts();
        String keepalived = LoadBalancer.keepalivedConf(new LoadBalancer.Vrrp("ha", "10.0.0.100", "host0", "24", false, "10.0.0.12"));
        String script = LoadBalancer.checkScript("10.0.0.12");
        String haproxy = LoadBalancer.haproxyCfg(8443, List.of(new LoadBalancer.Backend("m1", "10.0.0.11"),
            new LoadBalancer.Backend("m2", "10.0.0.12"), new LoadBalancer.Backend("m3", "10.0.0.13")));
        String sep = LoadBalancerStep.SEPARATOR + "\n";
        assertEquals(Optional.empty(), LoadBalancerStep.filesProblem(m2, IP_ADDR + "\n" + sep + keepalived + sep + script + sep + haproxy, facts));
        assertTrue(keepalived.contains("state BACKUP") && keepalived.contains("priority 100"), keepalived);
        assertEquals(Optional.of("not as gpuctl writes them: /etc/keepalived/keepalived.conf, /etc/haproxy/haproxy.cfg"),
            LoadBalancerStep.filesProblem(m2, IP_ADDR + "\n" + sep + keepalived.replace("priority 100", "priority 7") + sep + script + sep, facts));
        assertTrue(LoadBalancerStep.filesProblem(m2, IP_ADDR.replace("10.0.0.12\",\"prefixlen\":24", "10.9.0.12\",\"prefixlen\":24")
            + "\n" + sep + sep + sep, facts).orElseThrow().startsWith("the VIP 10.0.0.100 is in none of this master's subnets (host0 10.9.0.12/24)"));
    }
}
