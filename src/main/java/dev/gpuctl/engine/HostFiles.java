package dev.gpuctl.engine;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.step.Sh;
import java.util.Optional;

/**
 * Where a write to a host's file really lands, and whether it is safe: pure functions (the shell text sent to the
 * host, the parsing of its answer, the mode a write gives). A path may be a symbolic link into config management:
 * gpuctl edits the file the link points to, keeps the link, and keeps the target's owner and mode. A target that is
 * not a regular file, or that sits in a directory someone other than root can write (or whose path another user could
 * redirect), is refused before anything is written.
 */
final class HostFiles {
    private HostFiles() {}

    /** What the host said about a path. */
    sealed interface Target {}

    /** Nothing at the path yet (no file, no link): a new file is written there. */
    record Absent(String path) implements Target {}

    /**
     * A regular file, at {@code path} itself or (for a link) at {@code target}: its permission bits (octal, as stat
     * prints them) and its numeric owner "uid:gid".
     */
    record Existing(String path, String target, String mode, String owner) implements Target {}

    /** A path gpuctl must not write through, and why. */
    record Refused(String path, String reason) implements Target {}

    /**
     * A read-only command (run as root) that resolves {@code path} and checks it: prints one line, "absent",
     * "file MODE UID:GID TARGET" or "refuse REASON". Every directory from / down to the file's directory (the
     * link's and, resolved, the target's) must be owned by root (or by the user running the command, which on a host
     * is root) and writable by no one else; a sticky directory (/tmp) is accepted above the file's own directory,
     * since no one else can rename what root owns there.
     */
    static String probeCommand(String path) {
        return "p=" + ShellWords.quote(path) + "; me=$(id -u); "
            + "chk() { d=$1; own=1; while :; do "
            + "s=$(stat -c '%u %a %F' -- \"$d\" 2>/dev/null) || { echo \"refuse cannot stat directory $d\"; return 1; }; "
            + "set -- $s; "
            + "[ \"$3\" = directory ] || { echo \"refuse $d is not a directory\"; return 1; }; "
            + "[ \"$1\" = 0 ] || [ \"$1\" = \"$me\" ] || { echo \"refuse directory $d is owned by uid $1, not root\"; return 1; }; "
            + "if [ $((0$2 & 022)) -ne 0 ] && { [ $own = 1 ] || [ $((0$2 & 01000)) -eq 0 ]; }; then "
            + "echo \"refuse directory $d (mode $2) can be written by users other than root\"; return 1; fi; "
            + "[ \"$d\" = / ] && return 0; d=$(dirname -- \"$d\"); own=0; done; }; "
            + "dir=$(readlink -e -- \"$(dirname -- \"$p\")\") || { echo \"refuse the directory of $p does not exist\"; exit 0; }; "
            + "chk \"$dir\" || exit 0; "
            + "if [ ! -e \"$p\" ] && [ ! -L \"$p\" ]; then echo absent; exit 0; fi; "
            + "t=$(readlink -e -- \"$p\") || { echo \"refuse $p is a symbolic link to nothing ($(readlink -- \"$p\"))\"; exit 0; }; "
            + "[ -f \"$t\" ] && [ ! -L \"$t\" ] || { echo \"refuse $t is not a regular file ($(stat -c %F -- \"$t\"))\"; exit 0; }; "
            + "chk \"$(dirname -- \"$t\")\" || exit 0; "
            + "echo \"file $(stat -c '%a %u:%g' -- \"$t\") $t\"";
    }

    /** Reads {@link #probeCommand}'s answer; anything unexpected is a refusal naming what came back. */
    static Target parse(String path, int exit, String stdout) {
        String line = stdout.strip();
        if (exit != 0 || line.isEmpty() || line.contains("\n")) {
            return new Refused(path, "could not check it (exit " + exit + ": " + (line.isEmpty() ? "no answer" : line) + ")");
        }
        if (line.equals("absent")) return new Absent(path);
        if (line.startsWith("refuse ")) return new Refused(path, line.substring("refuse ".length()));
        String[] f = line.split(" ", 4);
        if (f.length == 4 && f[0].equals("file") && f[1].matches("[0-7]{3,4}") && f[2].matches("[0-9]+:[0-9]+")
            && f[3].startsWith("/")) {
            return new Existing(path, f[3], f[1].length() == 3 ? "0" + f[1] : f[1], f[2]);
        }
        return new Refused(path, "could not check it (unexpected answer: " + line + ")");
    }

    /** The message a refusal stops the step with: what, why, and what to do. */
    static String refusal(Refused r) {
        return "refusing to write " + r.path() + ": " + r.reason() + ". gpuctl writes only regular files in directories that"
            + " only root can change (a symbolic link is followed to such a file); fix the path on the host"
            + " (e.g. chown root and chmod go-w the directory, or point the link at a regular file), then run again";
    }

    /**
     * The mode a write gives: gpuctl's {@code wanted} mode, never adding group or world write permission the file did
     * not have (a new file gets none). With {@code keep}, an existing file keeps exactly its own mode (an edit of a
     * site's file).
     */
    static String mode(Optional<String> existing, String wanted, boolean keep) {
        int want = Integer.parseInt(wanted, 8);
        if (existing.isEmpty()) return octal(want & ~0022);
        int had = Integer.parseInt(existing.get(), 8);
        if (keep) return octal(had);
        return octal(want & ~(0022 & ~had));
    }

    private static String octal(int mode) {
        String s = Integer.toOctalString(mode);
        return "0".repeat(Math.max(0, 4 - s.length())) + s;
    }
}
