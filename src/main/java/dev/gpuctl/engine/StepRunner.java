package dev.gpuctl.engine;

import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Executes one step's probes and ops on one host through {@link Remote}: the only place where step
 * descriptions turn into commands. Every command and its result goes to the host's log, masked. This class asks
 * (probes: waited for, judged; their answers come from {@link ProbeAnswers}: run now, batched or reused);
 * {@link OpApplier} applies ops with its commands.
 */
final class StepRunner {
    private final Remote remote;
    private final HostLog log;
    private final Facts facts;
    private final Duration maxWait;
    private final BiConsumer<String, Long> announce;
    /** The host's reusable answers and op generation in this session ({@link Probe#reusedAs}). */
    private final HostReadings readings;
    /** Where the answers come from: the host now, a batch, or a kept reading. */
    private final ProbeAnswers answers;
    /** Told what the user must know of an op's outcome (a kubeconfig archived, a merged one refreshed). */
    private Consumer<String> tell = line -> {};

    StepRunner(Remote remote, HostLog log, Facts facts, Duration timeout, Duration maxWait) {
        this(remote, log, facts, timeout, maxWait, (problem, deadline) -> {});
    }

    /**
     * @param announce told when a wait for a wrong probe starts: its problem (masked) and until when it is waited for (a
     *                 {@link System#nanoTime()} instant); a step that waits long says so on the progress stream
     */
    StepRunner(Remote remote, HostLog log, Facts facts, Duration timeout, Duration maxWait, BiConsumer<String, Long> announce) {
        this(remote, log, facts, timeout, maxWait, announce, new HostReadings());
    }

    /**
     * @param readings the host's reusable answers, shared by every step runner of that host in one session (a runner
     *                 made with its own reuses only what it asked itself)
     */
    StepRunner(Remote remote, HostLog log, Facts facts, Duration timeout, Duration maxWait, BiConsumer<String, Long> announce,
               HostReadings readings) {
        this.readings = readings;
        this.remote = remote;
        this.log = log;
        this.facts = facts;
        this.maxWait = maxWait;
        this.announce = announce;
        this.answers = new ProbeAnswers(remote, log, facts, timeout, readings);
    }

    /** This runner, telling {@code t} what the user must know of an op's outcome (besides the host's log). */
    StepRunner telling(Consumer<String> t) {
        this.tell = t;
        return this;
    }

    /** Thrown when a command of an apply fails; carries what the failure report shows. */
    static final class OpFailed extends RuntimeException {
        final String what;
        final String command;
        final ExecResult result;

        OpFailed(String what, String command, ExecResult result) {
            super(what);
            this.what = what;
            this.command = command;
            this.result = result;
        }
    }

    ExecResult exec(String command) {
        return answers.exec(command, false);
    }

    /** Runs a command; with secretOutput its stdout (a token, say) is never written to the log. */
    ExecResult exec(String command, boolean secretOutput) {
        return answers.exec(command, secretOutput);
    }

    /** Asks every probe; returns what is wrong, one entry per failed probe ("what: problem"). With wait, a wrong
     *  probe that declares a wait is asked again (after 0.25 s, 0.5 s, 1 s, then every 2 s: {@link #pause}) for up to its wait (capped by maxWait). */
    List<String> probe(List<Probe> probes, boolean wait) {
        return described(probes, askWith(probes, waiting(p -> wait)));
    }

    /**
     * Asks {@code waited} as {@link #probe probe(waited, true)} would and, in the same round trips, each group of
     * {@code once} once, without waiting for it; a wait for one of {@code waited} is followed by asking the probes after
     * it again, so every answer is from after it. Returns {@code waited}'s problems, then each group's.
     */
    List<List<String>> probeWith(List<Probe> waited, List<List<Probe>> once) {
        Set<Probe> waits = Collections.newSetFromMap(new IdentityHashMap<>());
        waits.addAll(waited);
        List<List<Probe>> groups = new ArrayList<>();
        groups.add(waited);
        groups.addAll(once);
        return askGroups(groups, waiting(waits::contains));
    }

