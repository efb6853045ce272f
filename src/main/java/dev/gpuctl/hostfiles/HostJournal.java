package dev.gpuctl.hostfiles;

import dev.gpuctl.text.ShellWords;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The change journal gpuctl keeps on each host ({@value #PATH}, root's, 0600): one line per change it makes to the
 * host's preparation, appended by the same remote command that makes the change, before it makes it, so that no
 * change is ever made without its line. A line is {@code v1 KIND ARG... .}: every argument is the hex of its bytes
 * ({@code -} for an empty one), so no path, unit or package name can break the format, and a line cut short by a
 * crash lacks its final {@code " ."} and is recognised. A change is journalled once: the first line for a kind and
 * its first argument (the {@link #key}) is the one that says how the host was before gpuctl; re-runs add nothing.
 * Pure: shell text out, lines in, records out.
 */
public final class HostJournal {
    private HostJournal() {}

    public static final String DIR = "/var/lib/gpuctl";
    public static final String PATH = DIR + "/journal";
    /** The suffix of the file in which gpuctl keeps what a file was before it first changed it. */
    public static final String BACKUP_SUFFIX = ".gpuctl-orig";
    static final String VERSION = "v1";

    /** One change gpuctl made to a host. */
    public sealed interface Entry {
        /** The line's kind word. */
        String kind();

        /** The arguments, in the line's order (not encoded). */
        List<String> args();
    }

    /** A file gpuctl wrote where there was none: restore removes it. */
    public record FileCreated(String path) implements Entry {
        @Override public String kind() { return "file-created"; }
        @Override public List<String> args() { return List.of(path); }
    }

    /** A file that existed and that gpuctl changed, its content, owner and mode kept in {@code backup} first. */
    public record FileReplaced(String path, String backup) implements Entry {
        @Override public String kind() { return "file-replaced"; }
        @Override public List<String> args() { return List.of(path, backup); }
    }

    /** A systemd unit gpuctl enabled; {@code before} is what {@code systemctl is-enabled} said first (empty: no such unit). */
    public record UnitEnabled(String unit, String before) implements Entry {
        @Override public String kind() { return "unit-enabled"; }
        @Override public List<String> args() { return List.of(unit, before); }
    }

    /** A systemd unit gpuctl masked; {@code before} is what {@code systemctl is-enabled} said first. */
    public record UnitMasked(String unit, String before) implements Entry {
        @Override public String kind() { return "unit-masked"; }
        @Override public List<String> args() { return List.of(unit, before); }
    }

    /** A package gpuctl held ({@code apt-mark hold}) that was not held before. */
    public record PackageHeld(String pkg) implements Entry {
        @Override public String kind() { return "package-held"; }
        @Override public List<String> args() { return List.of(pkg); }
    }

    /** A swap area that was active when gpuctl turned swap off ({@code /proc/swaps}' Filename). */
    public record SwapOff(String device) implements Entry {
        @Override public String kind() { return "swap-off"; }
        @Override public List<String> args() { return List.of(device); }
    }

    /** What the journal says, and the lines it could not read (each "line N: why"). */
    public record Parsed(List<Entry> entries, List<String> problems) {
        public Parsed {
            entries = List.copyOf(entries);
            problems = List.copyOf(problems);
        }
    }

    /** The hex of the string's UTF-8 bytes; "-" for the empty string. */
    public static String encode(String s) {
        return s.isEmpty() ? "-" : HexFormat.of().formatHex(s.getBytes(StandardCharsets.UTF_8));
    }

    /** The inverse of {@link #encode}; IllegalArgumentException on anything else. */
    public static String decode(String field) {
        if (field.equals("-")) return "";
        if (field.isEmpty() || field.length() % 2 != 0 || !field.matches("[0-9a-f]+")) {
            throw new IllegalArgumentException("not hex: " + abbreviate(field));
        }
        return new String(HexFormat.of().parseHex(field), StandardCharsets.UTF_8);
    }

    /** The journal line for an entry, without its newline. */
    public static String line(Entry e) {
        StringBuilder sb = new StringBuilder(VERSION).append(' ').append(e.kind());
        for (String a : e.args()) sb.append(' ').append(encode(a));
        return sb.append(" .").toString();
    }

    /** What makes two lines the same change: the version, the kind (a file's two kinds are one) and the first argument, encoded. */
    public static String key(Entry e) {
        String kind = e instanceof FileCreated || e instanceof FileReplaced ? "file" : e.kind();
        return VERSION + " " + kind + " " + encode(e.args().get(0)) + " ";
    }

    /**
     * Reads a journal: the entries in the order the changes were made, each change once (its first line); a line cut
     * short (no final " ."), of an unknown kind or version, or with a bad field is skipped and named in the problems.
     */
    public static Parsed parse(String text) {
        List<Entry> entries = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String l = lines[i];
            int n = i + 1;
            if (l.isEmpty()) {
                if (i < lines.length - 1) problems.add("line " + n + ": empty");
                continue;
            }
            if (!l.endsWith(" .")) {
                problems.add("line " + n + ": cut short (" + abbreviate(l) + "): the change it began to record was not made");
                continue;
            }
            String[] f = l.substring(0, l.length() - 2).split(" ", -1);
            if (f.length < 3 || !f[0].equals(VERSION)) {
                problems.add("line " + n + ": not a " + VERSION + " journal line (" + abbreviate(l) + ")");
                continue;
            }
            Entry e;
            try {
                e = entry(f);
            } catch (IllegalArgumentException ex) {
                problems.add("line " + n + ": " + ex.getMessage());
                continue;
            }
            if (seen.add(key(e))) entries.add(e);
        }
        return new Parsed(entries, problems);
    }

    private static Entry entry(String[] f) {
        String kind = f[1];
        int want = switch (kind) {
            case "file-created", "package-held", "swap-off" -> 1;
            case "file-replaced", "unit-enabled", "unit-masked" -> 2;
            default -> throw new IllegalArgumentException("unknown change kind " + abbreviate(kind));
        };
        if (f.length - 2 != want) throw new IllegalArgumentException(kind + " takes " + want + " field(s), got " + (f.length - 2));
        String a = decode(f[2]);
        String b = want == 2 ? decode(f[3]) : null;
        return switch (kind) {
            case "file-created" -> new FileCreated(absolute(a));
            case "file-replaced" -> {
                if (!b.equals(a + BACKUP_SUFFIX)) throw new IllegalArgumentException("the backup of " + a + " must be " + a + BACKUP_SUFFIX + ", not " + b);
                yield new FileReplaced(absolute(a), b);
            }
            case "unit-enabled" -> new UnitEnabled(name(a), b);
            case "unit-masked" -> new UnitMasked(name(a), b);
            case "package-held" -> new PackageHeld(name(a));
            default -> new SwapOff(absolute(a));
        };
    }

    private static String absolute(String p) {
        if (!p.startsWith("/") || p.indexOf('\0') >= 0) throw new IllegalArgumentException("not an absolute path: " + abbreviate(p));
        return p;
    }

    /** A unit or package name: one word of printable characters, never an option. */
    private static String name(String s) {
        if (!s.matches("[A-Za-z0-9@._:+\\\\-]+") || s.startsWith("-")) throw new IllegalArgumentException("not a unit or package name: " + abbreviate(s));
        return s;
    }

    static String abbreviate(String s) {
        String t = s.replaceAll("[^\\x20-\\x7e]", "?");
        return t.length() > 60 ? t.substring(0, 57) + "..." : t;
    }

    // ---- shell text: how commands on the host append to the journal ----

    /**
     * Defines {@code gj KIND HEX...} and {@code hx STRING} in a command's shell: {@code hx} prints a string's hex
     * ({@link #encode}); {@code gj} appends {@code v1 KIND HEX... .} to the journal unless a line for the same kind and
     * first argument is there already; {@code gw PATH} does {@link #beforeWrite} for a path known only on the host. It
     * creates {@value #DIR} (0755) and the journal (0600) when missing, and refuses
     * (exit 1, before the change) a journal or directory that is a link or not root's.
     */
    public static final String SHELL_FUNCTIONS =
        "hx() { if [ -z \"$1\" ]; then echo -; else printf %s \"$1\" | od -An -tx1 -v | tr -d ' \\n'; fi; }; "
        + "gj() { [ -e " + DIR + " ] || [ -L " + DIR + " ] || install -d -m 0755 " + DIR + " || return 1; "
        + "me=$(id -u); if [ -L " + DIR + " ] || [ ! -d " + DIR + " ] || [ \"$(stat -c %u " + DIR + ")\" != \"$me\" ] "
        + "|| [ -L " + PATH + " ] || { [ -e " + PATH + " ] && { [ ! -f " + PATH + " ] || [ \"$(stat -c %u " + PATH + ")\" != \"$me\" ]; }; }; then "
        + "echo 'gpuctl: refusing to write its change journal " + PATH + ": it and " + DIR
        + " must be root-owned and no link; fix them and run again' >&2; return 1; fi; "
        + "grep -q \"^" + VERSION + " $1 $2 \" " + PATH + " 2>/dev/null && return 0; "
        + "( umask 077; printf '%s .\\n' \"" + VERSION + " $*\" >> " + PATH + " ); }; "
        // gw PATH: beforeWrite for a path known only on the host (a user's home, say)
        + "gw() { _go=\"$1" + BACKUP_SUFFIX + "\"; if { [ -e \"$1\" ] || [ -L \"$1\" ]; } && [ ! -e \"$_go\" ] && [ ! -L \"$_go\" ]; then "
        + "cp -p -- \"$1\" \"$_go\" || return 1; fi; _gh=$(hx \"$1\"); "
        + "grep -qE \"^" + VERSION + " file-(created|replaced) $_gh \" " + PATH + " 2>/dev/null && return 0; "
        + "if [ -e \"$1\" ] || [ -L \"$1\" ]; then gj file-replaced \"$_gh\" \"$(hx \"$_go\")\"; else gj file-created \"$_gh\"; fi; }; ";

    /** A call of {@code gj} for an entry known to gpuctl (every argument a literal hex word): needs {@link #SHELL_FUNCTIONS}. */
    public static String append(Entry e) {
        StringBuilder sb = new StringBuilder("gj ").append(e.kind());
        for (String a : e.args()) sb.append(' ').append(encode(a));
        return sb.toString();
    }

    /**
     * Shell text that journals a file about to be written at {@code path} (a link's {@code target} holds the content):
     * when it exists, its backup is made once ({@code PATH.gpuctl-orig}, never overwritten, a link planted there never
     * followed) and the file journalled as replaced; else journalled as created. Exit non-zero when either fails: the
     * write must not happen then.
     */
    public static String beforeWrite(String path, String target) {
        String p = ShellWords.quote(path);
        String t = ShellWords.quote(target);
        String orig = ShellWords.quote(path + BACKUP_SUFFIX);
        String exists = "{ [ -e " + p + " ] || [ -L " + p + " ]; }";
        return SHELL_FUNCTIONS + "if " + exists + " && [ ! -e " + orig + " ] && [ ! -L " + orig + " ]; then cp -p -- " + t + " " + orig
            + " || exit 1; fi; if ! grep -qE '^" + VERSION + " file-(created|replaced) " + encode(path) + " ' " + PATH + " 2>/dev/null; then "
            + "if " + exists + "; then " + append(new FileReplaced(path, path + BACKUP_SUFFIX)) + "; else " + append(new FileCreated(path))
            + "; fi || exit 1; fi";
    }

    /**
     * Shell text run before {@code systemctl enable} of units: journals each unit not yet enabled with what
     * {@code systemctl is-enabled} says now.
     */
    public static String beforeEnable(List<String> units) {
        return SHELL_FUNCTIONS + "for u in " + ShellWords.words(units) + "; do s=$(systemctl is-enabled -- \"$u\" 2>/dev/null); "
            + "case \"$s\" in enabled|static|alias|indirect|generated) ;; *) gj unit-enabled \"$(hx \"$u\")\" \"$(hx \"$s\")\" || exit 1;; esac; done; ";
    }

    /** Shell text run before {@code apt-mark hold}: journals each package not held now. */
    public static String beforeHold(String packagesWord) {
        return SHELL_FUNCTIONS + "held=$(apt-mark showhold) || exit 1; for p in " + packagesWord + "; do "
            + "printf '%s\\n' \"$held\" | grep -qxF -- \"$p\" || gj package-held \"$(hx \"$p\")\" || exit 1; done; ";
    }

    /** Shell text run before {@code swapoff -a}: journals every active swap area (unescaping /proc/swaps' \\040). */
    public static final String BEFORE_SWAPOFF = SHELL_FUNCTIONS
        + "for s in $(awk 'NR>1{print $1}' /proc/swaps); do s=$(printf '%b' \"$(printf '%s' \"$s\" | sed 's/\\\\\\([0-7][0-7][0-7]\\)/\\\\0\\1/g')\"); "
        + "gj swap-off \"$(hx \"$s\")\" || exit 1; done; ";
}
