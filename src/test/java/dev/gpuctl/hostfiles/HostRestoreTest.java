package dev.gpuctl.hostfiles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.hostfiles.HostJournal.FileCreated;
import dev.gpuctl.hostfiles.HostJournal.FileReplaced;
import dev.gpuctl.hostfiles.HostJournal.PackageHeld;
import dev.gpuctl.hostfiles.HostJournal.SwapOff;
import dev.gpuctl.hostfiles.HostJournal.UnitEnabled;
import dev.gpuctl.hostfiles.HostJournal.UnitMasked;
import dev.gpuctl.hostfiles.HostRestore.Answer;
import dev.gpuctl.hostfiles.HostRestore.Backup;
import dev.gpuctl.hostfiles.HostRestore.Plan;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a restore does, from what the host answers; and the script, run on this machine, puts files back exactly. */
class HostRestoreTest {
    @TempDir Path dir;

    @AfterEach void forgetJournal() throws Exception {
        HostJournalTest.sh("rm -rf " + TestJournals.DIR);
    }

    static String journal(HostJournal.Entry... entries) {
        StringBuilder sb = new StringBuilder();
        for (HostJournal.Entry e : entries) sb.append(HostJournal.line(e)).append('\n');
        return sb.toString();
    }

    static String answerText(String state, int archived, List<String> backups, String journal) {
        String hex = backups.isEmpty() ? "" : HexFormat.of().formatHex(backups.stream().map(b -> b + "\0").collect(Collectors.joining()).getBytes());
        return "state " + state + "\narchived " + archived + "\nbackups " + hex + "\njournal " + HexFormat.of().formatHex(journal.getBytes()) + "\n";
    }

    @Test void theAnswerIsReadWhateverTheBackupsAreCalled() {
        Answer a = HostRestore.answer(answerText("present", 1, List.of("f 0 /etc/a b\nc.gpuctl-orig", "l 0 /etc/fstab.gpuctl-orig"),
            journal(new FileCreated("/etc/x"))));
        assertEquals("present", a.journalState());
        assertEquals(1, a.archived());
        assertEquals(Map.of("/etc/a b\nc.gpuctl-orig", new Backup("/etc/a b\nc.gpuctl-orig", 'f', 0),
            "/etc/fstab.gpuctl-orig", new Backup("/etc/fstab.gpuctl-orig", 'l', 0)), a.backups());
        assertThrows(IllegalArgumentException.class, () -> HostRestore.answer("state present\n"));
        assertThrows(IllegalArgumentException.class, () -> HostRestore.answer(answerText("present", 0, List.of(), "") + "state absent\n"), "a field twice");
        assertThrows(IllegalArgumentException.class, () -> HostRestore.answer(answerText("maybe", 0, List.of(), "")));
    }

    @Test void everythingIsUndoneInTheReverseOrderOfTheChanges() {
        String j = journal(new SwapOff("/swap.img"), new SwapOff("/swap2"), new FileReplaced("/etc/fstab", "/etc/fstab.gpuctl-orig"),
            new UnitMasked("swap.img.swap", "generated"), new FileCreated("/etc/sysctl.d/k8s.conf"), new UnitEnabled("chrony", "disabled"),
            new UnitEnabled("kubelet", ""), new PackageHeld("kubelet"));
        Plan p = HostRestore.plan(HostRestore.answer(answerText("present", 0, List.of("f 0 /etc/fstab.gpuctl-orig"), j)));
        assertEquals(List.of("release the hold on kubelet", "disable chrony (it was disabled)", "remove /etc/sysctl.d/k8s.conf (gpuctl created it)",
            "unmask swap.img.swap (it was generated)", "put back /etc/fstab from /etc/fstab.gpuctl-orig (content, owner, mode)",
            "reload systemd", "turn swap /swap.img on again (it was on)", "turn swap /swap2 on again (it was on)"), p.actions().stream().map(HostRestore.Action::what).toList());
        assertEquals(List.of(), p.refusals());
        assertEquals(List.of("kubelet came with a package gpuctl installed (no such unit before): left enabled; gpuctl does not remove packages"), p.notes());
        assertTrue(p.archiveJournal());
        assertTrue(p.describe().startsWith("release the hold on kubelet; disable chrony"), p.describe());
        assertTrue(p.describe().contains("archive the journal /var/lib/gpuctl/journal"), p.describe());
    }