    /** Asks the groups' probes in order as one list ({@link #askWith}); returns each group's problems, in order. */
    private List<List<String>> askGroups(List<List<Probe>> groups, Patience patience) {
        List<Probe> all = new ArrayList<>();
        groups.forEach(all::addAll);
        List<Optional<String>> answers = askWith(all, patience);
        List<List<String>> out = new ArrayList<>();
        int from = 0;
        for (List<Probe> group : groups) {
            out.add(described(group, answers.subList(from, from + group.size())));
            from += group.size();
        }
        return out;
    }

    /** Waits (up to each probe's own wait, capped by maxWait) for the probes {@code waits} says, logged and announced. */
    private Patience waiting(Predicate<Probe> waits) {
        return new Patience() {
            @Override public Long deadline(Probe p) {
                if (!waits.test(p) || p.waitUpTo().isZero()) return null;
                Duration limit = maxWait != null && maxWait.compareTo(p.waitUpTo()) < 0 ? maxWait : p.waitUpTo();
                return System.nanoTime() + limit.toNanos();
            }

            @Override public void waiting(Probe p, String problem, long deadline) {
                log.line("waiting up to " + Math.max(1, (deadline - System.nanoTime()) / 1_000_000_000L) + " s: " + facts.mask(problem));
                announce.accept(facts.mask(problem), deadline);
            }
        };
    }

