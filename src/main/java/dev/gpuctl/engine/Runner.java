package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Step;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * The one engine: a run is hosts × phases × steps in a {@link Mode}. Phases run in order; within a phase every host
 * runs its steps in order, hosts in parallel (bounded by one pool); one log per host per run, one progress stream,
 * one stop request (Ctrl-C), one summary ({@link Result}). A command is one run, its phases in rounds when a round
 * depends on the last one's result ({@link Rounds}: an upgrade's batches): one session, one lock, one log directory.
 * <ul>
 * <li>APPLY: a step is check; if not right, apply; then verify. When a host fails, the phase's other hosts finish,
 *     then the run stops. Preflight (per host, then across hosts) failing stops the run before any host is changed;
 *     the cluster's lock is taken before the first phase that changes anything.</li>
 * <li>DRY_RUN: as APPLY, with "would change" in place of each apply; no lock.</li>
 * <li>VERIFY ({@code gpuctl verify}, {@code certs check}): read-only. The read-only phases (preflight) first on every
 *     host, then the cross-host checks as rows of the hosts they concern; then every other phase's verify probes at
 *     once, one batch per host (verify changes nothing, so the order that applying needs does not hold it up). What
 *     is still starting is waited for up to the run's wait; the answers are {@link Result#report()}.</li>
 * </ul>
 * ~300 lines, kept whole: what is left is the session's round loop that the three modes share (lock, banners, stop,
 * summary); a host's steps are {@link HostSteps}', verify's asking {@link VerifyChecks}', a failure's text {@link StepFailure}'s.
 */
public final class Runner {
    public enum Outcome { OK, CHANGED, WOULD_CHANGE, FAILED, INTERRUPTED }

    /** What a run does with each step: make it right, say what would change, or only ask whether it is right. */
    public enum Mode { APPLY, DRY_RUN, VERIFY }

    /**
     * How long into a verify run what is still starting is waited for: a unit activating or waiting to restart, the
     * API server, nodes not yet Ready, pods not yet running, time not yet synchronised (right after a boot these
     * settle within a minute or two). A definite answer (a unit failed, masked or missing; a file wrong) is never
     * waited for; and once one is found, waiting for what depends on it stops: on its host, and in the cluster's
     * checks, which depend on every host.
     */
    public static final Duration VERIFY_WAIT = Duration.ofMinutes(2);

    /**
     * @param hosts   the hosts the run works on (empty: every host of the inventory)
     * @param maxWait APPLY and DRY_RUN: caps how long one probe that settles (pods, GPUs) is waited for, null: each
     *                probe's own; VERIFY: how long into the run what is still starting is waited for, null:
     *                {@link #VERIFY_WAIT}
     */
    public record Options(Mode mode, int concurrency, Set<String> hosts, Duration commandTimeout, Duration maxWait) {
        public Options(boolean dryRun, int concurrency, Set<String> hosts, Duration commandTimeout, Duration maxWait) {
            this(dryRun ? Mode.DRY_RUN : Mode.APPLY, concurrency, hosts, commandTimeout, maxWait);
        }

        public Options(boolean dryRun, int concurrency, Set<String> hosts, Duration commandTimeout) {
            this(dryRun, concurrency, hosts, commandTimeout, null);
        }

        /** A verify run's options: read-only, what is still starting waited for up to {@code maxWait} into the run. */
        public static Options verify(int concurrency, Set<String> hosts, Duration commandTimeout, Duration maxWait) {
            return new Options(Mode.VERIFY, concurrency, hosts, commandTimeout, maxWait);
        }

        public boolean dryRun() { return mode == Mode.DRY_RUN; }
    }

    /**
     * @param interrupted where the run stopped after {@link #requestStop()}: "host step: what was cut off", in
     *                    host order; empty when it was not interrupted
     * @param report      a VERIFY run's answers, every host of the run in inventory order; empty in the other modes
     */
    public record Result(boolean preflightRefused, List<StepFailure> failures, List<String> preflightProblems,
                         Map<String, Map<String, Outcome>> outcomes, Path logDir, List<String> interrupted, VerifyReport report) {
        public Result(boolean preflightRefused, List<StepFailure> failures, List<String> preflightProblems,
                      Map<String, Map<String, Outcome>> outcomes, Path logDir, List<String> interrupted) {
            this(preflightRefused, failures, preflightProblems, outcomes, logDir, interrupted, new VerifyReport(List.of()));
        }

        public Result(boolean preflightRefused, List<StepFailure> failures, List<String> preflightProblems,
                      Map<String, Map<String, Outcome>> outcomes, Path logDir) {
            this(preflightRefused, failures, preflightProblems, outcomes, logDir, List.of());
        }

        public boolean ok() { return !preflightRefused && failures.isEmpty() && interrupted.isEmpty() && report.ok(); }

        public boolean wasInterrupted() { return !interrupted.isEmpty(); }
    }

