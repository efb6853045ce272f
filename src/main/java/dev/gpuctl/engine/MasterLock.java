package dev.gpuctl.engine;

import dev.gpuctl.remote.Held;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.steps.Sh;
import java.time.Duration;
import java.util.Optional;

/**
 * One bootstrap at a time per cluster: an flock(1) on the master, held by a command that lives exactly as long
 * as this run's SSH session. The kernel lets the lock go when that command ends, so a run that is killed, or
 * whose laptop loses the network, never leaves a stale lock behind once sshd closes its session; a holder file
 * beside the lock names who holds it, for the message a second run shows.
 */
public final class MasterLock {
    static final String DIR = "/run/lock/gpuctl";
    static final String LOCK_FILE = "bootstrap.lock";
    static final String HOLDER_FILE = "bootstrap.holder";
    static final String LOCK = DIR + "/" + LOCK_FILE;
    static final String LOCKED = "gpuctl-lock: held";
    static final String BUSY = "gpuctl-lock: busy";

    private MasterLock() {}

    /**
     * The command that takes the lock: prints {@link #LOCKED} and keeps it until its stdin closes, or prints
     * {@link #BUSY} and the holder file on one line and exits 75 (EX_TEMPFAIL). The holder line records the remote pid that
     * holds the lock, so a person can end a holder whose connection hangs.
     */
    static String command(String holder) {
        return command(holder, DIR);
    }

    /** {@link #command(String)} with the lock and holder files in {@code dir} (tests use a temp dir). */
    public static String command(String holder, String dir) {
        String lock = Sh.quote(dir + "/" + LOCK_FILE);
        String who = Sh.quote(dir + "/" + HOLDER_FILE);
        return "mkdir -p " + Sh.quote(dir) + " && exec 9>>" + lock + " && "
            + "if flock -n 9; then printf '%s (lock held by pid %s on this host)\\n' " + Sh.quote(holder) + " \"$$\" > " + who
            + "; echo '" + LOCKED + "'; exec cat >/dev/null; fi; "
            + "printf '%s %s\\n' '" + BUSY + "' \"$(cat " + who + " 2>/dev/null)\"; exit 75";
    }

    /** The lock, held until closed; or the reason it is not (naming the holder). */
    public sealed interface Outcome permits Acquired, Busy {}

    public record Acquired(Held held) implements Outcome {}

    public record Busy(String message) implements Outcome {}

    public static Outcome acquire(Remote master, String holder, Duration timeout) {
        return acquireWith(master, command(holder), timeout);
    }

    /** Takes the lock with {@code lockCommand} (one of {@link #command}). */
    public static Outcome acquireWith(Remote master, String lockCommand, Duration timeout) {
        Held h = master.hold(lockCommand, timeout);
        if (h.isRunning() && h.output().equals(LOCKED)) return new Acquired(h);
        h.close();
        return new Busy(busyMessage(master.name(), h.output()).orElse(master.name() + ": cannot take the bootstrap lock " + LOCK
            + " (exit " + h.exit() + "): " + h.output().strip()));
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

    /** "user@laptop (pid N) since TIME": who takes the lock. */
    public static String holder(String user, String machine, long pid, java.time.Instant since) {
        return "gpuctl bootstrap by " + user + "@" + machine + " (pid " + pid + ") since " + since.truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    }
}
