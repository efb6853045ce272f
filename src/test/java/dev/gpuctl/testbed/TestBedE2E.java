package dev.gpuctl.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The test bed itself: its hosts behave like real Debian 12 machines where gpuctl's steps look
 * (boot, apt, reboot, swap, sysctl, modules, time, network). Each test leaves its host as it found it.
 */
class TestBedE2E {
    static TestBed bed;

    @BeforeAll
    static void up() {
        bed = TestBed.shared();
    }

    /** Runs cmd on host; fails the test (with out and err) unless it exits 0. */
    static String sh(String host, String cmd) {
        BedResult r = bed.ssh(host, cmd);
        if (r.exit() != 0) {
            fail(host + ": `" + cmd + "` exited " + r.exit() + "\nstdout:\n" + r.out() + "\nstderr:\n" + r.err());
        }
        return r.out();
    }

    static String swaps(String host) {
        return sh(host, "cat /proc/swaps");
    }

    @Test
    void everyHostIsABootedDebianWithItsOwnIdentity() {
        List<String> hosts = bed.hosts();
        assertEquals(List.of("h0", "h1", "h2", "h3"), hosts);
        Set<String> machineIds = new HashSet<>();
        for (String h : hosts) {
            assertEquals(h, sh(h, "hostname").strip());
            machineIds.add(sh(h, "cat /etc/machine-id").strip());
            assertEquals("systemd", sh(h, "cat /proc/1/comm").strip(), h + ": PID 1");
            String state = bed.ssh(h, "systemctl is-system-running").line();
            assertTrue(state.equals("running") || state.equals("degraded"), h + ": system state " + state);
            assertEquals("cgroup2fs", sh(h, "stat -fc %T /sys/fs/cgroup").strip(), h + ": cgroup v2");
            assertTrue(sh(h, ". /etc/os-release; echo $ID $VERSION_ID").strip().equals("debian 12"), h);
            assertTrue(sh(h, "ip -4 -o addr show eth0").contains(" " + bed.address(h) + "/24"), h + ": address");
            assertEquals(h.equals("h0") ? "master" : "worker", sh(h, "cat /etc/gpuctl-testbed/role").strip());
            assertEquals("active", sh(h, "systemctl is-active ssh").strip());
        }
        assertEquals(hosts.size(), machineIds.size(), "machine-ids must be unique: " + machineIds);
        for (String w : bed.workers()) {
            assertEquals("1", sh(w, "cat /etc/gpuctl-testbed/gpus").strip());
        }
        assertEquals(1, bed.ssh("h0", "test -e /etc/gpuctl-testbed/gpus").exit(), "the master has no GPU");
    }

    @Test
    void sshPassesTheExitStatusAndKeepsStreamsApart() {
        BedResult r = bed.ssh("h1", "echo out; echo err >&2; exit 7");
        assertEquals(7, r.exit());
        assertEquals("out\n", r.out());
        assertTrue(r.err().contains("err"), r.err());
        // strict host keys: the bed's known_hosts pins every host
        String kh = read(bed.knownHosts());
        for (String h : bed.hosts()) {
            assertTrue(kh.contains(bed.address(h) + ",") , "known_hosts lacks " + h + ":\n" + kh);
        }
        assertTrue(Files.isRegularFile(bed.clientKey()));
    }

    @Test
    void aptInstallsFromTheLocalRepositoryOnly() {
        String h = "h0";
        try {
            String sources = sh(h, "grep -rhv '^[[:space:]]*\\(#\\|$\\)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null || true");
            assertEquals("deb [trusted=yes] file:/srv/bedrepo ./", sources.strip(), "the only apt source");
            assertEquals(1, bed.ssh(h, "dpkg-query -W -f='${Status}' chrony | grep -q 'ok installed'").exit(),
                    "chrony must not be preinstalled");
            sh(h, "apt-get -qq update && DEBIAN_FRONTEND=noninteractive apt-get -qq install -y chrony");
            assertTrue(sh(h, "dpkg-query -W -f='${Status}' chrony").contains("ok installed"));
            String policy = sh(h, "apt-cache policy");
            assertTrue(policy.contains("file:/srv/bedrepo"), policy);
            assertFalse(policy.contains("http"), "no other source:\n" + policy);
        } finally {
            bed.ssh(h, "DEBIAN_FRONTEND=noninteractive apt-get -qq purge -y chrony; apt-get -qq autoremove --purge -y");
        }
    }

