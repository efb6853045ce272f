package dev.gpuctl.engine;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.remote.Held;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.step.Sh;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/**
 * One bootstrap at a time per cluster: an flock(1) on the master, held by a command that lives exactly as long
 * as this run's SSH session. The kernel lets the lock go when that command ends, so a run that is killed, or
 * whose laptop loses the network, never leaves a stale lock behind once sshd closes its session; a holder file
 * beside the lock names who holds it, for the message a second run shows.
 *
 * <p>The lock lives in {@value #DIR}: /run is root's (0755), so only root can make that directory, and the command
 * makes it with mkdir (no -p: an existing path, link or not, is never adopted or followed) mode 0700. Before it
 * opens anything it checks what is there: a real directory, not a symbolic link, owned by the user the command runs
 * as (root on a master), writable by no group or other; the lock and holder files, where they exist, regular files
 * of that user and no links. Anything else is refused ({@link #UNSAFE}, exit 77) before a byte is written, so a
 * local user of the master can neither make gpuctl write a file of their choosing nor hold the lock against it.
 */
public final class MasterLock {
    static final String DIR = "/run/gpuctl";
    static final String LOCK_FILE = "bootstrap.lock";
    static final String HOLDER_FILE = "bootstrap.holder";
    static final String LOCK = DIR + "/" + LOCK_FILE;
    static final String LOCKED = "gpuctl-lock: held";
    static final String BUSY = "gpuctl-lock: busy";
    static final String UNSAFE = "gpuctl-lock: unsafe";

    private MasterLock() {}

    /**
     * The command that takes the lock: prints {@link #LOCKED} and keeps it until its stdin closes, or prints
     * {@link #BUSY} and the holder file on one line and exits 75 (EX_TEMPFAIL), or prints {@link #UNSAFE} and what
     * is wrong with the lock's directory or files and exits 77 (EX_NOPERM), having written nothing. The holder line
     * records the remote pid that holds the lock, so a person can end a holder whose connection hangs.
     */
    static String command(String holder) {
        return command(holder, DIR);
    }

    /** {@link #command(String)} with the lock and holder files in {@code dir} (tests use a temp dir). */
    public static String command(String holder, String dir) {
        String d = ShellWords.quote(dir);
        String lock = ShellWords.quote(dir + "/" + LOCK_FILE);
        String who = ShellWords.quote(dir + "/" + HOLDER_FILE);
        return "umask 077; me=$(id -u); unsafe() { echo '" + UNSAFE + " '\"$*\"; exit 77; }; "
            + "if [ ! -e " + d + " ] && [ ! -L " + d + " ]; then mkdir -m 0700 " + d + " 2>/dev/null; fi; "
            + "if [ -L " + d + " ]; then unsafe " + d + " is a symbolic link; fi; "
            + "[ -d " + d + " ] || unsafe " + d + " is not a directory; "
            + "set -- $(stat -c '%u %a' " + d + "); "
            + "[ \"$1\" = \"$me\" ] || unsafe " + d + " is owned by uid \"$1\", not uid \"$me\"; "
            + "[ $((0$2 & 022)) -eq 0 ] || unsafe " + d + " has mode \"$2\": writable by group or others; "
            + "for f in " + lock + " " + who + "; do "
            + "if [ -L \"$f\" ]; then unsafe \"$f\" is a symbolic link; fi; "
            + "if [ -e \"$f\" ]; then [ -f \"$f\" ] || unsafe \"$f\" is not a regular file; "
            + "[ \"$(stat -c %u \"$f\")\" = \"$me\" ] || unsafe \"$f\" is owned by uid \"$(stat -c %u \"$f\")\", not uid \"$me\"; fi; done; "
            + "exec 9>>" + lock + " && "
            + "if flock -n 9; then printf '%s (lock held by pid %s on this host)\\n' " + ShellWords.quote(holder) + " \"$$\" > " + who
            + "; echo '" + LOCKED + "'; exec cat >/dev/null; fi; "
            + "printf '%s %s\\n' '" + BUSY + "' \"$(cat " + who + " 2>/dev/null)\"; exit 75";
    }

    /** The lock, held until closed; or the reason it is not (naming the holder). */
    public sealed interface Outcome permits Acquired, Busy {}

    public record Acquired(Held held) implements Outcome {}

    /** Not taken: another run holds it, or the lock's place on the master is unsafe ({@link #message()} says which). */
    public record Busy(String message) implements Outcome {}

    public static Outcome acquire(Remote master, String holder, Duration timeout) {
        return acquireWith(master, command(holder), timeout);
    }

    /** Takes the lock with {@code lockCommand} (one of {@link #command}). */
    public static Outcome acquireWith(Remote master, String lockCommand, Duration timeout) {
        Held h = master.hold(lockCommand, timeout);
        if (h.isRunning() && h.output().equals(LOCKED)) return new Acquired(h);
        h.close();
        return new Busy(busyMessage(master.name(), h.output())
            .or(() -> unsafeMessage(master.name(), h.output()))
            .orElse(master.name() + ": cannot take the bootstrap lock " + LOCK + " (exit " + h.exit() + "): " + h.output().strip()));
    }

    /** What a person reads when another run holds the lock; empty when the output is not a busy lock's. */
    static Optional<String> busyMessage(String master, String output) {
        if (!output.startsWith(BUSY)) return Optional.empty();
        String who = output.substring(BUSY.length()).strip();
        return Optional.of("another gpuctl bootstrap is running against this cluster: it holds the lock " + LOCK + " on " + master
            + (who.isEmpty() ? "" : ": " + who) + ". Wait for it to finish and run bootstrap again."
            + " The lock goes away by itself when that run ends or its SSH connection closes; if its connection hangs,"
            + " end the holder's pid on " + master + ".");
    }

    /**
     * What a person reads when the lock's directory or files are not root's own (made by another user, a link, a
     * directory others may write); empty when the output is not that refusal.
     */
    static Optional<String> unsafeMessage(String master, String output) {
        if (!output.startsWith(UNSAFE)) return Optional.empty();
        String what = output.substring(UNSAFE.length()).strip();
        return Optional.of(master + ": refusing the bootstrap lock: " + what + ". gpuctl keeps its lock in " + DIR
            + ", a directory only root may make and write; anything else there may be another local user's attempt to"
            + " redirect root's writes or to hold the lock, so nothing was opened or written. Check who made it"
            + " (ls -la " + DIR + " on " + master + "), remove it as root (rm -r " + DIR + ") and run bootstrap again.");
    }

    /** "user@laptop (pid N) since TIME": who takes the lock. */
    public static String holder(String user, String machine, long pid, Instant since) {
        return "gpuctl bootstrap by " + user + "@" + machine + " (pid " + pid + ") since " + since.truncatedTo(ChronoUnit.SECONDS);
    }
}
