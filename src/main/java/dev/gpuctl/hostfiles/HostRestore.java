package dev.gpuctl.hostfiles;

import dev.gpuctl.hostfiles.HostJournal.Entry;
import dev.gpuctl.hostfiles.HostJournal.FileCreated;
import dev.gpuctl.hostfiles.HostJournal.FileReplaced;
import dev.gpuctl.hostfiles.HostJournal.PackageHeld;
import dev.gpuctl.hostfiles.HostJournal.SwapOff;
import dev.gpuctl.hostfiles.HostJournal.UnitEnabled;
import dev.gpuctl.hostfiles.HostJournal.UnitMasked;
import dev.gpuctl.text.ShellWords;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Putting a host's preparation back as it was before gpuctl, from its change journal ({@link HostJournal}) and the
 * {@code .gpuctl-orig} backups: what the host answers to {@link #PROBE} is read into a {@link Answer}, turned into a
 * {@link Plan} (what will be done, in the reverse order of the changes; what is refused; what cannot be undone) and
 * into the shell script that does it. The script checks each backup again as it uses it (a symbolic link or a file
 * not root's is reported, never followed), puts files back byte for byte with their owner and mode through a
 * temp file and a rename, and archives the journal last ({@code journal.restored-TIME}), so that a second run finds
 * nothing to do. A host without a journal (prepared before gpuctl kept one) gets back what its backups alone prove.
 * Pure.
 */
public final class HostRestore {
    private HostRestore() {}

    /** Where gpuctl writes files on a host, searched for backups that the journal does not name. */
    public static final List<String> BACKUP_ROOTS = List.of("/etc", "/root", HostJournal.DIR);

    private static final String J = HostJournal.PATH;

    /**
     * Read-only, one field a line ({@code NAME VALUE}): {@code state} the journal's (present, absent or refused),
     * {@code archived} how many archived journals there are, {@code backups} every backup under {@link #BACKUP_ROOTS}
     * (type, owner, path; NUL-separated) and {@code journal} the journal itself, both as hex so that no name or line
     * can break the answer.
     */
    public static final String PROBE = "J=" + J + "; "
        + "if [ -L $J ] || { [ -e $J ] && { [ ! -f $J ] || [ \"$(stat -c %u $J)\" != 0 ]; }; }; then echo 'state refused'; "
        + "elif [ -f $J ]; then echo 'state present'; else echo 'state absent'; fi; "
        + "echo \"archived $(ls -d " + J + ".restored-* 2>/dev/null | wc -l)\"; printf 'backups '; "
        + "find " + String.join(" ", BACKUP_ROOTS) + " -xdev -name '*" + HostJournal.BACKUP_SUFFIX + "' -printf '%y %U %p\\0' 2>/dev/null"
        + " | od -An -tx1 -v | tr -d ' \\n'; echo; printf 'journal '; "
        + "if [ -f $J ] && [ ! -L $J ] && [ \"$(stat -c %u $J)\" = 0 ]; then od -An -tx1 -v $J | tr -d ' \\n'; fi; echo";

    /** A backup as found: {@code type} as find's %y (f file, l link, d directory, ...), its owner's uid. */
    public record Backup(String path, char type, long uid) {
        /** Why it must not be used; empty when it is root's regular file. */
        String unsafe() {
            if (type == 'l') return "is a symbolic link";
            if (type != 'f') return "is not a regular file";
            if (uid != 0) return "is owned by uid " + uid + ", not root";
            return "";
        }
    }

    /** What the host answered to {@link #PROBE}. */
    public record Answer(String journalState, int archived, Map<String, Backup> backups, String journal) {
        public Answer { backups = Map.copyOf(backups); }
    }

    /** Reads {@link #PROBE}'s answer; IllegalArgumentException when it is not shaped like one. */
    public static Answer answer(String stdout) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : stdout.split("\n")) {
            if (line.isEmpty()) continue;
            String[] f = line.split(" ", 2);
            if (!FIELDS.contains(f[0]) || fields.putIfAbsent(f[0], f.length > 1 ? f[1] : "") != null) {
                throw new IllegalArgumentException("unexpected line: " + HostJournal.abbreviate(line));
            }
        }
        if (!fields.keySet().containsAll(FIELDS)) throw new IllegalArgumentException("not the restore probe's answer: " + fields.keySet());
        String state = fields.get("state");
        String archived = fields.get("archived");
        if (!state.matches("present|absent|refused") || !archived.matches("[0-9]+")) {
            throw new IllegalArgumentException("unexpected head: " + HostJournal.abbreviate("state " + state + " | archived " + archived));
        }
        Map<String, Backup> backups = new LinkedHashMap<>();
        byte[] bytes = hex(fields.get("backups"), "the backup list");
        int from = 0;
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] != 0) continue;
            String rec = new String(bytes, from, i - from, StandardCharsets.UTF_8);
            from = i + 1;
            String[] f = rec.split(" ", 3);
            if (f.length != 3 || f[0].length() != 1 || !f[1].matches("[0-9]+") || !f[2].startsWith("/")) {
                throw new IllegalArgumentException("unexpected backup entry: " + HostJournal.abbreviate(rec));
            }
            backups.put(f[2], new Backup(f[2], f[0].charAt(0), Long.parseLong(f[1])));
        }
        return new Answer(state, Integer.parseInt(archived), backups, new String(hex(fields.get("journal"), "the journal"), StandardCharsets.UTF_8));
    }

    /** The fields of {@link #PROBE}'s answer, each once. */
    private static final Set<String> FIELDS = Set.of("state", "archived", "backups", "journal");

    private static byte[] hex(String text, String what) {
        String h = text.strip();
        if (!h.matches("([0-9a-f]{2})*")) throw new IllegalArgumentException(what + " is not hex");
        return HexFormat.of().parseHex(h);
    }

    /** One thing restore does: for people, and as shell. */
    public record Action(String what, String shell) {}

    /**
     * What a restore does on a host: actions in order; refusals (a backup or the journal gpuctl will not follow: the
     * restore then fails, naming them, and keeps the journal); notes (what it cannot undo, lines of the journal it
     * could not read). Nothing to do when there are no actions and no refusals.
     */
    public record Plan(List<Action> actions, List<String> refusals, List<String> notes, boolean archiveJournal) {
        public Plan {
            actions = List.copyOf(actions);
            refusals = List.copyOf(refusals);
            notes = List.copyOf(notes);
        }

        public boolean nothingToDo() { return actions.isEmpty() && refusals.isEmpty() && !archiveJournal; }

        /** For people: what it would do, refuse and leave, one clause each. */
        public String describe() {
            List<String> parts = new ArrayList<>();
            actions.forEach(a -> parts.add(a.what()));
            if (archiveJournal) parts.add("archive the journal " + J + " (" + J + ".restored-TIME)");
            refusals.forEach(r -> parts.add("REFUSED " + r));
            notes.forEach(n -> parts.add("cannot undo: " + n));
            return String.join("; ", parts);
        }

        /**
         * The script that does it: every action in order; a backup that is no longer root's regular file is not
         * followed but named, and then (as for a refusal planned) the script exits 1 without archiving the journal; a
         * command that fails stops it at once with what failed.
         */
        public String script() {
            StringBuilder sb = new StringBuilder("set -u; bad=''; ");
            for (String r : refusals) sb.append("bad=\"$bad\"").append(ShellWords.quote("\n  " + r)).append("; ");
            for (Action a : actions) sb.append(a.shell()).append("; ");
            sb.append("if [ -n \"$bad\" ]; then printf 'not restored (fix each, then run again; the journal is kept):%s\\n' \"$bad\" >&2; exit 1; fi");
            if (archiveJournal) {
                sb.append("; mv -fT -- ").append(J).append(' ').append(J).append(".restored-$(date -u +%Y%m%dT%H%M%SZ)")
                    .append(" || { echo 'cannot archive ").append(J).append("' >&2; exit 1; }");
            }
            return sb.toString();
        }
    }

    /** Unit states in which a unit starts by itself or is part of another: gpuctl's enable changed nothing there. */
    private static final Set<String> ALREADY_ON = Set.of("enabled", "static", "alias", "indirect", "generated", "enabled-runtime");

    /** The plan for a host, from what it answered. */
    public static Plan plan(Answer a) {
        List<Action> actions = new ArrayList<>();
        List<String> refusals = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        if (a.journalState().equals("refused")) {
            refusals.add(J + " is a symbolic link, not a regular file, or not root's: not read; make it root's regular file"
                + " (or move it away to restore from the backups alone)");
            return new Plan(actions, refusals, notes, false);
        }
        List<Entry> entries = new ArrayList<>();
        if (a.journalState().equals("present")) {
            HostJournal.Parsed parsed = HostJournal.parse(a.journal());
            entries.addAll(parsed.entries());
            parsed.problems().forEach(p -> notes.add("journal " + p));
        }
        // backups the journal does not name (a host prepared before the journal): what they prove comes back first
        Set<String> named = new LinkedHashSet<>();
        for (Entry e : entries) if (e instanceof FileCreated || e instanceof FileReplaced) named.add(e.args().get(0));
        List<Entry> proved = new ArrayList<>();
        for (String b : a.backups().keySet()) {
            String path = b.substring(0, b.length() - HostJournal.BACKUP_SUFFIX.length());
            if (!named.contains(path)) proved.add(new FileReplaced(path, b));
        }
        if (!a.journalState().equals("present") && !proved.isEmpty()) {
            notes.add("this host has no change journal (prepared by a gpuctl that kept none): only files with a "
                + HostJournal.BACKUP_SUFFIX + " backup are put back; files gpuctl created, units it enabled or masked, package"
                + " holds and swap are left as they are");
        }
        entries.addAll(0, proved);
        boolean units = false;
        List<Action> swapOns = new ArrayList<>();
        for (int i = entries.size() - 1; i >= 0; i--) {
            Entry e = entries.get(i);
            if (e instanceof FileReplaced f) {
                Backup b = a.backups().get(f.backup());
                if (b == null) {
                    notes.add(f.path() + ": its backup " + f.backup() + " is gone (put back already, or removed): left as it is");
                } else if (!b.unsafe().isEmpty()) {
                    refusals.add(f.path() + ": its backup " + f.backup() + " " + b.unsafe() + ": not followed, not put back");
                } else {
                    actions.add(new Action("put back " + f.path() + " from " + f.backup() + " (content, owner, mode)", putBack(f)));
                }
            } else if (e instanceof FileCreated c) {
                actions.add(new Action("remove " + c.path() + " (gpuctl created it)",
                "rm -f -- " + ShellWords.quote(c.path()) + " " + ShellWords.quote(c.path() + HostJournal.BACKUP_SUFFIX)
                    + " || { echo " + ShellWords.quote("cannot remove " + c.path()) + " >&2; exit 1; }"));
            } else if (e instanceof UnitEnabled u) {
                String was = u.before();
                if (was.equals("disabled") || was.equals("masked")) {
                    String verb = was.equals("disabled") ? "disable" : "mask";
                    units = true;
                    actions.add(new Action(verb + " " + u.unit() + " (it was " + was + ")", "systemctl " + verb + " --now -- "
                        + ShellWords.quote(u.unit()) + " || { echo " + ShellWords.quote("systemctl " + verb + " " + u.unit() + " failed") + " >&2; exit 1; }"));
                } else if (!ALREADY_ON.contains(was)) {
                    notes.add(u.unit() + " came with a package gpuctl installed (" + (was.isEmpty() ? "no such unit before" : was)
                        + "): left enabled; gpuctl does not remove packages");
                }
            } else if (e instanceof UnitMasked m) {
                units = true;
                String q = ShellWords.quote(m.unit());
                boolean enable = m.before().equals("enabled");
                actions.add(new Action("unmask " + m.unit() + (enable ? " and enable it" : "") + " (it was " + (m.before().isEmpty() ? "unknown" : m.before()) + ")",
                    "systemctl unmask -- " + q + (enable ? " && systemctl enable -- " + q : "")
                        + " || { echo " + ShellWords.quote("systemctl unmask " + m.unit() + " failed") + " >&2; exit 1; }"));
            } else if (e instanceof PackageHeld p) {
                String q = ShellWords.quote(p.pkg());
                actions.add(new Action("release the hold on " + p.pkg(), "if apt-mark showhold | grep -qxF -- " + q
                    + "; then apt-mark unhold -- " + q + " >/dev/null || { echo " + ShellWords.quote("apt-mark unhold " + p.pkg() + " failed") + " >&2; exit 1; }; fi"));
            } else if (e instanceof SwapOff s) {
                String q = ShellWords.quote(s.device());
                swapOns.add(0, new Action("turn swap " + s.device() + " on again (it was on)", "systemctl daemon-reload; "
                    + "if ! swapon --show=NAME --noheadings | grep -qxF -- " + q + "; then swapon -- " + q + " || { echo "
                    + ShellWords.quote("swapon " + s.device() + " failed") + " >&2; exit 1; }; fi"));
            }
        }
        if (units) actions.add(new Action("reload systemd", "systemctl daemon-reload"));
        // last, once fstab and the swap units are back, in the order they were on (as /proc/swaps listed them)
        actions.addAll(swapOns);
        return new Plan(actions, refusals, notes, a.journalState().equals("present"));
    }

    /**
     * Puts {@code f.path()} back from its backup (into a link's target, the link kept) through a fresh temp file beside
     * it and a rename, keeping the backup's owner, mode and times; then removes the backup. The backup is checked as it
     * is used: not followed unless it is root's regular file.
     */
    private static String putBack(FileReplaced f) {
        String p = ShellWords.quote(f.path());
        return "b=" + ShellWords.quote(f.backup()) + "; "
            + "if [ -L \"$b\" ] || [ ! -f \"$b\" ] || [ \"$(stat -c %u -- \"$b\")\" != 0 ]; then bad=\"$bad\"" + ShellWords.quote("\n  " + f.path()
                + ": its backup " + f.backup() + " is no longer root's regular file: not followed, not put back") + "; "
            + "else tmp=''; t=$(readlink -e -- " + p + ") || t=" + p + "; tmp=$(mktemp -- \"$t.gpuctl-XXXXXX\") && cp -p -- \"$b\" \"$tmp\" && mv -fT -- \"$tmp\" \"$t\" "
            + "&& rm -f -- \"$b\" || { rm -f -- \"$tmp\"; echo " + ShellWords.quote("cannot put back " + f.path() + " from " + f.backup()) + " >&2; exit 1; }; fi";
    }
}