    @Test void aBackupThatIsALinkOrNotRootsIsRefusedNotFollowed() {
        String j = journal(new FileReplaced("/etc/fstab", "/etc/fstab.gpuctl-orig"), new FileReplaced("/etc/docker/daemon.json", "/etc/docker/daemon.json.gpuctl-orig"),
            new FileReplaced("/etc/chrony/sources.d/gpuctl.sources", "/etc/chrony/sources.d/gpuctl.sources.gpuctl-orig"));
        Plan p = HostRestore.plan(HostRestore.answer(answerText("present", 0,
            List.of("l 0 /etc/fstab.gpuctl-orig", "f 1000 /etc/docker/daemon.json.gpuctl-orig"), j)));
        assertEquals(List.of("/etc/docker/daemon.json: its backup /etc/docker/daemon.json.gpuctl-orig is owned by uid 1000, not root: not followed, not put back",
            "/etc/fstab: its backup /etc/fstab.gpuctl-orig is a symbolic link: not followed, not put back"), p.refusals());
        assertEquals(List.of("/etc/chrony/sources.d/gpuctl.sources: its backup /etc/chrony/sources.d/gpuctl.sources.gpuctl-orig is gone (put back already, or removed): left as it is"),
            p.notes());
        assertTrue(p.actions().isEmpty());
        assertFalse(p.nothingToDo());
        assertTrue(p.script().contains("exit 1"));
    }

    @Test void aHostWithoutAJournalGetsBackWhatItsBackupsProveAndIsToldWhatStays() {
        Plan p = HostRestore.plan(HostRestore.answer(answerText("absent", 0, List.of("f 0 /etc/fstab.gpuctl-orig"), "")));
        assertEquals(List.of("put back /etc/fstab from /etc/fstab.gpuctl-orig (content, owner, mode)"), p.actions().stream().map(HostRestore.Action::what).toList());
        assertFalse(p.archiveJournal());
        assertEquals(1, p.notes().size());
        assertTrue(p.notes().get(0).startsWith("this host has no change journal"), p.notes().toString());
        // restored already (journal archived, no backups), or never prepared: nothing to do
        assertTrue(HostRestore.plan(HostRestore.answer(answerText("absent", 1, List.of(), ""))).nothingToDo());
        assertTrue(HostRestore.plan(HostRestore.answer(answerText("absent", 0, List.of(), ""))).nothingToDo());
    }

    @Test void aJournalThatIsNotRootsRegularFileIsRefused() {
        Plan p = HostRestore.plan(HostRestore.answer(answerText("refused", 0, List.of("f 0 /etc/fstab.gpuctl-orig"), "")));
        assertTrue(p.actions().isEmpty());
        assertEquals(1, p.refusals().size());
        assertTrue(p.refusals().get(0).startsWith("/var/lib/gpuctl/journal is a symbolic link"), p.refusals().toString());
    }

    @Test void theJournalsUnreadableLinesAreNamedAndTheRestIsUndone() {
        String j = journal(new FileCreated("/etc/a")) + "v1 file-created 2f6574632f62";
        Plan p = HostRestore.plan(HostRestore.answer(answerText("present", 0, List.of(), j)));
        assertEquals(List.of("remove /etc/a (gpuctl created it)"), p.actions().stream().map(HostRestore.Action::what).toList());
        assertTrue(p.notes().get(0).startsWith("journal line 2: cut short"), p.notes().toString());
    }

