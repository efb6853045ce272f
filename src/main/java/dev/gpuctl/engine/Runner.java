package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Held;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.steps.Facts;
import dev.gpuctl.steps.HostContext;
import dev.gpuctl.steps.Phase;
import dev.gpuctl.steps.Step;
import dev.gpuctl.steps.Steps;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * Runs phases in order; within a phase every host runs its steps in order, hosts in parallel (bounded).
 * A step is: check; if not right, apply (or, in dry-run, report what would change); then verify.
 * When a host fails, the phase's other hosts finish, then the run stops. Preflight failures stop the run
 * before any host is changed.
 */
public final class Runner {
    public enum Outcome { OK, CHANGED, WOULD_CHANGE, FAILED, INTERRUPTED }

    /** @param maxWait caps how long a verify waits for a probe that settles (pods, GPUs); null: each probe's own */
    public record Options(boolean dryRun, int concurrency, Set<String> hosts, Duration commandTimeout, Duration maxWait) {
        public Options(boolean dryRun, int concurrency, Set<String> hosts, Duration commandTimeout) {
            this(dryRun, concurrency, hosts, commandTimeout, null);
        }
    }

    /**
     * @param interrupted where the run stopped after {@link #requestStop()}: "host step: what was cut off", in
     *                    host order; empty when it was not interrupted
     */
    public record Result(boolean preflightRefused, List<StepFailure> failures, List<String> preflightProblems,
                         Map<String, Map<String, Outcome>> outcomes, Path logDir, List<String> interrupted) {
        public Result(boolean preflightRefused, List<StepFailure> failures, List<String> preflightProblems,
                      Map<String, Map<String, Outcome>> outcomes, Path logDir) {
            this(preflightRefused, failures, preflightProblems, outcomes, logDir, List.of());
        }

        public boolean ok() { return !preflightRefused && failures.isEmpty() && interrupted.isEmpty(); }

        public boolean wasInterrupted() { return !interrupted.isEmpty(); }
    }

    private final Inventory inv;
    private final Function<Node, Remote> connector;
    private final PrintWriter progress;
    private final Options options;
    private final Facts facts = new Facts();
    private final Path logDir;
    private final Map<String, Remote> remotes = new ConcurrentHashMap<>();
    private final Map<String, HostLog> logs = new ConcurrentHashMap<>();
    private final Set<String> prepared = Collections.synchronizedSet(new HashSet<>());
    private final Stop stop = new Stop();
    private final Map<String, String> stoppedAt = new ConcurrentHashMap<>();
    private volatile String lockHolder;

    public Runner(Inventory inv, Function<Node, Remote> connector, PrintWriter progress, Options options) {
        this.inv = inv;
        this.connector = connector;
        this.progress = progress;
        this.options = options;
        this.logDir = StateDir.newRunDir(inv.stateDir(), "");
    }