    @Test
    void chronySyncsToTheBedNtpServerWithoutTouchingTheClock() throws InterruptedException {
        String h = "h2";
        try {
            sh(h, "apt-get -qq update && DEBIAN_FRONTEND=noninteractive apt-get -qq install -y chrony"
                    + " && sed -i 's/^pool .*/server " + bed.ntpServer() + " iburst/' /etc/chrony/chrony.conf"
                    + " && systemctl restart chrony");
            assertTrue(sh(h, "ps -o args= -C chronyd").contains(" -x"), "chronyd runs with -x in the bed");
            String tracking = "";
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (System.nanoTime() < deadline) {
                tracking = bed.ssh(h, "chronyc -n tracking").out();
                if (tracking.contains("(" + bed.ntpServer() + ")") && tracking.contains("Leap status     : Normal")) {
                    break;
                }
                Thread.sleep(1000);
            }
            assertTrue(tracking.contains("(" + bed.ntpServer() + ")"), "chronyd selects the bed's server:\n" + tracking);
            assertTrue(tracking.contains("Leap status     : Normal"), tracking);
            assertTrue(sh(h, "chronyc -n sources").contains("^* " + bed.ntpServer()));
            // NTPSynchronized reflects the kernel's (global) adjtimex state, which nothing in the bed sets
            System.out.println("NTPSynchronized on " + h + ": " + bed.ssh(h, "timedatectl show -p NTPSynchronized --value").line());
        } finally {
            bed.ssh(h, "DEBIAN_FRONTEND=noninteractive apt-get -qq purge -y chrony; apt-get -qq autoremove --purge -y");
        }
    }

    @Test
    void aRebootKeepsTheDiskAndForgetsRun() {
        String h = "h1";
        String token = UUID.randomUUID().toString();
        sh(h, "echo " + token + " > /etc/gpuctl-bed-marker && touch /run/gpuctl-bed-marker");
        String addr = bed.address(h);
        bed.reboot(h);
        try {
            assertEquals(token, sh(h, "cat /etc/gpuctl-bed-marker").strip(), "/etc survives a reboot");
            assertEquals(1, bed.ssh(h, "test -e /run/gpuctl-bed-marker").exit(), "/run is empty after a reboot");
            assertEquals(addr, bed.address(h));
            String state = bed.ssh(h, "systemctl is-system-running").line();
            assertTrue(state.equals("running") || state.equals("degraded"), state);
        } finally {
            sh(h, "rm -f /etc/gpuctl-bed-marker");
        }
    }

    @Test
    void swapComesBackAtRebootExactlyWhileFstabHasIt() {
        String h = "h3";
        String empty = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
        try {
            assertTrue(sh(h, "cat /etc/fstab").contains("/swap.img\tnone\tswap\tsw\t0\t0\n"), "tab-separated fstab line");
            assertTrue(swaps(h).startsWith(empty) && swaps(h).contains("/swap.img "), () -> "swap on at start:\n" + swaps(h)
                + "\nboot log of the swap emulation:\n" + bed.ssh(h, "journalctl -b -u gpuctl-testbed-swap --no-pager; systemctl status gpuctl-testbed-swap --no-pager").out());
            sh(h, "swapoff -a");
            assertEquals(empty, swaps(h), "swapoff -a empties /proc/swaps");
            bed.reboot(h);
            assertTrue(swaps(h).contains("/swap.img "), "fstab still has the line: swap is back after a reboot");
            sh(h, "swapoff -a && sed -i 's|^/swap.img|#/swap.img|' /etc/fstab");
            bed.reboot(h);
            assertEquals(empty, swaps(h), "fstab line commented out: swap stays off after a reboot");
            sh(h, "swapon -a");
            assertEquals(empty, swaps(h), "swapon -a finds no active fstab entry");
            // a swap unit brings swap back without any fstab line, unless masked
            sh(h, "printf '[Swap]\\nWhat=/swap.img\\n[Install]\\nWantedBy=swap.target\\n' > /etc/systemd/system/swap.img.swap"
                    + " && mkdir -p /etc/systemd/system/swap.target.wants"
                    + " && ln -sf /etc/systemd/system/swap.img.swap /etc/systemd/system/swap.target.wants/");
            bed.reboot(h);
            assertTrue(swaps(h).contains("/swap.img "), "an enabled swap unit activates swap at boot");
            sh(h, "swapoff -a && rm -f /etc/systemd/system/swap.target.wants/swap.img.swap /etc/systemd/system/swap.img.swap"
                    + " && ln -s /dev/null /etc/systemd/system/swap.img.swap && sed -i 's|^#/swap.img|/swap.img|' /etc/fstab");
            bed.reboot(h);
            assertEquals(empty, swaps(h), "a masked swap unit keeps the fstab line from activating");
        } finally {
            bed.ssh(h, "rm -f /etc/systemd/system/swap.img.swap /etc/systemd/system/swap.target.wants/swap.img.swap;"
                    + " sed -i 's|^#/swap.img|/swap.img|' /etc/fstab");
            bed.reboot(h);
        }
        assertTrue(swaps(h).contains("/swap.img "), "restored");
        assertTrue(sh("h0", "cat /etc/fstab").contains("/swapfile none swap sw 0 0"), "master: space-separated line");
        assertTrue(swaps("h0").contains("/swapfile "), "master starts with swap on");
        assertEquals(0, bed.ssh(h, "swapon --show | grep -q /swap.img").exit(), "the real swapon --show reads /proc/swaps");
    }