    /** Runs the probe and the script against files under this JVM's journal directory (one of the probe's roots). */
    @Test void theScriptPutsFilesBackByteForByteWithOwnerAndModeRemovesWhatGpuctlMadeAndASecondRunFindsNothing() throws Exception {
        Path root = Files.createDirectories(TestJournals.DIR.resolve("etc"));
        Path site = root.resolve("site file.conf");
        byte[] original = {'a', 0, (byte) 0xff, '\n'};
        Files.write(site, original);
        HostJournalTest.sh("chown 0:2345 '" + site + "' && chmod 0640 '" + site + "' && touch -d 2001-02-03 '" + site + "'");
        Path made = root.resolve("made.conf");
        Path linkTarget = root.resolve("cm/real.conf");
        Files.createDirectories(linkTarget.getParent());
        Files.writeString(linkTarget, "cm\n");
        Path linked = root.resolve("linked.conf");
        Files.createSymbolicLink(linked, linkTarget);

        // what gpuctl's writes do: journal (and back up), then write
        for (Path p : List.of(site, made)) assertEquals(0, HostJournalTest.sh(HostJournal.beforeWrite(p.toString(), p.toString())).exit());
        assertEquals(0, HostJournalTest.sh(HostJournal.beforeWrite(linked.toString(), linkTarget.toString())).exit());
        Files.writeString(site, "gpuctl\n");
        HostJournalTest.sh("chmod 0644 '" + site + "'");
        Files.writeString(made, "gpuctl\n");
        Files.writeString(linkTarget, "gpuctl\n");
        String before = HostJournalTest.sh("stat -c '%s %a %u:%g %Y' '" + site + ".gpuctl-orig'").out();

        Plan plan = planHere();
        assertEquals(3, plan.actions().size(), plan.describe());
        HostJournalTest.Result r = HostJournalTest.sh(plan.script());
        assertEquals(0, r.exit(), r.toString());
        assertTrue(java.util.Arrays.equals(original, Files.readAllBytes(site)));
        assertEquals(before, HostJournalTest.sh("stat -c '%s %a %u:%g %Y' '" + site + "'").out());
        assertFalse(Files.exists(made));
        assertTrue(Files.isSymbolicLink(linked), "the link was replaced");
        assertEquals("cm\n", Files.readString(linkTarget));
        assertFalse(Files.exists(Path.of(site + ".gpuctl-orig")));
        assertFalse(Files.exists(TestJournals.DIR.resolve("journal")));
        assertEquals(1, HostRestore.answer(HostJournalTest.sh(HostRestore.PROBE).out()).archived());
        assertEquals("", HostJournalTest.sh("ls -A '" + root + "' | grep gpuctl || true").out(), "a temp file was left");

        assertTrue(planHere().nothingToDo(), "a second restore would change something");
    }

    @Test void aBackupSwappedForALinkIsNotFollowedAndTheJournalIsKept() throws Exception {
        Path root = Files.createDirectories(TestJournals.DIR.resolve("etc"));
        Path site = root.resolve("fstab");
        Files.writeString(site, "site\n");
        assertEquals(0, HostJournalTest.sh(HostJournal.beforeWrite(site.toString(), site.toString())).exit());
        Files.writeString(site, "gpuctl\n");
        Path secret = dir.resolve("secret");
        Files.writeString(secret, "not for /etc\n");
        Path backup = Path.of(site + ".gpuctl-orig");
        Files.delete(backup);
        Files.createSymbolicLink(backup, secret);

        Plan plan = planHere();
        assertEquals(1, plan.refusals().size(), plan.describe());
        HostJournalTest.Result r = HostJournalTest.sh(plan.script());
        assertEquals(1, r.exit(), r.toString());
        assertTrue(r.err().contains("its backup " + backup + " is a symbolic link: not followed"), r.err());
        assertEquals("gpuctl\n", Files.readString(site));
        assertTrue(Files.exists(TestJournals.DIR.resolve("journal")), "the journal was archived with a change left undone");

        // the same link planted after the plan was made: the script checks again as it uses the backup
        Files.delete(backup);
        Files.writeString(backup, "site\n");
        Plan planned = planHere();
        assertEquals(List.of(), planned.refusals());
        Files.delete(backup);
        Files.createSymbolicLink(backup, secret);
        r = HostJournalTest.sh(planned.script());
        assertEquals(1, r.exit(), r.toString());
        assertTrue(r.err().contains("is no longer root's regular file: not followed"), r.err());
        assertEquals("gpuctl\n", Files.readString(site));
    }

    /** The plan for this machine's files under the test's journal directory only (the probe also searches /etc and /root). */
    static Plan planHere() throws Exception {
        HostJournalTest.Result r = HostJournalTest.sh(HostRestore.PROBE);
        assertEquals(0, r.exit(), r.toString());
        Answer a = HostRestore.answer(r.out());
        Map<String, Backup> mine = a.backups().entrySet().stream().filter(e -> e.getKey().startsWith(TestJournals.DIR.toString()))
            .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        return HostRestore.plan(new Answer(a.journalState(), a.archived(), mine, a.journal()));
    }
}
