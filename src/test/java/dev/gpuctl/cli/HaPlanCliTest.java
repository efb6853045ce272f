package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.HaInventory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three masters behind a VIP: plan shows the endpoint and initialises on the first master only. */
class HaPlanCliTest {
    static List<String> row(String out, String host) {
        return List.of(out.lines().filter(l -> l.startsWith("  " + host + " ")).findFirst().orElseThrow().trim().split(" +"));
    }

    @Test void planShowsTheEndpointAndInitOnTheFirstMasterOnly(@TempDir Path dir) throws IOException {
        Path inv = HaInventory.write(dir);
        CliTest.Run r = CliTest.run("plan", inv.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("\nControl plane: 3 masters (m1 initialises the cluster, m2, m3 join it as control-plane nodes;"
            + " etcd survives 1 lost), endpoint 10.0.0.100:8443 (a virtual IP kept by keepalived (VRRP) on the masters, haproxy"
            + " there on 8443 forwarding to each master's API server on 6443)\n  every command handles several masters (restore:"
            + " every member from one snapshot); a lost master comes back with bootstrap\n"), r::toString);
        List<String> header = List.of(r.out().lines().filter(l -> l.trim().startsWith("HOST ")).findFirst().orElseThrow().trim().split(" +"));
        int init = header.indexOf("init");
        int cni = header.indexOf("cni");
        int vip = header.indexOf("vip");
        int joinMasters = header.indexOf("join-masters");
        int join = header.indexOf("join");
        assertTrue(init < joinMasters && joinMasters < join, "masters join after init, before the workers: " + header);
        int lost = header.indexOf("lost-masters");
        assertTrue(init < lost && lost < joinMasters, "a lost master's member is removed before the masters join: " + header);
        assertEquals("x", row(r.out(), "m1").get(lost), r::toString);
        for (String other : List.of("m2", "m3", "w1")) assertEquals("-", row(r.out(), other).get(lost), r::toString);
        assertTrue(vip > 0 && vip < init, "the VIP is set up before kubeadm init, which needs the endpoint: " + header);
        for (String m : List.of("m1", "m2", "m3")) assertEquals("x", row(r.out(), m).get(vip), r::toString);
        assertEquals("-", row(r.out(), "w1").get(vip), r::toString);
        assertEquals("x", row(r.out(), "m1").get(init), r::toString);
        assertEquals("x", row(r.out(), "m1").get(cni), r::toString);
        assertEquals("-", row(r.out(), "m1").get(joinMasters), r::toString);
        for (String m : List.of("m2", "m3")) assertEquals("x", row(r.out(), m).get(joinMasters), r::toString);
        assertEquals("-", row(r.out(), "w1").get(joinMasters), r::toString);
        for (String other : List.of("m2", "m3", "w1")) {
            assertEquals("-", row(r.out(), other).get(init), r::toString);
            assertEquals("-", row(r.out(), other).get(cni), r::toString);
        }
        CliTest.Run details = CliTest.run("plan", "--details", inv.toString());
        assertTrue(details.out().contains("controlPlaneEndpoint: \"10.0.0.100:8443\""), details::toString);
        // the removal is planned per other master, after the question that decides it (blank, still a member)
        assertTrue(details.out().contains("etcdctl member remove (the member m2 left, its disk lost)")
            && details.out().contains("etcdctl member remove (the member m3 left, its disk lost)"), details::toString);
    }

    @Test void theCommandsThatNeedOneMasterTryEachMasterInTurnAndNameEveryOneThatCouldNotBeReached(@TempDir Path dir) throws IOException {
        int[] ports = {ExitCodesCliTest.closedPort(), ExitCodesCliTest.closedPort(), ExitCodesCliTest.closedPort()};
        Path inv = Files.writeString(dir.resolve("inventory.yaml"), """
            cluster: { name: ha, kubernetesVersion: "1.35", controlPlaneEndpoint: { vip: 10.0.0.100 } }
            ssh: { identityFile: %s, knownHosts: %s }
            nodes:
              - { name: m1, address: 127.0.0.1, role: master, ssh: { port: %d } }
              - { name: m2, address: 127.0.0.2, role: master, ssh: { port: %d } }
              - { name: m3, address: 127.0.0.3, role: master, ssh: { port: %d } }
              - { name: w1, address: 127.0.0.4, role: worker }
            """.formatted(ExitCodesCliTest.key(dir), dir.resolve("known_hosts"), ports[0], ports[1], ports[2]));
        for (List<String> command : List.of(List.of("gpus", "-i", inv.toString()), List.of("drain", "w1", "-i", inv.toString()),
                List.of("uncordon", "w1", "-i", inv.toString()), List.of("kubeconfig", "-i", inv.toString()),
                List.of("join-token", "--refresh", "-i", inv.toString()), List.of("job", "list", "-i", inv.toString()),
                List.of("repair", "w1", "-i", inv.toString()))) {
            CliTest.Run r = CliTest.run(command.toArray(String[]::new));
            assertEquals(6, r.code(), command + "\n" + r);
            assertTrue(r.err().contains("no master could be reached:"), command + "\n" + r);
            for (int i = 0; i < 3; i++) {
                assertTrue(r.err().contains("m" + (i + 1) + ": unreachable (") && r.err().contains(":" + ports[i]), command + "\n" + r);
            }
            assertTrue(!r.err().contains("not HA-aware"), r::toString);
        }
    }

    @Test void restoreOfSeveralMastersChecksTheArchiveAndNeedsEachMastersIp(@TempDir Path dir) throws IOException {
        Path inv = HaInventory.write(dir);
        CliTest.Run r = CliTest.run("restore", dir.resolve("none.tar.gz").toString(), inv.toString());
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("no backup archive at " + dir.resolve("none.tar.gz")), r::toString);
        Path named = Files.writeString(dir.resolve("named.yaml"), HaInventory.YAML.replace("address: 10.0.0.12", "address: m2.lab"));
        CliTest.Run n = CliTest.run("restore", dir.resolve("none.tar.gz").toString(), named.toString());
        assertEquals(2, n.code(), n::toString);
        assertTrue(n.err().contains("give nodes[].nodeIp to every master whose address is a host name. Nothing was changed."), n::toString);
    }

    @Test void removeNodeTakesOneMasterAtATimeAndResetShowsTheMastersOrder(@TempDir Path dir) throws IOException {
        Path inv = HaInventory.write(dir);
        CliTest.Run two = CliTest.run("remove-node", "-i", inv.toString(), "m2", "m3");
        assertEquals(2, two.code(), two::toString);
        assertTrue(two.err().contains("remove-node takes one master at a time (etcd changes its members one at a time): m2, m3."
            + " Nothing was changed."), two::toString);
        CliTest.Run reset = CliTest.run("reset", "--dry-run", "-i", inv.toString());
        assertTrue(reset.err().contains("  2. masters m3, m2, one at a time: the same; kubeadm reset removes each one's etcd member from"
            + " the cluster\n  3. master m1: the same;"), reset::toString);
    }
}
