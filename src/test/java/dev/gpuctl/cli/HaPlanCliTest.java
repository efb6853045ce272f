package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three masters behind a VIP: plan shows the endpoint and initialises on the first master only. */
class HaPlanCliTest {
    static final String HA = """
        cluster: { name: ha, kubernetesVersion: "1.35", controlPlaneEndpoint: { vip: 10.0.0.100 } }
        ssh: { identityFile: /dev/null }
        nodes:
          - { name: m1, address: 10.0.0.11, role: master }
          - { name: m2, address: 10.0.0.12, role: master }
          - { name: m3, address: 10.0.0.13, role: master }
          - { name: w1, address: 10.0.0.21, role: worker }
        """;

    static List<String> row(String out, String host) {
        return List.of(out.lines().filter(l -> l.startsWith("  " + host + " ")).findFirst().orElseThrow().trim().split(" +"));
    }

    @Test void planShowsTheEndpointAndInitOnTheFirstMasterOnly(@TempDir Path dir) throws IOException {
        Path inv = Files.writeString(dir.resolve("inventory.yaml"), HA);
        CliTest.Run r = CliTest.run("plan", inv.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("\nControl plane: 3 masters (m1 initialises the cluster, m2, m3 join it as control-plane nodes;"
            + " etcd survives 1 lost), endpoint 10.0.0.100:8443 (a virtual IP kept by keepalived (VRRP) on the masters, haproxy"
            + " there on 8443 forwarding to each master's API server on 6443)\n  not built yet: the control-plane joins of m2, m3"
            + " (kubeadm join --control-plane); bootstrap and the other commands that connect refuse several masters\n"), r::toString);
        List<String> header = List.of(r.out().lines().filter(l -> l.trim().startsWith("HOST ")).findFirst().orElseThrow().trim().split(" +"));
        int init = header.indexOf("init");
        int cni = header.indexOf("cni");
        int vip = header.indexOf("vip");
        assertTrue(vip > 0 && vip < init, "the VIP is set up before kubeadm init, which needs the endpoint: " + header);
        for (String m : List.of("m1", "m2", "m3")) assertEquals("x", row(r.out(), m).get(vip), r::toString);
        assertEquals("-", row(r.out(), "w1").get(vip), r::toString);
        assertEquals("x", row(r.out(), "m1").get(init), r::toString);
        assertEquals("x", row(r.out(), "m1").get(cni), r::toString);
        for (String other : List.of("m2", "m3", "w1")) {
            assertEquals("-", row(r.out(), other).get(init), r::toString);
            assertEquals("-", row(r.out(), other).get(cni), r::toString);
        }
        CliTest.Run details = CliTest.run("plan", "--details", inv.toString());
        assertTrue(details.out().contains("controlPlaneEndpoint: \"10.0.0.100:8443\""), details::toString);
    }

    @Test void onlyTheVipStepTakesSeveralMasters(@TempDir Path dir) throws IOException {
        Path inv = Files.writeString(dir.resolve("inventory.yaml"), HA);
        assertEquals(3, Inventories.loadForSteps(inv, java.util.Map.of(), List.of("vip")).masters().size());
        for (List<String> only : List.of(List.<String>of(), List.of("vip", "init"), List.of("time"))) {
            GpuctlException e = org.junit.jupiter.api.Assertions.assertThrows(GpuctlException.class,
                () -> Inventories.loadForSteps(inv, java.util.Map.of(), only));
            assertTrue(e.getMessage().endsWith("only bootstrap --only vip runs on several masters)"), e.getMessage());
        }
    }

    @Test void theCommandsThatConnectRefuseSeveralMastersForNow(@TempDir Path dir) throws IOException {
        Path inv = Files.writeString(dir.resolve("inventory.yaml"), HA);
        CliTest.Run r = CliTest.run("bootstrap", inv.toString());
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains(inv + ": 3 masters: this gpuctl plans a control plane of several masters (gpuctl plan) but does"
            + " not bootstrap or manage one yet; nothing was changed"), r::toString);
    }
}