    public Facts facts() { return facts; }

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
        stop.requested = true;
    }

    /** Cuts the running commands off too (a second SIGINT, or the grace time ran out): closes every connection. */
    public void abort() {
        stop.requested = true;
        remotes.values().forEach(r -> {
            try { r.close(); } catch (RuntimeException ignored) { /* closing a dead connection */ }
        });
    }

    public boolean stopRequested() { return stop.requested; }

    List<Node> selected() {
        return inv.nodes().stream().filter(n -> options.hosts().isEmpty() || options.hosts().contains(n.name())).toList();
    }

    /** The step ids that {@link #run(Set)} accepts, in order. */
    public static List<String> stepIds() {
        return Steps.ids();
    }

    /** The bootstrap's phases, reduced to the steps named (none: every step; preflight always runs). */
    public Result run(Set<String> only) {
        return run(Steps.only(only));
    }

    public Result run(List<Phase> phases) {
        Map<String, Map<String, Outcome>> outcomes = new ConcurrentHashMap<>();
        List<StepFailure> failures = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, options.concurrency()));
        MasterLock.Acquired lock = null;
        try {
            int n = 0;
            for (Phase phase : phases) {
                if (stop.requested) break;
                if (!phase.readOnly() && lock == null && lockHolder != null && !options.dryRun()) {
                    MasterLock.Outcome taken;
                    try {
                        taken = MasterLock.acquire(remote(inv.master()), lockHolder, options.commandTimeout());
                    } catch (RemoteException e) {
                        return new Result(true, List.of(), List.of(facts.mask(e.getMessage())), outcomes, logDir);
                    }
                    if (taken instanceof MasterLock.Busy busy) {
                        return new Result(true, List.of(), List.of(busy.message()), outcomes, logDir);
                    }
                    lock = (MasterLock.Acquired) taken;
                    log(inv.master()).line("bootstrap lock taken on " + inv.master().name() + ": " + lockHolder);
                }
                List<Node> phaseHosts = hostsOf(phase);
                if (phaseHosts.isEmpty()) continue;
                progress.println("== phase " + n++ + ": " + phase.title() + " ==");
                progress.flush();
                List<Future<?>> running = new ArrayList<>();
                for (Node node : phaseHosts) {
                    running.add(pool.submit(() -> runHost(phase, node, outcomes, failures)));
                }
                for (Future<?> f : running) {
                    try {
                        f.get();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
                if (stop.requested) break;
                if (phase.readOnly()) {
                    List<String> problems = new ArrayList<>(failures.stream().map(StepFailure::describe).toList());
                    if (failures.isEmpty()) problems.addAll(Preflight.crossHost(inv, selected(), facts));
                    if (!problems.isEmpty()) return new Result(true, List.copyOf(failures), problems, outcomes, logDir);
                } else if (!failures.isEmpty()) {
                    break;
                }
            }
            if (stop.requested) {
                List<String> where = inv.nodes().stream().map(Node::name).filter(stoppedAt::containsKey)
                    .map(h -> h + " " + stoppedAt.get(h)).toList();
                if (where.isEmpty()) where = List.of("between phases: every step that started had finished");
                return new Result(false, List.copyOf(failures), List.of(), outcomes, logDir, where);
            }
            return new Result(false, List.copyOf(failures), List.of(), outcomes, logDir);
        } finally {
            if (lock != null) lock.held().close();
            pool.shutdownNow();
            remotes.values().forEach(r -> {
                try { r.close(); } catch (RuntimeException ignored) { /* closing a dead connection */ }
            });
            logs.values().forEach(HostLog::close);
        }
    }

    private List<Node> hostsOf(Phase phase) {
        return selected().stream()
            .filter(node -> phase.steps().stream().anyMatch(s -> s.runsOn(new HostContext(inv, node))))
            .toList();
    }

    private HostLog log(Node node) {
        return logs.computeIfAbsent(node.name(), h -> new HostLog(logDir, h, facts));
    }

    private Remote remote(Node node) {
        stop.check(node.name(), "connect");
        return new Stoppable(remotes.computeIfAbsent(node.name(), h -> connector.apply(node)), stop);
    }

    private void runHost(Phase phase, Node node, Map<String, Map<String, Outcome>> outcomes, List<StepFailure> failures) {
        HostContext ctx = new HostContext(inv, node);
        HostLog log = log(node);
        List<Step> steps = phase.steps().stream().filter(s -> s.runsOn(ctx)).toList();
        Map<Step, List<String>> asked = new HashMap<>();
        long phaseStart = System.nanoTime();
        if (!phase.readOnly() && steps.size() > 1 && !stop.requested) {
            // every step's check in one round trip; an answer is used while nothing on this host has changed since
            try {
                StepRunner sr = new StepRunner(remote(node), log, facts, options.commandTimeout(), options.maxWait());
                log.stepsAsked(steps.stream().map(Step::id).toList(), "check");
                List<List<String>> problems = sr.probeGroups(steps.stream().map(s -> s.check(ctx)).toList());
                for (int i = 0; i < steps.size(); i++) asked.put(steps.get(i), problems.get(i));
            } catch (StepRunner.GroupFailed e) {
                if (!stop.requested) {
                    Step step = steps.get(e.group);
                    failures.add(new StepFailure(node.name(), step.id(), unreachableWhat(e.cause), "", -1,
                        facts.mask(e.cause.getMessage()), log.file().toString()));
                    outcomes.computeIfAbsent(node.name(), k -> new LinkedHashMap<>()).put(step.id(), Outcome.FAILED);
                    say(node, step, label(Outcome.FAILED) + " (" + seconds(System.nanoTime() - phaseStart) + ")");
                    return;
                }
                asked.clear(); // stopping: the loop below says where
            } catch (RemoteException e) {
                asked.clear(); // stopped before connecting: the loop below says where
            }
        }
        boolean hostUnchanged = true;
        for (Step step : steps) {
            if (stop.requested) {
                stoppedAt.putIfAbsent(node.name(), "before step " + step.id() + " (not started)");
                return;
            }
            long t0 = step == steps.get(0) ? phaseStart : System.nanoTime(); // the first step's time includes the batch
            Outcome outcome;
            try {
                StepRunner sr = new StepRunner(remote(node), log, facts, options.commandTimeout(), options.maxWait());
                List<String> problems;
                if (hostUnchanged && asked.containsKey(step)) {
                    if (step != steps.get(0)) log.line("-- step " + step.id() + ": check (answered in the batch above)");
                    problems = asked.get(step);
                } else {
                    log.line("-- step " + step.id() + ": check");
                    problems = sr.probe(step.check(ctx), false);
                }
                if (phase.readOnly()) {
                    if (!problems.isEmpty()) throw new VerifyFailed(step.id(), problems);
                    outcome = Outcome.OK;
                } else if (problems.isEmpty()) {
                    outcome = Outcome.OK;
                } else if (options.dryRun()) {
                    problems.forEach(p -> say(node, step, "would change: " + p));
                    outcome = Outcome.WOULD_CHANGE;
                } else {
                    prepare(step);
                    log.line("-- step " + step.id() + ": apply (" + String.join("; ", problems) + ")");
                    boolean changed = sr.apply(step.apply(ctx));
                    log.line("-- step " + step.id() + ": verify");
                    List<String> still = sr.probe(step.verify(ctx), true);
                    if (!still.isEmpty()) throw new VerifyFailed(step.id(), still);
                    outcome = changed ? Outcome.CHANGED : Outcome.OK;
                }
            } catch (StepRunner.OpFailed e) {
                failures.add(new StepFailure(node.name(), step.id(), e.what, facts.mask(e.command), e.result.exit(),
                    facts.mask(e.result.tail(8)), log.file().toString()));
                outcome = Outcome.FAILED;
            } catch (VerifyFailed e) {
                failures.add(new StepFailure(node.name(), step.id(), phase.readOnly() ? "preflight check" : "verify after apply",
                    "", -1, facts.mask(String.join("\n", e.problems)), log.file().toString()));
                outcome = Outcome.FAILED;
            } catch (RemoteException e) {
                if (stop.requested) {
                    // the stop cut this step short: not a failure of the host, a place to resume from
                    String cut = e.kind() == RemoteException.Kind.INTERRUPTED ? "before its next command" : "while running: " + e.getMessage();
                    log.line("step " + step.id() + " interrupted " + cut);
                    stoppedAt.put(node.name(), "in step " + step.id() + ", " + facts.mask(cut));
                    outcomes.computeIfAbsent(node.name(), k -> new LinkedHashMap<>()).put(step.id(), Outcome.INTERRUPTED);
                    say(node, step, label(Outcome.INTERRUPTED) + " (" + seconds(System.nanoTime() - t0) + ")");
                    return;
                }
                failures.add(new StepFailure(node.name(), step.id(), unreachableWhat(e), "", -1, facts.mask(e.getMessage()), log.file().toString()));
                outcome = Outcome.FAILED;
            } catch (RuntimeException e) {
                // e.g. a file on the host that gpuctl refuses to edit (daemon.json that is not JSON): stop this host, say why
                log.line("step " + step.id() + " stopped: " + e);
                failures.add(new StepFailure(node.name(), step.id(), "stopped", "", -1,
                    facts.mask(String.valueOf(e.getMessage())), log.file().toString()));
                outcome = Outcome.FAILED;
            }
            outcomes.computeIfAbsent(node.name(), k -> new LinkedHashMap<>()).put(step.id(), outcome);
            say(node, step, label(outcome) + " (" + seconds(System.nanoTime() - t0) + ")");
            if (outcome == Outcome.FAILED) return;
            if (outcome != Outcome.OK && outcome != Outcome.WOULD_CHANGE) hostUnchanged = false;
        }
    }

    private static String unreachableWhat(RemoteException e) {
        return switch (e.kind()) {
            case TIMEOUT -> "a command timed out";
            case CONNECTION_LOST -> "the connection was lost";
            default -> "cannot reach the host";
        };
    }

    /** Runs a step's once-per-run ops on the master (e.g. creating the join token) before its first apply. */
    private void prepare(Step step) {
        Node master = inv.master();
        var ops = step.prepareOnMaster(new HostContext(inv, master));
        if (ops.isEmpty()) return;
        synchronized (prepared) {
            if (prepared.contains(step.id())) return;
            new StepRunner(remote(master), log(master), facts, options.commandTimeout(), options.maxWait()).apply(ops);
            prepared.add(step.id());
        }
    }

    private void say(Node node, Step step, String text) {
        synchronized (progress) {
            progress.printf("%-12s %-10s %s%n", node.name(), step.id(), text);
            progress.flush();
        }
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

    /** The stop request, shared by every host's connection. */
    static final class Stop {
        volatile boolean requested;

        void check(String host, String what) {
            if (requested) throw new RemoteException(RemoteException.Kind.INTERRUPTED, host, host + ": stopped before " + what + " (interrupted)");
        }
    }

    /** A host's connection that starts nothing once a stop was requested; commands already running finish. */
    record Stoppable(Remote inner, Stop stop) implements Remote {
        @Override public String name() { return inner.name(); }

        @Override public ExecResult exec(String command, Duration timeout) {
            stop.check(inner.name(), RemoteException.shown(command));
            return inner.exec(command, timeout);
        }

        @Override public Held hold(String command, Duration timeout) {
            stop.check(inner.name(), RemoteException.shown(command));
            return inner.hold(command, timeout);
        }

        @Override public void upload(byte[] content, String path, String mode, String owner) {
            stop.check(inner.name(), "writing " + path);
            inner.upload(content, path, mode, owner);
        }

        @Override public byte[] download(String path) {
            stop.check(inner.name(), "reading " + path);
            return inner.download(path);
        }

        @Override public void close() { inner.close(); }
    }

    private static final class VerifyFailed extends RuntimeException {
        final List<String> problems;
        VerifyFailed(String step, List<String> problems) {
            super(step);
            this.problems = problems;
        }
    }
}
