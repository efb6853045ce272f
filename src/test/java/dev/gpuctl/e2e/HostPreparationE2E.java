package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * gpuctl bootstrap's preflight and host preparation (steps 1-5) on the test bed's real hosts: dry-run and a
 * refused preflight change nothing; a bootstrap leaves every host right, asked of the host itself; a re-run
 * changes nothing; a reboot keeps it right.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HostPreparationE2E {
    static final String STEPS = "time,swap,kernel,runtime,packages";
    static TestBed bed;
    static Path inventory;

    /** Files and states gpuctl may change; their checksum before and after proves "nothing changed". */
    static final String FINGERPRINT = "sha256sum /etc/fstab /etc/docker/daemon.json /etc/modules-load.d/k8s.conf "
        + "/etc/sysctl.d/k8s.conf /proc/swaps 2>&1; stat -c '%n %Y %a %U' /etc/fstab /etc/docker/daemon.json /etc/modules-load.d/k8s.conf "
        + "/etc/sysctl.d/k8s.conf /etc/chrony/sources.d/gpuctl.sources /etc/apt/preferences.d/gpuctl-kubernetes 2>&1; dpkg-query -W -f='${Package} ${Version}\\n' 2>/dev/null | sha256sum; "
        + "apt-mark showhold; sysctl -n net.ipv4.ip_forward";

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() {
        bed = TestBed.own("prep", 2);
        inventory = bed.inventory("docker", "flannel");
    }

    @Test @Order(1) void dryRunConnectsChecksAndChangesNothing() {
        bed.ok(bed.workers().get(0), "mkdir -p /etc/docker && printf '{\"registry-mirrors\": [\"https://mirror.example.internal\"]}\\n' > /etc/docker/daemon.json");
        Map<String, String> before = bed.fingerprints(FINGERPRINT);
        Gpuctl.Run r = Gpuctl.run("bootstrap", "--dry-run", "--only", STEPS, inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.err().contains("would change: no active swap (/proc/swaps)"), r::toString);
        assertTrue(r.count("would change") >= bed.hosts().size() * 4, r::toString);
        assertEquals(before, bed.fingerprints(FINGERPRINT), "dry-run changed a host");
        assertTrue(r.out().contains("nothing was changed"), r::toString);
    }

    @Test @Order(2) void preflightRefusesAnUnreachableHostAndChangesNothing() throws IOException {
        Path inv = inventory.resolveSibling("with-ghost.yaml");
        String ghost = bed.subnet().replaceAll("\\.0/24$", ".99");
        Files.writeString(inv, Files.readString(inventory) + "  - { name: ghost, address: " + ghost + ", role: worker }\n");
        Map<String, String> before = bed.fingerprints(FINGERPRINT);
        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", STEPS, inv.toString());
        assertEquals(6, r.code(), r::toString);
        assertTrue(r.err().contains("ghost"), r::toString);
        assertTrue(r.err().contains("nothing was changed"), r::toString);
        assertEquals(before, bed.fingerprints(FINGERPRINT), "a refused preflight changed a host");
    }

    @Test @Order(3) void bootstrapPreparesEveryHost() {
        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", STEPS, inventory.toString());
        assertEquals(0, r.code(), r::toString);
        for (String h : bed.hosts()) {
            boolean gpu = !h.equals(bed.master());
            // time: chrony installed, running, synchronised to the bed's server
            assertEquals("active\n", bed.ok(h, "systemctl is-active chrony"));
            assertTrue(bed.ok(h, "chronyc -n sources").contains("^* " + bed.ntpServer()), h);
            // swap: off now, nothing turns it on at boot
            assertEquals(1, bed.ok(h, "cat /proc/swaps").lines().count(), h + " /proc/swaps");
            assertTrue(bed.ok(h, "grep -v '^#' /etc/fstab | awk '$3==\"swap\"' | wc -l").strip().equals("0"), h + " fstab");
            assertTrue(bed.ok(h, "cat /etc/fstab.gpuctl-orig").contains("swap"), h + " backup of fstab");
            // kernel
            String mods = bed.ok(h, "lsmod");
            assertTrue(mods.contains("br_netfilter") && mods.contains("overlay"), h + " modules: " + mods);
            assertEquals("1\n1\n1\n", bed.ok(h, "sysctl -n net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables net.ipv4.ip_forward"));
            // runtime: docker's own answer
            assertEquals((gpu ? "nvidia" : "runc") + " systemd json-file overlay2\n",
                bed.ok(h, "docker info --format '{{.DefaultRuntime}} {{.CgroupDriver}} {{.LoggingDriver}} {{.Driver}}'"), h);
            assertEquals("active\n", bed.ok(h, "systemctl is-active cri-docker"));
            // packages: pinned minor, held
            assertTrue(bed.ok(h, "dpkg-query -W -f='${Version}' kubeadm").startsWith("1.35."), h);
            assertEquals("kubeadm\nkubectl\nkubelet\n", bed.ok(h, "apt-mark showhold | sort"));
        }
        // daemon.json merged, the site's registry mirror kept
        String worker = bed.workers().get(0);
        assertTrue(bed.ok(worker, "cat /etc/docker/daemon.json").contains("https://mirror.example.internal"));
        assertTrue(bed.ok(worker, "docker info --format '{{json .RegistryConfig}}' 2>/dev/null || cat /etc/docker/daemon.json").contains("mirror.example.internal"));
    }

    @Test @Order(4) void reRunChangesNothing() {
        Map<String, String> before = bed.fingerprints(FINGERPRINT);
        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", STEPS, inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(0, r.count("changed"), r::toString);
        assertEquals(bed.hosts().size() * 5 + bed.hosts().size(), r.count("ok"), r::toString);
        assertEquals(before, bed.fingerprints(FINGERPRINT), "a re-run changed a host");
    }

    @Test @Order(5) void afterEveryHostRebootsTheStateHolds() {
        for (String h : bed.hosts()) bed.reboot(h);
        for (String h : bed.hosts()) {
            assertEquals(1, bed.ok(h, "cat /proc/swaps").lines().count(), h + ": swap came back after the reboot");
            assertTrue(bed.ok(h, "lsmod").contains("br_netfilter"), h + ": br_netfilter not loaded at boot");
            assertEquals("1\n", bed.ok(h, "sysctl -n net.ipv4.ip_forward"), h + ": forwarding not persisted");
            assertEquals("active\n", bed.ok(h, "systemctl is-active docker"), h);
        }
        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", STEPS, inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(0, r.count("changed"), r::toString);
    }

    @Test @Order(6) void hostsLimitsTheRun() {
        String worker = bed.workers().get(0);
        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", STEPS, "--hosts", worker, inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertFalse(r.err().lines().anyMatch(l -> l.startsWith(bed.master() + " ")), "--hosts limits the run to " + worker + ":\n" + r);
    }
}
