package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.step.Facts;
import dev.gpuctl.steps.PreflightStep;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Preflight's cross-host checks, fed facts as the hosts' probes teach them (bootstrap and verify share them). */
class PreflightTest {
    static final String YAML = """
        cluster: { name: t, kubernetesVersion: "1.35", podCidr: 10.244.0.0/16, serviceCidr: 10.96.0.0/12 }
        nodes:
          - { name: m, address: 10.0.0.1, role: master }
          - { name: w1, address: 10.0.0.2, role: worker }
          - { name: w2, address: w2.lab.example, role: worker }
        """;
    static final Inventory INV = InventoryLoader.parse("inventory.yaml", YAML, Path.of("."), Map.of("HOME", "/home/admin"));

    /** `ip -j addr` then `ip -j route` as one host answers them, in preflight's probe's form. */
    static String ip(String addr, String route) {
        return addr + "\n" + route + "\n";
    }

    static final String ETH = "{\"ifname\":\"eth0\",\"addr_info\":[{\"family\":\"inet\",\"local\":\"10.0.0.2\",\"prefixlen\":24}]}";

    static Facts facts(String host, String ipAnswer) {
        Facts f = new Facts();
        f.put("host." + host + ".ip", ipAnswer, false);
        return f;
    }

    @Test void aBootstrappedWorkersOwnCniInterfacesAndRoutesAreNotConflicts() {
        String addr = "[" + ETH + ","
            + "{\"ifname\":\"flannel.1\",\"addr_info\":[{\"family\":\"inet\",\"local\":\"10.244.1.0\",\"prefixlen\":32}]},"
            + "{\"ifname\":\"cni0\",\"addr_info\":[{\"family\":\"inet\",\"local\":\"10.244.1.1\",\"prefixlen\":24}]},"
            + "{\"ifname\":\"tunl0\",\"addr_info\":[{\"family\":\"inet\",\"local\":\"10.244.9.128\",\"prefixlen\":32}]},"
            + "{\"ifname\":\"kube-ipvs0\",\"addr_info\":[{\"family\":\"inet\",\"local\":\"10.96.0.10\",\"prefixlen\":32}]}]";
        String route = "[{\"dst\":\"10.0.0.0/24\",\"dev\":\"eth0\",\"protocol\":\"kernel\",\"prefsrc\":\"10.0.0.2\"},"
            + "{\"dst\":\"10.244.0.0/24\",\"gateway\":\"10.244.0.0\",\"dev\":\"flannel.1\",\"flags\":[\"onlink\"]},"
            + "{\"dst\":\"10.244.1.0/24\",\"dev\":\"cni0\",\"protocol\":\"kernel\",\"prefsrc\":\"10.244.1.1\"},"
            + "{\"dst\":\"10.244.2.0/24\",\"gateway\":\"10.0.0.1\",\"dev\":\"eth0\"},"
            + "{\"type\":\"blackhole\",\"dst\":\"10.244.9.128/26\",\"protocol\":\"bird\"},"
            + "{\"dst\":\"10.244.9.131\",\"dev\":\"cali1a2b3c4d5e6\",\"scope\":\"link\"}]";
        assertEquals(List.of(), Preflight.crossHost(INV, INV.nodes(), facts("w1", ip(addr, route))));
    }

    @Test void aRouteAddedAfterBootstrapIsAConflictNamingTheHostTheRouteAndTheRange() {
        String route = "[{\"dst\":\"10.96.0.0/16\",\"dev\":\"eth0\",\"scope\":\"link\"},"
            + "{\"dst\":\"10.244.0.0/16\",\"gateway\":\"10.0.0.254\",\"dev\":\"eth0\"}]";
        List<Preflight.Problem> problems = Preflight.problems(INV, INV.nodes(), facts("w1", ip("[" + ETH + "]", route)));
        assertEquals(List.of(
                "serviceCidr 10.96.0.0/12 (cluster.serviceCidr) overlaps 10.96.0.0/16 (w1: route 10.96.0.0/16 dev eth0)",
                "podCidr 10.244.0.0/16 (cluster.podCidr) overlaps 10.244.0.0/16 (w1: route 10.244.0.0/16 via 10.0.0.254 dev eth0)"),
            problems.stream().map(Preflight.Problem::message).sorted(java.util.Comparator.reverseOrder()).toList());
        assertTrue(problems.stream().allMatch(p -> p.kind() == Preflight.Kind.CIDR && p.hosts().equals(List.of("w1"))), problems::toString);
    }

