package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.hostfiles.HostJournal;
import dev.gpuctl.testbed.TestBed;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * remove-node --restore-host on one bootstrapped cluster (h0 + h1), in order: h1's files, units, holds and swap are
 * recorded before bootstrap; after bootstrap the change journal names what gpuctl changed; the dry run says what would
 * come back; remove-node --restore-host puts every file back byte for byte with its owner and mode, removes what gpuctl
 * created, and brings the units and swap back to how they were (asked of the host); a second restore changes nothing;
 * bootstrap then joins h1 again alone.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RestoreHostE2E {
    static final String KUBECTL = "kubectl --kubeconfig=/etc/kubernetes/admin.conf ";
    static TestBed bed;
    static Path inventory;
    static String h1;
    /** Before bootstrap: every file under /etc and /var/lib/gpuctl: "sha256 owner mode", by path. */
    static Map<String, String> filesBefore;
    static Map<String, String> unitsBefore;
    static String swapsBefore;
    static String holdsBefore;
    /** What the journal named after bootstrap. */
    static HostJournal.Parsed journal;

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() {
        bed = TestBed.own("rh", 1);
        h1 = bed.workers().get(0);
        inventory = bed.inventory("docker", "flannel");
        // a second swap area started by an enabled swap unit (a vendor unit: systemd masks only those), on besides fstab's /swap.img
        bed.ok(h1, "for i in $(seq 120); do grep -q '^/swap.img ' /proc/swaps && break; sleep 1; done; "  // the boot's swap unit first
            + "dd if=/dev/zero of=/swap2 bs=1M count=1 status=none && chmod 0600 /swap2 && mkswap /swap2 >/dev/null"
            + " && printf '[Swap]\\nWhat=/swap2\\n\\n[Install]\\nWantedBy=swap.target\\n' > /usr/lib/systemd/system/swap2.swap"
            + " && systemctl daemon-reload && systemctl enable -q swap2.swap && swapon /swap2");
        filesBefore = files(h1);
        unitsBefore = units(h1);
        swapsBefore = swaps(h1);
        holdsBefore = bed.ok(h1, "apt-mark showhold");
        assertTrue(swapsBefore.contains("/swap.img") && swapsBefore.contains("/swap2"), swapsBefore);
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
    }

    /** Every regular file and link under /etc and /var/lib/gpuctl: "sha256 uid:gid mode" (a link: "link -> target"). */
    static Map<String, String> files(String host) {
        String out = bed.ok(host, "find /etc /var/lib/gpuctl -xdev \\( -type f -o -type l \\) -print0 2>/dev/null"
            + " | while IFS= read -r -d '' f; do if [ -L \"$f\" ]; then printf '%s\\t%s\\n' \"$f\" \"link -> $(readlink \"$f\")\"; "
            + "else printf '%s\\t%s %s\\n' \"$f\" \"$(sha256sum < \"$f\" | cut -c1-64)\" \"$(stat -c '%u:%g %a' \"$f\")\"; fi; done");
        Map<String, String> m = new TreeMap<>();
        out.lines().forEach(l -> {
            String[] f = l.split("\t", 2);
            m.put(f[0], f[1]);
        });
        return m;
    }

    /** Every unit file's state (systemctl list-unit-files), by unit. */
    static Map<String, String> units(String host) {
        Map<String, String> m = new TreeMap<>();
        bed.ok(host, "systemctl list-unit-files --no-legend --plain").lines().map(l -> l.trim().split("\\s+"))
            .filter(f -> f.length >= 2).forEach(f -> m.put(f[0], f[1]));
        return m;
    }

    static String swaps(String host) {
        return bed.ok(host, "awk 'NR>1{print $1, $2}' /proc/swaps");
    }

    @Test @Order(1) void theJournalNamesWhatBootstrapChangedAndHowItWasBefore() {
        assertEquals("600 0:0 regular file", bed.ok(h1, "stat -c '%a %u:%g %F' " + HostJournal.PATH).strip());
        journal = HostJournal.parse(bed.ok(h1, "cat " + HostJournal.PATH));
        assertEquals(List.of(), journal.problems());
        Map<String, HostJournal.Entry> files = new LinkedHashMap<>();
        for (HostJournal.Entry e : journal.entries()) {
            if (e instanceof HostJournal.FileCreated c) files.put(c.path(), e);
            if (e instanceof HostJournal.FileReplaced f) files.put(f.path(), e);
        }
        for (String must : List.of("/etc/fstab", "/etc/modules-load.d/k8s.conf", "/etc/sysctl.d/k8s.conf", "/etc/docker/daemon.json")) {
            assertTrue(files.containsKey(must), must + " is not in the journal: " + journal.entries());
        }
        // each file's kind says truly whether it was there before bootstrap
        files.forEach((path, e) -> assertEquals(e instanceof HostJournal.FileReplaced, filesBefore.containsKey(path), path + ": " + e));
        assertTrue(journal.entries().stream().anyMatch(e -> e instanceof HostJournal.SwapOff s && swapsBefore.contains(s.device())), journal.entries()::toString);
        assertTrue(journal.entries().contains(new HostJournal.UnitMasked("swap2.swap", "enabled")), journal.entries()::toString);
        assertTrue(journal.entries().contains(new HostJournal.SwapOff("/swap2")), journal.entries()::toString);
        // what a unit was, as the journal says, is what the host said before bootstrap
        for (HostJournal.Entry e : journal.entries()) {
            if (e instanceof HostJournal.UnitMasked m) assertEquals(unitsBefore.get(m.unit()), m.before(), m.unit());
            if (e instanceof HostJournal.UnitEnabled u && unitsBefore.containsKey(u.unit())) assertEquals(unitsBefore.get(u.unit()), u.before(), u.unit());
        }
        assertTrue(journal.entries().stream().anyMatch(e -> e.equals(new HostJournal.PackageHeld("kubelet"))), journal.entries()::toString);

        // a re-run that changes nothing adds nothing
        String text = bed.ok(h1, "cat " + HostJournal.PATH);
        Gpuctl.Run again = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(text, bed.ok(h1, "cat " + HostJournal.PATH));
    }

    @Test @Order(2) void theDryRunSaysWhatWouldComeBackAndChangesNothing() {
        Map<String, String> now = files(h1);
        Gpuctl.Run r = Gpuctl.run("remove-node", "-i", inventory.toString(), "--restore-host", "--dry-run", h1);
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.err().contains("put back /etc/fstab from /etc/fstab.gpuctl-orig (content, owner, mode)"), r::err);
        assertTrue(r.err().contains("remove /etc/sysctl.d/k8s.conf (gpuctl created it)"), r::err);
        assertEquals(now, files(h1));
        assertTrue(kubectl("get nodes").contains(h1));
    }

    @Test @Order(3) void restoreHostPutsTheHostBackAsItWasBeforeBootstrap() {
        Gpuctl.Run r = Gpuctl.run("remove-node", "-i", inventory.toString(), "--restore-host", h1);
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.err().lines().anyMatch(l -> l.startsWith(h1) && l.contains("restore-host") && l.contains("changed")), r::err);

        Map<String, String> after = files(h1);
        for (HostJournal.Entry e : journal.entries()) {
            if (e instanceof HostJournal.FileReplaced f) {
                assertEquals(filesBefore.get(f.path()), after.get(f.path()), f.path() + ": not byte-identical with the same owner and mode");
                assertFalse(after.containsKey(f.backup()), f.backup() + " is left");
            }
            if (e instanceof HostJournal.FileCreated c) assertFalse(after.containsKey(c.path()), c.path() + " (gpuctl created it) is left");
        }
        assertTrue(after.keySet().stream().noneMatch(p -> p.endsWith(HostJournal.BACKUP_SUFFIX)), "backups left");
        assertFalse(after.containsKey(HostJournal.PATH), "the journal was not archived");
        assertTrue(after.keySet().stream().anyMatch(p -> p.startsWith(HostJournal.PATH + ".restored-")), "the journal was deleted, not archived");

        // every unit the host had before is as it was (units that packages brought are not removed)
        Map<String, String> unitsAfter = units(h1);
        Map<String, String> changed = new TreeMap<>();
        unitsBefore.forEach((u, s) -> {
            if (unitsAfter.containsKey(u) && !unitsAfter.get(u).equals(s)) changed.put(u, s + " -> " + unitsAfter.get(u));
        });
        assertEquals(Map.of(), changed);
        for (HostJournal.Entry e : journal.entries()) {
            if (e instanceof HostJournal.UnitMasked m) {
                assertEquals(m.before(), bed.ssh(h1, "systemctl is-enabled " + m.unit()).out().strip(), m.unit());
            }
        }
        assertEquals("enabled", bed.ok(h1, "systemctl is-enabled swap2.swap").strip(), "the masked swap unit is not enabled again");
        assertEquals(swapsBefore, swaps(h1), "swap is not as it was");
        assertEquals(holdsBefore, bed.ok(h1, "apt-mark showhold"));
    }

    @Test @Order(4) void aSecondRestoreChangesNothing() {
        Map<String, String> now = files(h1);
        Gpuctl.Run again = Gpuctl.run("remove-node", "-i", inventory.toString(), "--restore-host", h1);
        assertEquals(0, again.code(), again::toString);
        assertFalse(again.err().contains("changed"), again::err);
        assertEquals(now, files(h1));
    }

    @Test @Order(5) void bootstrapJoinsTheHostAgainAlone() {
        Gpuctl.Run back = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, back.code(), back::toString);
        assertTrue(back.err().lines().anyMatch(l -> l.startsWith(h1) && l.contains("join") && l.contains("changed")), back::err);
        assertTrue(kubectl("get node " + h1).contains(" Ready "), "it joined alone");
        assertTrue(swaps(h1).isBlank(), "swap is off again");
        assertTrue(bed.ok(h1, "cat " + HostJournal.PATH).contains(" file-replaced " + HostJournal.encode("/etc/fstab") + " "), "a new journal");
    }

    static String kubectl(String args) {
        return bed.ok(bed.master(), KUBECTL + args);
    }
}
