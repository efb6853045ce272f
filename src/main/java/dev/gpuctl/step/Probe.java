package dev.gpuctl.step;

import dev.gpuctl.remote.ExecResult;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A read-only question asked of a host: a command and a judgement of its result.
 *
 * @param what      what must be true, for people ("no active swap in /proc/swaps")
 * @param command   read-only shell command run as root on the host
 * @param judge     empty when right, else what is wrong ("swap is on: /swap.img")
 * @param learn     facts this probe teaches the run (e.g. a node's GPU count); may be empty
 * @param waitUpTo  in verify, how long to keep asking before calling it wrong (ZERO: ask once)
 * @param settling  for a wrong answer: true while what it asks about is still starting (worth asking again within
 *                  waitUpTo), false when the answer is definite (a unit failed, masked or missing); by default every
 *                  wrong answer of a probe that declares a wait is worth waiting for
 * @param reading   null: asked every time; else the question this probe's command answers ({@link #reusedAs}), whose
 *                  answer the engine may give it from earlier in the same run while nothing was applied on the host since
 * @param atPhaseEnd a verify probe whose wait after an apply is held at the end of the host's phase ({@link #provenAtPhaseEnd})
 */
public record Probe(String what, String command, BiFunction<ExecResult, Facts, Optional<String>> judge,
                    Function<ExecResult, Map<String, String>> learn, Duration waitUpTo, Predicate<ExecResult> settling,
                    Facts.Key<?> reading, boolean atPhaseEnd) {

    public Probe(String what, String command, BiFunction<ExecResult, Facts, Optional<String>> judge,
                 Function<ExecResult, Map<String, String>> learn, Duration waitUpTo, Predicate<ExecResult> settling,
                 Facts.Key<?> reading) {
        this(what, command, judge, learn, waitUpTo, settling, reading, false);
    }

    public Probe(String what, String command, BiFunction<ExecResult, Facts, Optional<String>> judge,
                 Function<ExecResult, Map<String, String>> learn, Duration waitUpTo, Predicate<ExecResult> settling) {
        this(what, command, judge, learn, waitUpTo, settling, null);
    }

    public Probe(String what, String command, BiFunction<ExecResult, Facts, Optional<String>> judge,
                 Function<ExecResult, Map<String, String>> learn, Duration waitUpTo) {
        this(what, command, judge, learn, waitUpTo, r -> true);
    }

    public static Probe of(String what, String command, Function<ExecResult, Optional<String>> judge) {
        return new Probe(what, command, (r, f) -> judge.apply(r), r -> Map.of(), Duration.ZERO);
    }

    /**
     * A question whose whole answer a command reports (gpuctl gpus): kept under {@code key} ({@link Facts#kept}) and
     * never judged here, so that a failing answer (nvidia-smi without a driver) is the report's line, not a problem.
     */
    public static Probe keeping(String what, String command, String key) {
        return new Probe(what, command, (r, facts) -> {
            facts.keep(key, r);
            return Optional.empty();
        }, r -> Map.of(), Duration.ZERO);
    }

    /**
     * Like {@link #keeping}, for an answer that is a secret (the master's admin.conf: its client key): its stdout is
     * never written to the host's log ({@link #secret}).
     */
    public static Probe keepingSecret(String what, String command, String key) {
        return new Probe(what, command, (r, facts) -> {
            facts.keep(key, r);
            return Optional.empty();
        }, new SecretAnswer(), Duration.ZERO);
    }

    /** A probe's learning that learns nothing and marks its answer a secret (see {@link #keepingSecret}). */
    private record SecretAnswer() implements Function<ExecResult, Map<String, String>> {
        @Override public Map<String, String> apply(ExecResult r) { return Map.of(); }
    }

    /** Whether the answer is a secret: the engine logs its exit status and stderr, never its stdout. */
    public boolean secret() { return learn instanceof SecretAnswer; }

    /** Right when the command's trimmed stdout equals {@code expected}. */
    public static Probe equals(String what, String command, String expected) {
        return of(what, command, r -> r.stdout().strip().equals(expected) ? Optional.empty()
            : Optional.of("got '" + oneLine(r.stdout()) + "'" + stderrHint(r) + ", expected '" + expected + "'"));
    }

    /** Right when the command exits 0. */
    public static Probe succeeds(String what, String command) {
        return of(what, command, r -> r.ok() ? Optional.empty()
            : Optional.of("exit " + r.exit() + stderrHint(r)));
    }

    public Probe waitingUpTo(Duration d) { return new Probe(what, command, judge, learn, d, settling, reading, atPhaseEnd); }

    /** Waits up to d, but only while a wrong answer says that what it asks about is still starting. */
    public Probe waitingWhileStarting(Duration d, Predicate<ExecResult> starting) {
        return new Probe(what, command, judge, learn, d, starting, reading, atPhaseEnd);
    }

    public Probe learning(Function<ExecResult, Map<String, String>> l) {
        return new Probe(what, command, judge, l, waitUpTo, settling, reading, atPhaseEnd);
    }

    public Probe judgedWithFacts(BiFunction<ExecResult, Facts, Optional<String>> j) {
        return new Probe(what, command, j, learn, waitUpTo, settling, reading, atPhaseEnd);
    }

    /**
     * This probe, its answer reusable within one run: a later probe of the same {@code question} (the same command, on
     * the same host) is given this answer instead of asking again, as long as no op was applied on that host since it
     * was read (the engine counts them: {@code HostReadings}). For a read whose answer only the host's own changes can
     * change within a run (the master's diff of gpuctl's manifests, which only gpuctl applies there), asked in more
     * than one round.
     */
    public Probe reusedAs(Facts.Key<?> question) {
        return new Probe(what, command, judge, learn, waitUpTo, settling, question, atPhaseEnd);
    }

    /**
     * This verify probe, its wait after an apply held at the end of the host's phase instead of in place: when it is
     * wrong right after its step's apply, the host goes on with the phase's later steps, and the probe is asked again,
     * with its wait, once the host's last step of the phase is done; its step fails then if it is still wrong. For
     * what settles on its own and what the phase's later steps do not need: chrony's first synchronisation (preflight
     * has held every clock within 30 s of this machine's, which apt and the other host steps tolerate; kubeadm, in a
     * later phase, gets the proof first). Verify ({@code gpuctl verify}) and a step alone in its phase wait in place.
     */
    public Probe provenAtPhaseEnd() { return new Probe(what, command, judge, learn, waitUpTo, settling, reading, true); }

    public static String oneLine(String s) {
        String t = s.strip().replace('\n', ' ');
        return t.length() > 120 ? t.substring(0, 117) + "..." : t;
    }

    public static String stderrHint(ExecResult r) {
        return r.stderr().isBlank() ? "" : " (" + oneLine(r.stderr()) + ")";
    }
}
