package dev.gpuctl.hostfiles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.hostfiles.HostJournal.Entry;
import dev.gpuctl.hostfiles.HostJournal.FileCreated;
import dev.gpuctl.hostfiles.HostJournal.FileReplaced;
import dev.gpuctl.hostfiles.HostJournal.PackageHeld;
import dev.gpuctl.hostfiles.HostJournal.SwapOff;
import dev.gpuctl.hostfiles.HostJournal.UnitEnabled;
import dev.gpuctl.hostfiles.HostJournal.UnitMasked;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The change journal's lines: written by the host's shell, read back by the pure parser, whatever the names hold. */
class HostJournalTest {
    @TempDir Path dir;

    @AfterEach void forgetJournal() throws Exception {
        sh("rm -rf " + TestJournals.DIR);
    }

    record Result(int exit, String out, String err) {}

    static Result sh(String command) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", TestJournals.redirect(command)).redirectInput(new File("/dev/null")).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Result(p.waitFor(), out, err);
    }

    static String journal() throws Exception {
        Path j = TestJournals.DIR.resolve("journal");
        return Files.exists(j) ? Files.readString(j) : "";
    }

    @Test void everyKindRoundTripsThroughItsLineWhateverItsNamesHold() {
        List<Entry> all = List.of(new FileCreated("/etc/with space/and\nnewline.conf"), new FileReplaced("/etc/fstab", "/etc/fstab.gpuctl-orig"),
            new UnitEnabled("chrony.service", "disabled"), new UnitEnabled("kubelet", ""), new UnitMasked("dev-sda2.swap", "generated"),
            new UnitMasked("swap\\x2dimg.swap", "enabled"), new PackageHeld("kubelet"), new SwapOff("/swap file.img"));
        StringBuilder text = new StringBuilder();
        for (Entry e : all) {
            String line = HostJournal.line(e);
            assertTrue(line.matches("v1 [a-z-]+( ([0-9a-f]+|-))+ \\."), line);
            text.append(line).append('\n');
        }
        HostJournal.Parsed p = HostJournal.parse(text.toString());
        assertEquals(all, p.entries());
        assertEquals(List.of(), p.problems());
        assertEquals("v1 file-created 2f6574632f6b2e636f6e66 .", HostJournal.line(new FileCreated("/etc/k.conf")));
        assertEquals("v1 unit-enabled 6b7562656c6574 - .", HostJournal.line(new UnitEnabled("kubelet", "")));
    }

    @Test void aLineCutShortByACrashAndForeignLinesAreNamedAndSkipped() {
        String good = HostJournal.line(new FileCreated("/etc/a"));
        String text = good + "\n"
            + "v2 file-created 2f .\n"                                         // a newer format
            + "v1 chmod 2f6574632f61 .\n"                                      // an unknown kind
            + "v1 file-created 2f6574632f6 .\n"                                // odd hex
            + "v1 file-created 6574632f61 .\n"                                 // not absolute (etc/a)
            + "v1 file-replaced 2f6574632f61 2f746d702f78 .\n"                 // a backup elsewhere than PATH.gpuctl-orig
            + "v1 package-held 2d2d666f726365 .\n"                             // --force: an option, not a name
            + "\n"
            + "v1 unit-masked 737761702e696d672e73776170 67656e65";           // the crash: no " ." and no newline
        HostJournal.Parsed p = HostJournal.parse(text);
        assertEquals(List.of(new FileCreated("/etc/a")), p.entries());
        assertEquals(8, p.problems().size(), p.problems().toString());
        assertTrue(p.problems().get(0).startsWith("line 2: not a v1 journal line"), p.problems().toString());
        assertTrue(p.problems().get(1).startsWith("line 3: unknown change kind chmod"), p.problems().toString());
        assertTrue(p.problems().get(2).startsWith("line 4: not hex"), p.problems().toString());
        assertTrue(p.problems().get(3).startsWith("line 5: not an absolute path: etc/a"), p.problems().toString());
        assertTrue(p.problems().get(4).contains("must be /etc/a.gpuctl-orig, not /tmp/x"), p.problems().toString());
        assertTrue(p.problems().get(5).startsWith("line 7: not a unit or package name: --force"), p.problems().toString());
        assertEquals("line 8: empty", p.problems().get(6));
        assertTrue(p.problems().get(7).startsWith("line 9: cut short (v1 unit-masked"), p.problems().toString());
    }

    @Test void theFirstLineOfAChangeIsTheOneThatCountsAndAFilesTwoKindsAreOneChange() {
        String text = HostJournal.line(new FileCreated("/etc/a")) + "\n" + HostJournal.line(new FileReplaced("/etc/a", "/etc/a.gpuctl-orig")) + "\n"
            + HostJournal.line(new UnitMasked("x.swap", "generated")) + "\n" + HostJournal.line(new UnitMasked("x.swap", "masked")) + "\n";
        assertEquals(List.of(new FileCreated("/etc/a"), new UnitMasked("x.swap", "generated")), HostJournal.parse(text).entries());
    }

    @Test void decodeRefusesWhatEncodeNeverWrites() {
        assertEquals("", HostJournal.decode("-"));
        assertThrows(IllegalArgumentException.class, () -> HostJournal.decode("2F"));
        assertThrows(IllegalArgumentException.class, () -> HostJournal.decode(""));
        assertThrows(IllegalArgumentException.class, () -> HostJournal.decode("zz"));
    }

    @Test void theHostsShellJournalsAWriteOnceBacksUpOnceAndItsLineReadsBackTheOddestPath() throws Exception {
        Path odd = dir.resolve("dir with space").resolve("new\nline 'quoted' $x.conf");
        Files.createDirectories(odd.getParent());
        Files.writeString(odd, "site\n");
        Path fresh = dir.resolve("fresh.conf");

        assertEquals(0, sh(HostJournal.beforeWrite(odd.toString(), odd.toString())).exit());
        assertEquals(0, sh(HostJournal.beforeWrite(fresh.toString(), fresh.toString())).exit());
        assertEquals("site\n", Files.readString(Path.of(odd + ".gpuctl-orig")));
        String once = journal();
        assertEquals("600", sh("stat -c %a " + TestJournals.DIR.resolve("journal")).out().strip());
        assertEquals(List.of(new FileReplaced(odd.toString(), odd + ".gpuctl-orig"), new FileCreated(fresh.toString())),
            HostJournal.parse(once).entries());

        // re-runs (the file now exists, gpuctl's content in it) add nothing, and the first backup is kept
        Files.writeString(odd, "gpuctl's\n");
        Files.writeString(fresh, "gpuctl's\n");
        assertEquals(0, sh(HostJournal.beforeWrite(odd.toString(), odd.toString())).exit());
        assertEquals(0, sh(HostJournal.beforeWrite(fresh.toString(), fresh.toString())).exit());
        assertEquals(once, journal());
        assertEquals("site\n", Files.readString(Path.of(odd + ".gpuctl-orig")));
    }

    @Test void unitsHoldsAndSwapAreJournalledWithWhatTheyWereAndOnlyWhenTheyChange() throws Exception {
        // systemctl and apt-mark stand-ins: chrony disabled, kubelet unknown, docker enabled; vim held
        Path bin = dir.resolve("bin");
        Files.createDirectories(bin);
        Files.writeString(bin.resolve("systemctl"), "#!/bin/sh\ncase \"$3\" in chrony) echo disabled;; docker) echo enabled;; *) exit 1;; esac\n");
        Files.writeString(bin.resolve("apt-mark"), "#!/bin/sh\necho vim\n");
        sh("chmod +x " + bin + "/*");
        String path = "PATH=" + bin + ":$PATH; ";
        assertEquals(0, sh(path + HostJournal.beforeEnable(List.of("chrony", "kubelet", "docker"))).exit());
        assertEquals(0, sh(path + HostJournal.beforeHold("kubelet vim")).exit());
        assertEquals(0, sh(path + HostJournal.beforeEnable(List.of("chrony"))).exit());
        assertEquals(List.of(new UnitEnabled("chrony", "disabled"), new UnitEnabled("kubelet", ""), new PackageHeld("kubelet")),
            HostJournal.parse(journal()).entries());
    }

    @Test void aJournalThatIsALinkIsRefusedAndNothingIsWrittenThroughIt() throws Exception {
        Files.createDirectories(TestJournals.DIR);
        Path elsewhere = dir.resolve("elsewhere");
        Files.writeString(elsewhere, "");
        Files.createSymbolicLink(TestJournals.DIR.resolve("journal"), elsewhere);
        Path f = dir.resolve("f");
        Result r = sh(HostJournal.beforeWrite(f.toString(), f.toString()));
        assertEquals(1, r.exit(), r.toString());
        assertTrue(r.err().contains("refusing to write its change journal"), r.err());
        assertEquals("", Files.readString(elsewhere));
        assertFalse(Files.exists(f));
    }

    @Test void aPathKnownOnlyOnTheHostIsJournalledAndBackedUpTheSameWay() throws Exception {
        Path home = Files.createDirectories(dir.resolve("home/ann/.kube"));
        Files.writeString(home.resolve("config"), "ann's\n");
        String gw = HostJournal.SHELL_FUNCTIONS + "h=" + dir.resolve("home/ann") + "; gw \"$h/.kube/config\" && gw \"$h/.kube/other\"";
        assertEquals(0, sh(gw).exit());
        assertEquals(0, sh(gw).exit());
        assertEquals("ann's\n", Files.readString(home.resolve("config.gpuctl-orig")));
        assertEquals(List.of(new FileReplaced(home.resolve("config").toString(), home.resolve("config.gpuctl-orig").toString()),
            new FileCreated(home.resolve("other").toString())), HostJournal.parse(journal()).entries());
        assertEquals(2, journal().lines().count(), "a re-run added a line");
    }
}