    /** "what: problem" for each wrong probe, in order. */
    private static List<String> described(List<Probe> probes, List<Optional<String>> answers) {
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < probes.size(); i++) {
            Probe p = probes.get(i);
            answers.get(i).ifPresent(s -> problems.add(p.what() + ": " + s));
        }
        return problems;
    }

    /**
     * A host stopped answering while several groups of probes were asked together; {@code group} is the one
     * whose probe was running (for a timeout, the slow probe's group; else the group being asked).
     */
    static final class GroupFailed extends RuntimeException {
        final int group;
        final RemoteException cause;

        GroupFailed(int group, RemoteException cause) {
            super(cause.getMessage(), cause);
            this.group = group;
            this.cause = cause;
        }
    }

    /**
     * Asks several steps' probes (one group per step) in as few round trips as {@link #askWith} can make, once
     * each, without waiting; returns each group's problems as {@link #probe} would. When the host fails to
     * answer, throws {@link GroupFailed} naming the group whose probe it was.
     */
    List<List<String>> probeGroups(List<List<Probe>> groups) {
        List<Integer> groupOf = new ArrayList<>();
        for (int g = 0; g < groups.size(); g++) {
            for (int k = 0; k < groups.get(g).size(); k++) groupOf.add(g);
        }
        failedAt = 0;
        try {
            return askGroups(groups, p -> null);
        } catch (RemoteException e) {
            throw new GroupFailed(groupOf.isEmpty() ? 0 : groupOf.get(Math.min(failedAt, groupOf.size() - 1)), e);
        }
    }

    /** The index (in {@link #askWith}'s list) of the probe that was being asked when a RemoteException left it. */
    private int failedAt;

    /**
     * How wrong probes are waited for. A wrong answer is waited for only while the probe says that what it asks
     * about is still starting ({@link Probe#settling}); otherwise it is definite at once.
     */
    interface Patience {
        /** Until when (a {@link System#nanoTime()} instant) a wrong probe is asked again; null: judge it as it is. */
        Long deadline(Probe p);

        /** Asked before each new try: false ends the wait (verify: a definite failure made the outcome clear). */
        default boolean worthWaiting(Probe p) { return true; }

        /** A wrong answer that waiting will not change, or that was waited for until the end. */
        default void definite(Probe p, String problem) {}

        /** A wait for a probe starts, with the problem it has now. */
        default void waiting(Probe p, String problem, long deadline) {}

        /** A wait for a probe ended: right (empty) or still this problem, after this many nanoseconds. */
        default void waited(Probe p, Optional<String> problem, long nanos) {}
    }

    /**
     * Asks probes in order and judges each exactly as {@link #ask} would, in as few round trips as it can: runs of
     * probes go to the host as one script ({@link ProbeBatch}). A run ends before a probe whose command refers to a
     * fact ({@code {{key}}}), so that it is filled in after the probes before it have taught theirs. A wrong probe
     * whose {@code patience} deadline (a {@link System#nanoTime()} instant; null: ask once) is still ahead is asked again
     * ({@link #pause}) until it is right or the deadline passes; the probes after it are then asked anew, as they would
     * have been one by one. A probe whose answer did not come back framed is asked on its own.
     *
     * What a wait hears and when it stops are given by {@code patience}.
     *
     * @return one entry per probe: empty when right, else what is wrong
     */
    List<Optional<String>> askWith(List<Probe> probes, Patience patience) {
        List<Optional<String>> problems = new ArrayList<>();
        int i = 0;
        while (i < probes.size()) {
            int end = ProbeAnswers.runEnd(probes, i);
            failedAt = i;
            int from = i;
            List<ProbeAnswers.Answer> answers = end - i > 1 ? this.answers.batch(probes.subList(i, end), k -> failedAt = from + k) : List.of();
            Set<String> logged = new HashSet<>();
            int next = end;
            for (int j = i; j < end; j++) {
                Probe p = probes.get(j);
                int k = j - i;
                failedAt = j;
                ExecResult result;
                if (k < answers.size()) {
                    ProbeAnswers.Answer a = answers.get(k);
                    if (logged.add(a.command())) {
                        // a reading given instead of asking is in the log already (reused)
                        if (!a.reused()) log.command(a.command(), p.secret() ? ProbeAnswers.notLogged(a.result()) : a.result(), "(asked in the batch above)");
                    } else {
                        // one run of the command answered several probes: its output is in the log once
                        log.command(a.command(), new ExecResult(a.result().exit(), "", ""), "(asked in the batch above; the same answer as above)");
                    }
                    result = a.result();
                } else {
                    result = this.answers.askOnce(p);
                }
                Optional<String> problem = judge(p, result);
                Long deadline = problem.isPresent() && !p.waitUpTo().isZero() && p.settling().test(result) ? patience.deadline(p) : null;
                if (deadline != null && System.nanoTime() < deadline && patience.worthWaiting(p)) {
                    long t0 = System.nanoTime();
                    patience.waiting(p, problem.get(), deadline);
                    boolean starting = true;
                    int tries = 0;
                    while (problem.isPresent() && starting && System.nanoTime() < deadline && patience.worthWaiting(p)) {
                        sleep(pause(tries++));
                        result = this.answers.fresh(p);
                        problem = judge(p, result);
                        starting = p.settling().test(result);
                    }
                    patience.waited(p, problem, System.nanoTime() - t0);
                    problem.ifPresent(s -> patience.definite(p, s));
                    problems.add(problem);
                    if (k + 1 < answers.size()) log.line("the batch's answers after this probe are from before the wait: asking again");
                    next = j + 1;
                    break;
                }
                problem.ifPresent(s -> patience.definite(p, s));
                problems.add(problem);
            }
            i = next;
        }
        return problems;
    }

    /** Asks one probe once: runs it (logged; or its current reading, {@link Probe#reusedAs}), keeps what it teaches, judges the answer. */
    Optional<String> ask(Probe p) {
        return judge(p, answers.askOnce(p));
    }

    /** Keeps what the answer teaches, then judges it. */
    private Optional<String> judge(Probe p, ExecResult r) {
        p.learn().apply(r).forEach((k, v) -> facts.put(k, v, false));
        try {
            return p.judge().apply(r, facts);
        } catch (RuntimeException e) {
            return Optional.of("could not read the answer: " + e.getMessage());
        }
    }

    /** Runs ops in order ({@link OpApplier}); returns true when something changed on the host. Throws OpFailed. */
    boolean apply(List<Op> ops) {
        if (!ops.isEmpty()) readings.opRan();
        return new OpApplier(this, remote, log, facts, tell).apply(ops);
    }

    /**
     * The pause before a wrong probe is asked again, after {@code tries} asks of it: 0.25 s, 0.5 s, 1 s, then every
     * 2 s. What is waited for (a unit restarted, chrony's first sync, a node Ready) is often right within a second,
     * and a fixed 2 s noticed it up to 2 s late on every host; a long wait still asks every 2 s.
     */
    static Duration pause(int tries) {
        return Duration.ofMillis(250L << Math.min(tries, 3));
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
