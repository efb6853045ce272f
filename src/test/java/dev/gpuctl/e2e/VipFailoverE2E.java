package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The VIP on three masters (the part of an HA control plane that works today: `bootstrap --only vip`): Debian's real
 * keepalived elects the first master, every master's haproxy serves the endpoint's port, the holder's keepalived stopped
 * moves the VIP to another master within seconds and the endpoint still answers; bootstrap puts the stopped service back
 * (the first master, priority 101, takes the VIP back) and a re-run changes nothing; a keepalived.conf changed by hand is
 * put back by {@code bootstrap --only vip}; a command that needs the cluster finds no admin.conf on any master and says
 * to bootstrap. (It holds what the former single-master VipE2E proved of keepalived and haproxy; the rest of that class
 * is proven by HaControlPlaneE2E, GrowControlPlaneE2E and EmulatorFlowE2E: see docs/testing.md.)
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class VipFailoverE2E {
    static TestBed bed;
    static Path inventory;
    static String vip;
    static List<String> masters;

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() throws IOException {
        bed = TestBed.own("vipha", 2);
        masters = bed.hosts();
        Path generated = bed.inventory("docker", "flannel");
        String address = bed.address(bed.master());
        vip = address.substring(0, address.lastIndexOf('.')) + ".201";
        inventory = generated.resolveSibling("inventory.yaml");
        Files.writeString(inventory, Files.readString(generated)
            .replace("cluster:\n", "cluster:\n  controlPlaneEndpoint: { vip: " + vip + " }\n")
            .replace("role: worker }", "role: master, gpu: false }"));
    }

    /** The masters whose interfaces hold the VIP now. */
    static List<String> holders() {
        return masters.stream().filter(h -> bed.ok(h, "ip -o -4 addr show").contains(" " + vip + "/")).toList();
    }

    /** Waits (bounded, polling each second) until exactly one master holds the VIP and it is one of {@code expected}. */
    static String holderAmong(List<String> expected) throws InterruptedException {
        List<String> now = List.of();
        for (int i = 0; i < 60; i++) {
            now = holders();
            if (now.size() == 1 && expected.contains(now.get(0))) return now.get(0);
            Thread.sleep(1000);
        }
        return fail("the VIP is held by " + now + ", expected exactly one of " + expected);
    }

    static void endpointAnswersFrom(String host) {
        bed.ok(host, "timeout 3 bash -c ': </dev/tcp/" + vip + "/8443'");
    }

    @Test @Order(1) void everyMasterRunsTheVipAndTheFirstHoldsIt() throws InterruptedException {
        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", "vip", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        for (String m : masters) {
            // Debian's real packages, as services
            assertEquals("install ok installed\ninstall ok installed\n", bed.ok(m, "dpkg-query -W -f='${Status}\\n' keepalived haproxy"), m);
            assertEquals("active\nactive\n", bed.ok(m, "systemctl is-active keepalived haproxy"), m);
            String cfg = bed.ok(m, "cat /etc/haproxy/haproxy.cfg");
            for (String other : masters) {
                assertTrue(cfg.contains("server " + other + " " + bed.address(other) + ":6443 check"), m + " forwards to " + other + ":\n" + cfg);
            }
        }
        assertEquals(bed.master(), holderAmong(List.of(bed.master())));
        assertTrue(bed.ok(bed.master(), "journalctl -u keepalived --no-pager").contains("Entering MASTER STATE"), "keepalived's own account");
        for (String m : masters) endpointAnswersFrom(m);
    }

    @Test @Order(2) void theHolderGoneTheVipMovesAndTheEndpointStillAnswers() throws InterruptedException {
        String first = bed.master();
        bed.ok(first, "systemctl stop keepalived");
        String next = holderAmong(masters.subList(1, masters.size()));
        assertTrue(bed.ok(next, "journalctl -u keepalived --no-pager").contains("Entering MASTER STATE"), next);
        for (String m : masters) endpointAnswersFrom(m);
    }

    @Test @Order(3) void bootstrapPutsItBackAndTheFirstMasterTakesTheVipBack() throws InterruptedException {
        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", "vip", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(1, r.count("changed"), "only the first master's keepalived was wrong:\n" + r);
        assertEquals(bed.master(), holderAmong(List.of(bed.master())));
        Gpuctl.Run again = Gpuctl.run("bootstrap", "--only", "vip", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
    }

    @Test @Order(4) void aConfigChangedByHandIsPutBack() throws InterruptedException {
        bed.ok(bed.master(), "sed -i 's/priority 101/priority 7/' /etc/keepalived/keepalived.conf");
        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", "vip", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.count("changed") > 0, r::toString);
        assertTrue(bed.ok(bed.master(), "cat /etc/keepalived/keepalived.conf").contains("\n    priority 101\n"));
        assertEquals(bed.master(), holderAmong(List.of(bed.master())), "the first master holds the VIP again");
    }

    @Test @Order(5) void aCommandThatNeedsTheClusterAsksEveryMasterAndFindsNone() {
        Gpuctl.Run r = Gpuctl.run("gpus", inventory.toString());
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("no cluster yet") && r.err().contains("nor has any other master"), r::toString);
        for (String m : masters) assertTrue(r.err().contains("\n  " + m + ": no /etc/kubernetes/admin.conf"), r::toString);
        assertEquals("inactive\n", bed.ssh(bed.master(), "systemctl is-active kubelet").out(), "nothing ran");
    }
}
