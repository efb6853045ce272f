package dev.gpuctl.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryException;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.net.CidrCheck.LabeledRange;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CidrCheckTest {
    private static LabeledRange r(String what, String cidr, String source) {
        return new LabeledRange(what, Cidr.parse(cidr).orElseThrow(), source);
    }

    private static List<String> messages(LabeledRange... ranges) {
        return CidrCheck.check(List.of(ranges)).stream().map(CidrCheck.Conflict::message).toList();
    }

    private static final LabeledRange POD = r(CidrCheck.POD_CIDR, "10.244.0.0/16", "cluster.podCidr");
    private static final LabeledRange SVC = r(CidrCheck.SERVICE_CIDR, "10.96.0.0/12", "cluster.serviceCidr");

    @Test void podCidrContainingANodeAddress() {
        assertEquals(List.of("podCidr 10.244.0.0/16 (cluster.podCidr) overlaps 10.244.3.7/32 (node worker-2 address)"),
            messages(POD, SVC, r(CidrCheck.NODE_ADDRESS, "10.244.3.7/32", "node worker-2 address")));
    }

    @Test void containmentBothWays() {
        assertEquals(List.of(
                "podCidr 10.244.0.0/16 (cluster.podCidr) overlaps 10.0.0.0/8 (cluster.siteNetworks[0])",
                "podCidr 10.244.0.0/16 (cluster.podCidr) overlaps 10.244.128.0/24 (worker-1: ip route)",
                "serviceCidr 10.96.0.0/12 (cluster.serviceCidr) overlaps 10.0.0.0/8 (cluster.siteNetworks[0])"),
            messages(POD, SVC, r(CidrCheck.SITE_NETWORK, "10.0.0.0/8", "cluster.siteNetworks[0]"),
                r(CidrCheck.ROUTE, "10.244.128.0/24", "worker-1: ip route")));
    }

    @Test void podAndServiceMustNotOverlapEachOther() {
        assertEquals(List.of("podCidr 10.96.0.0/16 (cluster.podCidr) overlaps 10.96.0.0/12 (cluster.serviceCidr)"),
            messages(r(CidrCheck.POD_CIDR, "10.96.0.0/16", "cluster.podCidr"), SVC));
    }

    @Test void nodesInsideSiteNetworksAndOverlappingSiteNetworksAreFine() {
        assertEquals(List.of(), messages(POD, SVC,
            r(CidrCheck.SITE_NETWORK, "172.16.0.0/16", "cluster.siteNetworks[0]"),
            r(CidrCheck.SITE_NETWORK, "172.16.10.0/24", "cluster.siteNetworks[1]"),
            r(CidrCheck.NODE_ADDRESS, "172.16.10.90/32", "node master"),
            r(CidrCheck.INTERFACE_ADDRESS, "172.16.10.90/24", "master: ip addr eth0"),
            r(CidrCheck.DOCKER_BRIDGE, "172.17.0.0/16", "worker-1: docker0"),
            r(CidrCheck.DOCKER_ADDRESS_POOL, "172.16.0.0/12", "worker-1: daemon.json default-address-pools")));
    }

    @Test void dockerRangesAgainstClusterRanges() {
        assertEquals(List.of("podCidr 192.168.0.0/16 (cluster.podCidr) overlaps 192.168.0.0/20 (worker-1: daemon.json)"),
            messages(r(CidrCheck.POD_CIDR, "192.168.0.0/16", "cluster.podCidr"),
                r(CidrCheck.DOCKER_ADDRESS_POOL, "192.168.0.0/20", "worker-1: daemon.json")));
    }

    @Test void adjacentRangesDoNotOverlap() {
        assertEquals(List.of(), messages(r(CidrCheck.POD_CIDR, "10.244.0.0/16", "a"),
            r(CidrCheck.SITE_NETWORK, "10.243.0.0/16", "b"), r(CidrCheck.SITE_NETWORK, "10.245.0.0/16", "c"),
            r(CidrCheck.NODE_ADDRESS, "10.243.255.255/32", "d"), r(CidrCheck.NODE_ADDRESS, "10.245.0.0/32", "e")));
        assertEquals(1, messages(r(CidrCheck.POD_CIDR, "10.244.0.0/16", "a"), r(CidrCheck.NODE_ADDRESS, "10.244.255.255/32", "b")).size());
        assertEquals(1, messages(r(CidrCheck.POD_CIDR, "10.244.0.0/16", "a"), r(CidrCheck.NODE_ADDRESS, "10.244.0.0/32", "b")).size());
    }

    @Test void defaultRouteOverlapsEverything() {
        assertEquals(List.of("podCidr 10.244.0.0/16 (cluster.podCidr) overlaps 0.0.0.0/0 (master: default route)"),
            messages(POD, r(CidrCheck.ROUTE, "0.0.0.0/0", "master: default route")));
    }

    @Test void ipv4AndIpv6NeverOverlap() {
        assertEquals(List.of(), messages(POD, r(CidrCheck.SITE_NETWORK, "::/0", "v6"), r(CidrCheck.ROUTE, "::ffff:0:0/96", "mapped")));
    }

    @Test void theClusterRangeIsNamedFirstWhateverTheOrder() {
        assertEquals(List.of("podCidr 10.244.0.0/16 (cluster.podCidr) overlaps 10.244.9.0/24 (worker-1: ip route)"),
            messages(r(CidrCheck.ROUTE, "10.244.9.0/24", "worker-1: ip route"), POD));
    }

    @Test void theRuleIsAboutKinds() {
        assertTrue(CidrCheck.mustNotOverlap(POD, r(CidrCheck.ROUTE, "10.0.0.0/8", "x")));
        assertTrue(CidrCheck.mustNotOverlap(r(CidrCheck.DOCKER_BRIDGE, "10.0.0.0/8", "x"), SVC));
        assertFalse(CidrCheck.mustNotOverlap(r(CidrCheck.ROUTE, "10.0.0.0/8", "x"), r(CidrCheck.INTERFACE_ADDRESS, "10.0.0.1/8", "y")));
        assertFalse(CidrCheck.mustNotOverlap(r(CidrCheck.NODE_ADDRESS, "10.0.0.1/32", "x"), r(CidrCheck.SITE_NETWORK, "10.0.0.0/8", "y")));
    }

    static final String CLASHING = """
        cluster: { name: lab, kubernetesVersion: "1.35", podCidr: 172.16.0.0/16, siteNetworks: [172.16.0.0/12, "fd00::/8"] }
        nodes:
          - { name: master, address: 172.16.10.90, role: master }
          - { name: worker-1, address: "fd00::10", role: worker }
          - { name: worker-2, address: gpu2.example.com, role: worker }
        """;

    @Test void staticRangesOfAnInventory() {
        Inventory inv = InventoryLoader.parse("inv.yaml", CLASHING.replace("podCidr: 172.16.0.0/16", "podCidr: 10.244.0.0/16"),
            Path.of("/srv"), Map.of("HOME", "/root"));
        List<LabeledRange> ranges = inv.staticRanges();
        assertEquals(List.of(
                "podCidr 10.244.0.0/16 (cluster.podCidr)",
                "serviceCidr 10.96.0.0/12 (cluster.serviceCidr)",
                "node address 172.16.10.90/32 (node master address)",
                "node address fd00::10/128 (node worker-1 address)",
                "site network 172.16.0.0/12 (cluster.siteNetworks[0])",
                "site network fd00::/8 (cluster.siteNetworks[1])"),
            ranges.stream().map(LabeledRange::toString).toList());
        assertEquals(List.of(), CidrCheck.check(ranges));
    }

    /** An overlap the inventory alone shows is an error of the file, at the range's place: the loader builds no inventory. */
    @Test void aStaticOverlapIsAnInventoryErrorAtTheRangesPlace() {
        InventoryException e = assertThrows(InventoryException.class,
            () -> InventoryLoader.parse("inv.yaml", CLASHING, Path.of("/srv"), Map.of("HOME", "/root")));
        assertEquals(List.of(
                "inv.yaml:1:59: podCidr 172.16.0.0/16 (cluster.podCidr) overlaps 172.16.10.90/32 (node master address)",
                "inv.yaml:1:59: podCidr 172.16.0.0/16 (cluster.podCidr) overlaps 172.16.0.0/12 (cluster.siteNetworks[0])"),
            e.errors().stream().map(x -> x.format().replaceAll(" \\(pick a .*", "")).toList());
    }
}