    private final Inventory inv;
    private final PrintWriter progress;
    private final Options options;
    private final Facts facts = new Facts();
    private final HostRun run;
    private final Map<String, String> stoppedAt = new ConcurrentHashMap<>();
    private volatile String lockHolder;
    private final VerifyChecks verifyChecks;
    /** APPLY and DRY_RUN: a host's steps of a phase, in order. */
    private final HostSteps hostSteps;

    public Runner(Inventory inv, Function<Node, Remote> connector, PrintWriter progress, Options options) {
        this.inv = inv;
        this.progress = progress;
        this.options = options;
        this.run = new HostRun(inv, connector, facts, options.mode() == Mode.VERIFY ? "verify" : "", options.concurrency(),
            line -> {
                synchronized (progress) {
                    progress.println(line);
                    progress.flush();
                }
            }, options.hosts().isEmpty() ? inv.nodes().size() : options.hosts().size());
        RunParts parts = new RunParts(inv, run, facts, options, progress, stoppedAt);
        this.verifyChecks = new VerifyChecks(parts);
        this.hostSteps = new HostSteps(parts);
        ClusterRecord.learn(inv, facts);
    }

    /**
     * Takes the cluster's bootstrap lock on the master (see {@link MasterLock}) once preflight has passed and
     * before anything changes; a run that finds it held is refused with the holder named.
     */
    public Runner lockingMaster(String holder) {
        this.lockHolder = holder;
        return this;
    }

    /**
     * Asks the run to stop (e.g. at SIGINT): no command starts any more; the ones running finish; the run
     * returns after the current phase with {@link Result#interrupted()} saying where each host stopped.
     */
    public void requestStop() {
        run.requestStop();
    }

    /** Cuts the running commands off too (a second SIGINT, or the grace time ran out): closes every connection. */
    public void abort() {
        run.abort();
    }

    /** Everything the run learned: its probes' and captures' facts, for the workflow that reads them after the run. */
    public Facts learned() {
        return facts;
    }

    /** The whole answer of a probe that keeps it ({@link Probe#keeping}), by its key, once it has run. */
    public Optional<ExecResult> answer(String key) {
        return facts.kept(key);
    }

    List<Node> selected() {
        return inv.nodes().stream().filter(n -> options.hosts().isEmpty() || options.hosts().contains(n.name())).toList();
    }

    /**
     * The run's rounds: one per phase; in VERIFY the read-only phases, then every other phase together (asking
     * changes nothing, so nothing needs to wait for an earlier phase).
     */
    private List<List<Phase>> rounds(List<Phase> phases) {
        if (options.mode() != Mode.VERIFY) return phases.stream().map(List::of).toList();
        List<Phase> first = phases.stream().filter(Phase::readOnly).toList();
        List<Phase> rest = phases.stream().filter(p -> !p.readOnly()).toList();
        return List.of(first, rest);
    }

    /** These phases in order, as one round of a session ({@link #run(Rounds)}). */
    public Result run(List<Phase> phases) {
        return run(Rounds.of(phases));
    }

    /** What one session keeps from round to round: the summary's outcomes, the lock once taken, the phases' numbering. */
    private static final class Session {
        final Map<String, Map<String, Outcome>> outcomes = new ConcurrentHashMap<>();
        MasterLock.Acquired lock;
        int phase;
    }

    /**
     * One engine session: each round's phases in order, the next round asked of {@code rounds} with the last one's
     * result. The cluster's lock (with {@link #lockingMaster}) is taken before the first phase that changes anything
     * and held to the end of the last round; one log directory, one connection per host, one stop request. The result
     * is the last round's (its failures, refusal or interruption) with the outcomes of every round.
     */
    public Result run(Rounds rounds) {
        Session session = new Session();
        rounds.learning(facts);
        verifyChecks.start();
        try {
            List<Phase> phases = rounds.first();
            while (true) {
                Result done = round(phases, session);
                if (done.preflightRefused() || done.wasInterrupted()) return done;
                Optional<List<Phase>> next = rounds.next(done);
                if (next.isEmpty()) return done;
                phases = next.get();
            }
        } finally {
            if (session.lock != null) session.lock.held().close();
            run.close();
        }
    }

