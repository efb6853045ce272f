package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Masters (1, 3 or 5) and cluster.controlPlaneEndpoint: read, each mistake at its FILE:LINE:COLUMN. */
class HaInventoryTest {
    static final String THREE = """
        nodes:
          - { name: m1, address: 10.0.0.11, role: master }
          - { name: m2, address: 10.0.0.12, role: master }
          - { name: m3, address: 10.0.0.13, role: master }
          - { name: w1, address: 10.0.0.21, role: worker }
        """;

    static Inventory parse(String endpoint, String nodes) {
        String cluster = "cluster: { name: c, kubernetesVersion: \"1.35\"" + (endpoint.isEmpty() ? "" : ", controlPlaneEndpoint: " + endpoint) + " }\n";
        return InventoryLoader.parse("inv.yaml", cluster + nodes, Path.of("/tmp"), Map.of("HOME", "/root"));
    }

    static List<String> errors(String endpoint, String nodes) {
        InventoryException e = assertThrows(InventoryException.class, () -> parse(endpoint, nodes));
        return e.errors().stream().map(InventoryError::format).toList();
    }

    @Test void threeMastersBehindAVip() {
        Inventory inv = parse("{ vip: 10.0.0.100 }", THREE);
        assertEquals(List.of("m1", "m2", "m3"), inv.masters().stream().map(Node::name).toList());
        assertEquals("m1", inv.master().name());
        assertEquals(List.of("w1"), inv.workers().stream().map(Node::name).toList());
        assertTrue(inv.highlyAvailable());
        ControlPlaneEndpoint e = inv.controlPlaneEndpoint();
        assertEquals(new ControlPlaneEndpoint(ControlPlaneEndpoint.Kind.VIP, "10.0.0.100", 8443), e);
        assertEquals("10.0.0.100:8443", e.hostPort());
        assertEquals("https://10.0.0.100:8443", e.url());
    }

    @Test void aSiteLoadBalancer() {
        ControlPlaneEndpoint e = parse("{ address: API.Lab.Example, port: 443 }", THREE).controlPlaneEndpoint();
        assertEquals(new ControlPlaneEndpoint(ControlPlaneEndpoint.Kind.ADDRESS, "api.lab.example", 443), e);
        assertEquals(6443, parse("{ address: 10.1.0.5 }", THREE).controlPlaneEndpoint().port());
        assertEquals("[fd00::5]:8443", parse("{ vip: \"fd00:0::5\" }", THREE).controlPlaneEndpoint().hostPort());
    }

    @Test void oneMasterGetsItsOwnAddressAsEndpoint() {
        Inventory inv = parse("", "nodes:\n  - { name: m1, address: 10.0.0.11, role: master }\n");
        assertFalse(inv.highlyAvailable());
        assertEquals(new ControlPlaneEndpoint(ControlPlaneEndpoint.Kind.MASTER, "10.0.0.11", 6443), inv.controlPlaneEndpoint());
        Inventory withIp = parse("", "nodes:\n  - { name: m1, address: m1.lab, nodeIp: 10.0.0.11, role: master }\n");
        assertEquals("10.0.0.11:6443", withIp.controlPlaneEndpoint().hostPort());
        // a single master may have a VIP from the start, so that it can grow without moving its clients
        assertEquals("10.0.0.100:8443", parse("{ vip: 10.0.0.100 }", "nodes:\n  - { name: m1, address: 10.0.0.11, role: master }\n")
            .controlPlaneEndpoint().hostPort());
    }

    @Test void anEvenNumberOfMasters() {
        assertEquals(List.of("inv.yaml:4:43: nodes: 2 masters, an even number (node 'm1' at line 3 is the first; expected 1, 3 or 5:"
                + " etcd needs a majority of the masters, so 2 survive no more losses than 1)"),
            errors("{ vip: 10.0.0.100 }", """
                nodes:
                  - { name: m1, address: 10.0.0.11, role: master }
                  - { name: m2, address: 10.0.0.12, role: master }
                """));
    }