    @Test
    void onlyPersistedSysctlsSurviveAReboot() {
        String h = "h3";
        try {
            assertEquals("0", sh(h, "sysctl -n net.ipv4.ip_forward").strip());
            sh(h, "sysctl -w net.ipv4.ip_forward=1");
            sh(h, "echo 'net.ipv4.tcp_keepalive_time = 1234' > /etc/sysctl.d/90-gpuctl-bed-test.conf && sysctl --system");
            assertEquals("1234", sh(h, "sysctl -n net.ipv4.tcp_keepalive_time").strip());
            bed.reboot(h);
            assertEquals("0", sh(h, "sysctl -n net.ipv4.ip_forward").strip(), "an unpersisted sysctl is gone after a reboot");
            assertEquals("1234", sh(h, "sysctl -n net.ipv4.tcp_keepalive_time").strip(), "one in /etc/sysctl.d persists");
            assertTrue(sh(h, "sysctl -n net.bridge.bridge-nf-call-iptables").strip().matches("[01]"));
        } finally {
            bed.ssh(h, "rm -f /etc/sysctl.d/90-gpuctl-bed-test.conf");
            bed.reboot(h);
        }
        assertEquals("7200", sh(h, "sysctl -n net.ipv4.tcp_keepalive_time").strip());
    }

    @Test
    void moduleLoadsSurviveARebootOnlyThroughModulesLoadD() {
        String h = "h2";
        try {
            assertFalse(sh(h, "lsmod").contains("br_netfilter"));
            sh(h, "modprobe br_netfilter");
            assertTrue(sh(h, "lsmod").lines().anyMatch(l -> l.startsWith("br_netfilter ")), sh(h, "lsmod"));
            assertNotEquals(0, bed.ssh(h, "modprobe no_such_module").exit(), "an unknown module fails");
            bed.reboot(h);
            assertFalse(sh(h, "lsmod").contains("br_netfilter"), "a modprobe is gone after a reboot");
            sh(h, "printf 'overlay\\nbr_netfilter\\n' > /etc/modules-load.d/gpuctl-bed-test.conf");
            bed.reboot(h);
            String lsmod = sh(h, "lsmod");
            assertTrue(lsmod.contains("\noverlay ") && lsmod.contains("\nbr_netfilter "), "loaded at boot from modules-load.d:\n" + lsmod);
            assertEquals("active", bed.ssh(h, "systemctl is-active systemd-modules-load").line());
        } finally {
            bed.ssh(h, "rm -f /etc/modules-load.d/gpuctl-bed-test.conf");
            bed.reboot(h);
        }
        assertFalse(sh(h, "lsmod").contains("br_netfilter"));
    }