    private Result round(List<Phase> phases, Session session) {
        boolean verifying = options.mode() == Mode.VERIFY;
        Map<String, Map<String, Outcome>> outcomes = session.outcomes;
        List<StepFailure> failures = Collections.synchronizedList(new ArrayList<>());
        Map<String, List<VerifyReport.Check>> checks = new ConcurrentHashMap<>();
        Map<String, String> unreachable = new ConcurrentHashMap<>();
        Path logDir = run.logDir();
        List<List<Phase>> rounds = rounds(phases);
        // VERIFY: the probes of the later phases are made while preflight asks (a cluster step's probes read and hash
        // manifests: a second of CPU on the master in a fresh JVM), the master's first: it asks the most
        Map<String, CompletableFuture<VerifyChecks.Asked>> made = verifying && rounds.size() > 1
            ? verifyChecks.makeAhead(rounds.get(1), selected(), hostsOf(rounds.get(0))) : Map.of();
        for (List<Phase> round : rounds) {
            if (run.stopRequested()) break;
            boolean readOnly = round.stream().allMatch(Phase::readOnly);
            if (!readOnly && !verifying && session.lock == null && lockHolder != null && !options.dryRun()) {
                MasterLock.Outcome taken;
                try {
                    taken = MasterLock.acquire(run.remote(inv.master()), lockHolder, options.commandTimeout());
                } catch (RemoteException e) {
                    StepFailure f = StepFailure.unreachable(inv.master().name(), "lock", e, facts.mask(e.getMessage()),
                        run.log(inv.master()).file().toString());
                    return new Result(true, List.of(f), List.of(f.describe()), outcomes, logDir);
                }
                if (taken instanceof MasterLock.Busy busy) {
                    return new Result(true, List.of(), List.of(busy.message()), outcomes, logDir);
                }
                session.lock = (MasterLock.Acquired) taken;
                run.log(inv.master()).line("bootstrap lock taken on " + inv.master().name() + ": " + lockHolder);
            }
            List<Node> roundHosts = hostsOf(round).stream().filter(h -> !unreachable.containsKey(h.name())).toList();
            if (roundHosts.isEmpty()) continue;
            if (!verifying) {
                progress.println("== phase " + session.phase++ + ": " + round.get(0).title() + " ==");
                progress.flush();
            }
            run.eachHost(roundHosts, node -> {
                Map<Step, StepResult> results = verifying
                    ? verifyChecks.verifyHost(made.containsKey(node.name()) && !readOnly ? HostRun.joined(made.get(node.name())) : verifyChecks.asked(round, node), node)
                    : hostSteps.run(round.get(0), node);
                for (Map.Entry<Step, StepResult> done : results.entrySet()) {
                    outcomes.computeIfAbsent(node.name(), k -> new LinkedHashMap<>()).put(done.getKey().id(), done.getValue().outcome());
                    if (done.getValue() instanceof StepResult.Failed f) {
                        failures.add(f.failure());
                        if (verifying) unreachable.put(node.name(), f.failure().detail());
                    } else if (done.getValue() instanceof StepResult.Checked c) {
                        checks.computeIfAbsent(node.name(), k -> new CopyOnWriteArrayList<>()).addAll(c.checks());
                    }
                }
            });
            if (run.stopRequested()) break;
            if (verifying) {
                if (readOnly) verifyChecks.crossHostChecks(selected().stream().filter(h -> !unreachable.containsKey(h.name())).toList(), checks);
            } else if (readOnly) {
                List<String> problems = new ArrayList<>(failures.stream().map(StepFailure::describe).toList());
                if (failures.isEmpty()) problems.addAll(Preflight.crossHost(inv, selected(), facts));
                if (!problems.isEmpty()) return new Result(true, List.copyOf(failures), problems, outcomes, logDir);
            } else if (!failures.isEmpty()) {
                break;
            }
        }
        VerifyReport report = verifying ? verifyChecks.report(selected(), checks, unreachable) : new VerifyReport(List.of());
        if (run.stopRequested()) {
            List<String> where = inv.nodes().stream().map(Node::name).filter(stoppedAt::containsKey)
                .map(h -> h + " " + stoppedAt.get(h)).toList();
            if (where.isEmpty()) where = List.of("between phases: every step that started had finished");
            return new Result(false, List.copyOf(failures), List.of(), outcomes, logDir, where, report);
        }
        return new Result(false, List.copyOf(failures), List.of(), outcomes, logDir, List.of(), report);
    }

    private List<Node> hostsOf(List<Phase> round) {
        return selected().stream()
            .filter(node -> round.stream().flatMap(p -> p.steps().stream()).anyMatch(s -> s.runsOn(new HostContext(inv, node))))
            .toList();
    }

    static String label(Outcome o) {
        return switch (o) {
            case OK -> "ok";
            case CHANGED -> "changed";
            case WOULD_CHANGE -> "would change";
            case FAILED -> "FAILED";
            case INTERRUPTED -> "interrupted";
        };
    }

    static String seconds(long nanos) { return String.format("%.1fs", nanos / 1e9); }
}