    @Test void moreThanFiveMasters() {
        StringBuilder nodes = new StringBuilder("nodes:\n");
        for (int i = 1; i <= 7; i++) nodes.append("  - { name: m").append(i).append(", address: 10.0.0.1").append(i).append(", role: master }\n");
        assertEquals(List.of("inv.yaml:8:43: nodes: 7 masters, node 'm6' is the 6th (expected at most 5: each master is an etcd"
            + " member and every write waits for a majority of them)"), errors("{ vip: 10.0.0.100 }", nodes.toString()));
    }

    @Test void severalMastersNeedAnEndpoint() {
        assertEquals(List.of("inv.yaml:1:1: cluster: 3 masters need a controlPlaneEndpoint (expected controlPlaneEndpoint:"
            + " { vip: IP } for a virtual IP that gpuctl keeps on the masters, or { address: NAME_OR_IP, port: 6443 } for a"
            + " load balancer you run)"), errors("", THREE));
    }

    @Test void vipInsideThePodOrServiceNetwork() {
        assertEquals(List.of("inv.yaml:1:77: cluster.controlPlaneEndpoint.vip: 10.244.3.1 is inside cluster.podCidr 10.244.0.0/16"
            + " (expected a free address in the masters' subnet, outside the pod and service networks)"), errors("{ vip: 10.244.3.1 }", THREE));
        assertEquals(List.of("inv.yaml:1:77: cluster.controlPlaneEndpoint.vip: 10.96.0.1 is inside cluster.serviceCidr 10.96.0.0/12"
            + " (expected a free address in the masters' subnet, outside the pod and service networks)"), errors("{ vip: 10.96.0.1 }", THREE));
    }

    @Test void vipIsAHostsAddress() {
        assertEquals(List.of("inv.yaml:1:77: cluster.controlPlaneEndpoint.vip: 10.0.0.21 is node 'w1''s address (expected a free"
            + " address: keepalived moves the VIP between the masters, so no host may own it)"), errors("{ vip: 10.0.0.21 }", THREE));
        assertEquals(1, errors("{ vip: 10.0.0.99 }", THREE.replace("address: 10.0.0.13,", "address: m3.lab, nodeIp: 10.0.0.99,")).size());
    }

    @Test void endpointMistakes() {
        assertEquals(List.of("inv.yaml:1:77: cluster.controlPlaneEndpoint.vip: 'vip.lab' is not an IP address (expected a free IPv4"
            + " or IPv6 address in the masters' subnet; for a DNS name of a load balancer you run, write address: instead)"),
            errors("{ vip: vip.lab }", THREE));
        assertEquals(List.of("inv.yaml:1:98: cluster.controlPlaneEndpoint.address: both vip and address are given (expected one:"
            + " vip for a virtual IP that gpuctl keeps on the masters, address for a load balancer you run)"),
            errors("{ vip: 10.0.0.100, address: lb.lab }", THREE));
        assertEquals(List.of("inv.yaml:1:70: cluster.controlPlaneEndpoint: neither vip nor address is given (expected { vip: IP }"
            + " for a virtual IP on the masters, or { address: NAME_OR_IP, port: 6443 } for a load balancer you run)"),
            errors("{ port: 6443 }", THREE));
        assertEquals(List.of("inv.yaml:1:95: cluster.controlPlaneEndpoint.port: 6443 is the API servers' own port on the masters,"
            + " where haproxy cannot listen too (expected another port, or leave it out for 8443)"),
            errors("{ vip: 10.0.0.100, port: 6443 }", THREE));
        assertEquals(List.of("inv.yaml:1:81: cluster.controlPlaneEndpoint.address: 'lb_1' is not a valid address (expected the"
            + " load balancer's IP address or DNS name)"), errors("{ address: lb_1 }", THREE));
        assertTrue(errors("{ address: lb.lab, port: 70000 }", THREE).get(0).contains("cluster.controlPlaneEndpoint.port: port 70000 is out of range"));
        assertTrue(errors("{ adress: lb.lab }", THREE).stream().anyMatch(m -> m.equals("inv.yaml:1:72: unknown key 'adress' in"
            + " cluster.controlPlaneEndpoint (did you mean 'address'?)")));
        assertTrue(errors("10.0.0.100", THREE).get(0).contains("cluster.controlPlaneEndpoint: expected a mapping"));
    }
}