    /** Every host's disk as at {@code bed snapshot}: later writes, deletions and whiteouts undone; identity and addresses kept. */
    @Test
    void restoreBringsEveryDiskBackToTheSnapshotWithTheSameIdentity() {
        List<String> hosts = bed.hosts();
        String identity = "hostname; cat /etc/machine-id /etc/ssh/ssh_host_ed25519_key.pub; ip -4 -o addr show eth0 | awk '{print $4}'";
        String marker = "/root/gpuctl-bed-snapshot-test";
        boolean restored = true;
        try {
            for (String h : hosts) {
                // in the snapshot: a file of the host's own and a whiteout (a file of the image moved away)
                sh(h, "echo before > " + marker + ".before && mv /etc/issue.net /etc/issue.net.gpuctl-bed-test");
            }
            java.util.Map<String, String> ids = bed.fingerprints(identity);
            java.util.Map<String, String> boots = bed.fingerprints("cat /proc/sys/kernel/random/boot_id");
            String knownHosts = read(bed.knownHosts());
            BedResult snap = bed.bed("snapshot", "gpuctl-bed-test");
            assertEquals(0, snap.exit(), snap::toString);
            restored = false;
            for (String h : hosts) {
                sh(h, "echo after > " + marker + ".after && rm " + marker + ".before /etc/issue && echo changed > /etc/issue.net"
                    + " && apt-mark hold openssl >/dev/null");
            }
            BedResult restore = bed.bed("restore", "gpuctl-bed-test");
            assertEquals(0, restore.exit(), restore::toString);
            restored = true;
            assertEquals(ids, bed.fingerprints(identity), "the same name, machine-id, ssh host key and address");
            assertEquals(knownHosts, read(bed.knownHosts()), "known_hosts unchanged");
            java.util.Map<String, String> after = bed.fingerprints("cat /proc/sys/kernel/random/boot_id");
            for (String h : hosts) {
                assertNotEquals(boots.get(h), after.get(h), h + " was booted from its restored disk");
                // ssh with strict host key checking against the bed's known_hosts: the host key it serves is the same
                assertEquals("before", sh(h, "cat " + marker + ".before").strip(), h);
                assertEquals(1, bed.ssh(h, "test -e " + marker + ".after").exit(), h + ": a file written after the snapshot is gone");
                assertEquals(0, bed.ssh(h, "test -s /etc/issue").exit(), h + ": a file deleted after the snapshot is back");
                assertEquals(1, bed.ssh(h, "test -e /etc/issue.net").exit(), h + ": a file deleted before the snapshot stays deleted");
                assertEquals("", sh(h, "apt-mark showhold").strip(), h + ": a package held after the snapshot is not held");
                String state = bed.ssh(h, "systemctl is-system-running").line();
                assertTrue(state.equals("running") || state.equals("degraded"), h + ": system state " + state);
            }
            sh("h1", "exec 3<>/dev/tcp/" + bed.address("h0") + "/22 && head -c 7 <&3");
            BedResult missing = bed.bed("restore", "no-such-snapshot");
            assertEquals(1, missing.exit(), missing::toString);
            assertTrue(missing.err().contains("has no snapshot 'no-such-snapshot'"), missing::toString);
        } finally {
            if (!restored) bed.bed("restore", "gpuctl-bed-test"); // /etc/issue and the hold back as they were
            for (String h : hosts) {
                bed.ssh(h, "rm -f " + marker + ".*; test -e /etc/issue.net.gpuctl-bed-test && mv /etc/issue.net.gpuctl-bed-test /etc/issue.net;"
                    + " apt-mark unhold openssl >/dev/null");
            }
        }
    }

    @Test
    void hostsReachEachOtherButNotTheInternet() {
        for (String h : bed.hosts()) {
            assertFalse(sh(h, "ip route").contains("default"), h + " has no default route");
            assertNotEquals(0, bed.ssh(h, "ip route get 1.1.1.1").exit(), h + ": the internet is unreachable");
        }
        sh("h1", "exec 3<>/dev/tcp/" + bed.address("h0") + "/22 && head -c 7 <&3");
        assertEquals(0, bed.ssh("h3", "ping -c1 -W2 " + bed.address("h1") + " >/dev/null").exit());
    }

    @Test
    void inventoryDescribesTheBed() {
        String docker = read(bed.inventory());
        assertTrue(docker.contains("runtime: docker") && docker.contains("cni: flannel")
                && docker.contains("podCidr: 10.244.0.0/16"), docker);
        assertTrue(docker.contains("timeServers: [" + bed.ntpServer() + "]"), docker);
        assertTrue(docker.contains("packages: system"), docker);
        assertTrue(docker.contains("identityFile: " + bed.clientKey()), docker);
        assertTrue(docker.contains("knownHosts: " + bed.knownHosts()), docker);
        assertTrue(docker.contains("{ name: h0, address: " + bed.address("h0") + ", role: master }"), docker);
        for (String w : bed.workers()) {
            assertTrue(docker.contains("{ name: " + w + ", address: " + bed.address(w) + ", role: worker }"), docker);
        }
        for (String line : docker.lines().filter(l -> l.contains("anifest:")).toList()) {
            Path p = Path.of(line.substring(line.indexOf(':') + 1).strip());
            assertTrue(Files.isRegularFile(p), "manifest file " + p);
        }
        String calico = read(bed.inventory("containerd", "calico"));
        assertTrue(calico.contains("runtime: containerd") && calico.contains("cni: calico")
                && calico.contains("podCidr: 192.168.0.0/16") && calico.contains("calico-custom-resources.yaml"), calico);
    }

    static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