    @Test void aCniInterfaceOutsideThePodNetworkAndAViaNodeRouteOutsideItAreConflicts() {
        String addr = "[{\"ifname\":\"cni0\",\"addr_info\":[{\"family\":\"inet\",\"local\":\"10.100.0.1\",\"prefixlen\":16}]}]";
        String route = "[{\"dst\":\"10.97.0.0/16\",\"gateway\":\"10.0.0.1\",\"dev\":\"eth0\"}]";
        List<String> problems = Preflight.crossHost(INV, INV.nodes(), facts("w1", ip(addr, route)));
        assertEquals(2, problems.size(), problems::toString);
        assertTrue(problems.get(0).contains("w1: cni0 10.100.0.1/16"), problems::toString);
        assertTrue(problems.get(1).contains("w1: route 10.97.0.0/16 via 10.0.0.1 dev eth0"), problems::toString);
    }

    /**
     * Docker's ranges without a docker process: its bridge from the interface and route it made (docker0), what
     * daemon.json reserves from preflight's read of the file. A pod network inside 172.16.0.0/12 meets both.
     */
    @Test void dockersBridgeAndReservedPoolsAreConflictsReadWithoutTheDockerCli() {
        Inventory inv = InventoryLoader.parse("inventory.yaml", YAML.replace("10.244.0.0/16", "172.16.0.0/12"), Path.of("."), Map.of("HOME", "/home/admin"));
        String addr = "[" + ETH + ",{\"ifname\":\"docker0\",\"addr_info\":[{\"family\":\"inet\",\"local\":\"172.17.0.1\",\"prefixlen\":16}]}]";
        String route = "[{\"dst\":\"172.17.0.0/16\",\"dev\":\"docker0\",\"protocol\":\"kernel\",\"prefsrc\":\"172.17.0.1\",\"flags\":[\"linkdown\"]}]";
        Facts f = facts("w1", ip(addr, route));
        f.put(PreflightStep.docker(INV.nodes().get(1)).name(), "{\"default-address-pools\":[{\"base\":\"172.30.0.0/16\",\"size\":24}]}", false);
        List<String> problems = Preflight.crossHost(inv, inv.nodes(), f);
        assertEquals(3, problems.size(), problems::toString);
        assertTrue(problems.stream().anyMatch(p -> p.contains("w1: docker0 172.17.0.1/16")), problems::toString);
        assertTrue(problems.stream().anyMatch(p -> p.contains("w1: route 172.17.0.0/16 dev docker0")), problems::toString);
        assertTrue(problems.stream().anyMatch(p -> p.contains("w1: daemon.json default-address-pools[0].base 172.30.0.0/16")), problems::toString);
    }

    @Test void duplicatesNameBothHostsAndAnAbsentProductUuidIsNotADuplicate() {
        Facts f = new Facts();
        // what preflight's probe learns: hostname, machine-id, product_uuid (an absent one: no line)
        f.put(PreflightStep.identity(INV.node("m").orElseThrow()).name(), "m\naaa\n4C4C4544-0031\n", false);
        f.put(PreflightStep.identity(INV.node("w1").orElseThrow()).name(), "w1\nbbb\n4c4c4544-0031\n", false);
        f.put(PreflightStep.identity(INV.node("w2").orElseThrow()).name(), "w2\nbbb\n", false);
        List<Preflight.Problem> problems = Preflight.problems(INV, INV.nodes(), f);
        assertEquals(2, problems.size(), problems::toString);
        assertEquals(List.of("w2", "w1"), problems.get(0).hosts());
        assertTrue(problems.get(0).message().startsWith("w2 and w1 have the same machine-id"), problems.get(0)::message);
        assertEquals(List.of("w1", "m"), problems.get(1).hosts());
        assertTrue(problems.get(1).message().startsWith("w1 and m have the same product_uuid"), problems.get(1)::message);
        assertEquals(List.of(Preflight.Kind.UNIQUE), Preflight.checkedOn(INV.nodes().get(0), f));
    }

    @Test void aNamedNodesIpFromPreflightIsCheckedLikeAnInventoryAddress() {
        Facts f = new Facts();
        f.put("node.w2.ip", "10.244.7.7", false);
        List<Preflight.Problem> problems = Preflight.problems(INV, INV.nodes(), f);
        assertEquals(1, problems.size(), problems::toString);
        assertEquals("podCidr 10.244.0.0/16 (cluster.podCidr) overlaps 10.244.7.7/32 (node w2 IP 10.244.7.7)", problems.get(0).message());
        assertEquals(List.of("w2"), problems.get(0).hosts());
    }

    @Test void clockSkewNamesTheHost() {
        Facts f = new Facts();
        f.put(PreflightStep.clock(INV.node("w1").orElseThrow()).name(), "1000.5\n1100.0", false);
        List<Preflight.Problem> problems = Preflight.problems(INV, INV.nodes(), f);
        assertEquals(List.of("w1"), problems.get(0).hosts());
        assertTrue(problems.get(0).message().startsWith("w1: clock is -100 s off"), problems.get(0)::message);
        f.put(PreflightStep.clock(INV.node("w1").orElseThrow()).name(), "Thu Dec  4\n1100.0", false);
        assertEquals("w1: cannot read its clock: Thu Dec  4", Preflight.problems(INV, INV.nodes(), f).get(0).message());
    }
}
