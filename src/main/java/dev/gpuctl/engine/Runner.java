package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
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
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
    private final PrintWriter progress;
    private final Options options;
    private final Facts facts = new Facts();
    private final HostRun run;
    private final Set<String> prepared = Collections.synchronizedSet(new HashSet<>());
    private final Map<String, String> stoppedAt = new ConcurrentHashMap<>();
    private volatile String lockHolder;

    public Runner(Inventory inv, Function<Node, Remote> connector, PrintWriter progress, Options options) {
        this.inv = inv;
        this.progress = progress;
        this.options = options;
        this.run = new HostRun(inv, connector, facts, "", options.concurrency());
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
        Path logDir = run.logDir();
        MasterLock.Acquired lock = null;
        try {
            int n = 0;
            for (Phase phase : phases) {
                if (run.stopRequested()) break;
                if (!phase.readOnly() && lock == null && lockHolder != null && !options.dryRun()) {
                    MasterLock.Outcome taken;
                    try {
                        taken = MasterLock.acquire(run.remote(inv.master()), lockHolder, options.commandTimeout());
                    } catch (RemoteException e) {
                        return new Result(true, List.of(), List.of(facts.mask(e.getMessage())), outcomes, logDir);
                    }
                    if (taken instanceof MasterLock.Busy busy) {
                        return new Result(true, List.of(), List.of(busy.message()), outcomes, logDir);
                    }
                    lock = (MasterLock.Acquired) taken;
                    run.log(inv.master()).line("bootstrap lock taken on " + inv.master().name() + ": " + lockHolder);
                }
                List<Node> phaseHosts = hostsOf(phase);
                if (phaseHosts.isEmpty()) continue;
                progress.println("== phase " + n++ + ": " + phase.title() + " ==");
                progress.flush();
                run.eachHost(phaseHosts, node -> {
                    for (Map.Entry<Step, StepResult> done : runHost(phase, node).entrySet()) {
                        outcomes.computeIfAbsent(node.name(), k -> new LinkedHashMap<>()).put(done.getKey().id(), done.getValue().outcome());
                        if (done.getValue() instanceof StepResult.Failed f) failures.add(f.failure());
                    }
                });
                if (run.stopRequested()) break;
                if (phase.readOnly()) {
                    List<String> problems = new ArrayList<>(failures.stream().map(StepFailure::describe).toList());
                    if (failures.isEmpty()) problems.addAll(Preflight.crossHost(inv, selected(), facts));
                    if (!problems.isEmpty()) return new Result(true, List.copyOf(failures), problems, outcomes, logDir);
                } else if (!failures.isEmpty()) {
                    break;
                }
            }
            if (run.stopRequested()) {
                List<String> where = inv.nodes().stream().map(Node::name).filter(stoppedAt::containsKey)
                    .map(h -> h + " " + stoppedAt.get(h)).toList();
                if (where.isEmpty()) where = List.of("between phases: every step that started had finished");
                return new Result(false, List.copyOf(failures), List.of(), outcomes, logDir, where);
            }
            return new Result(false, List.copyOf(failures), List.of(), outcomes, logDir);
        } finally {
            if (lock != null) lock.held().close();
            run.close();
        }
    }

    private List<Node> hostsOf(Phase phase) {
        return selected().stream()
            .filter(node -> phase.steps().stream().anyMatch(s -> s.runsOn(new HostContext(inv, node))))
            .toList();
    }

    private StepRunner stepRunner(Node node, HostLog log) {
        return new StepRunner(run.remote(node), log, facts, options.commandTimeout(), options.maxWait());
    }

    /** A step runner whose waits the step may announce on the progress stream ({@link Step#whileWaiting}). */
    private StepRunner stepRunner(Node node, HostLog log, Step step) {
        return new StepRunner(run.remote(node), log, facts, options.commandTimeout(), options.maxWait(), (problem, deadline) -> {
            String line = step.whileWaiting(problem, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            if (line == null) return;
            synchronized (progress) {
                progress.printf("%-12s %-10s %s%n", node.name(), step.id(), line);
                progress.flush();
            }
        });
    }

    /**
     * One host's steps of one phase, in order, each to its result; the host stops at its first failed or
     * interrupted step. Every step's check is asked in one round trip first, and an answer is used while nothing on
     * this host has changed since.
     */
    private Map<Step, StepResult> runHost(Phase phase, Node node) {
        HostContext ctx = new HostContext(inv, node);
        HostLog log = run.log(node);
        List<Step> steps = phase.steps().stream().filter(s -> s.runsOn(ctx)).toList();
        Map<Step, StepResult> results = new LinkedHashMap<>();
        long phaseStart = System.nanoTime();
        Map<Step, List<String>> asked = new HashMap<>();
        if (!phase.readOnly() && steps.size() > 1 && !run.stopRequested()) {
            Optional<Map.Entry<Step, StepResult>> failed = askChecks(ctx, steps, log, asked);
            if (failed.isPresent()) {
                results.put(failed.get().getKey(), failed.get().getValue());
                say(node, failed.get().getKey(), failed.get().getValue(), phaseStart);
                return results;
            }
        }
        boolean hostUnchanged = true;
        for (Step step : steps) {
            if (run.stopRequested()) {
                stoppedAt.putIfAbsent(node.name(), "before step " + step.id() + " (not started)");
                return results;
            }
            long t0 = step == steps.get(0) ? phaseStart : System.nanoTime(); // the first step's time includes the batch
            List<String> known = hostUnchanged ? asked.get(step) : null;
            if (known != null && step != steps.get(0)) log.line("-- step " + step.id() + ": check (answered in the batch above)");
            StepResult result = runStep(phase, ctx, step, log, known);
            results.put(step, result);
            say(node, step, result, t0);
            if (result instanceof StepResult.Failed || result instanceof StepResult.Interrupted) return results;
            if (result instanceof StepResult.Changed) hostUnchanged = false;
        }
        return results;
    }

    /**
     * Every step's check in one batch; fills {@code asked} with each step's problems. When the host stops answering,
     * the answer is the failure of the step whose probe was running (none when the run is stopping: the steps' loop
     * says where).
     */
    private Optional<Map.Entry<Step, StepResult>> askChecks(HostContext ctx, List<Step> steps, HostLog log, Map<Step, List<String>> asked) {
        Node node = ctx.node();
        try {
            StepRunner sr = stepRunner(node, log);
            log.stepsAsked(steps.stream().map(Step::id).toList(), "check");
            List<List<String>> problems = sr.probeGroups(steps.stream().map(s -> s.check(ctx)).toList());
            for (int i = 0; i < steps.size(); i++) asked.put(steps.get(i), problems.get(i));
            return Optional.empty();
        } catch (StepRunner.GroupFailed e) {
            asked.clear();
            if (run.stopRequested()) return Optional.empty();
            Step step = steps.get(e.group);
            return Optional.of(Map.entry(step, new StepResult.Failed(new StepFailure(node.name(), step.id(), unreachableWhat(e.cause), "", -1,
                facts.mask(e.cause.getMessage()), log.file().toString()))));
        } catch (RemoteException e) {
            asked.clear(); // stopped before connecting: the steps' loop says where
            return Optional.empty();
        }
    }

    /**
     * One step on one host: check (or the batch's answer, {@code known}); if not right, apply (or, in dry-run, say
     * what would change); then verify. Whatever a command or the host does, the answer is a value.
     */
    private StepResult runStep(Phase phase, HostContext ctx, Step step, HostLog log, List<String> known) {
        Node node = ctx.node();
        String failedWhat = phase.readOnly() ? "preflight check" : "verify after apply";
        try {
            StepRunner sr = stepRunner(node, log, step);
            List<String> problems = known;
            if (problems == null) {
                log.line("-- step " + step.id() + ": check");
                problems = sr.probe(step.check(ctx), false);
            }
            if (phase.readOnly()) {
                return problems.isEmpty() ? new StepResult.Ok() : failed(node, step, failedWhat, problems, log);
            }
            if (problems.isEmpty()) return new StepResult.Ok();
            if (options.dryRun()) return new StepResult.WouldChange(problems);
            prepare(step);
            log.line("-- step " + step.id() + ": apply (" + String.join("; ", problems) + ")");
            boolean changed = sr.apply(step.apply(ctx));
            log.line("-- step " + step.id() + ": verify");
            List<String> still = sr.probe(step.verify(ctx), true);
            if (!still.isEmpty()) return failed(node, step, failedWhat, still, log);
            return changed ? new StepResult.Changed() : new StepResult.Ok();
        } catch (StepRunner.OpFailed e) {
            return new StepResult.Failed(new StepFailure(node.name(), step.id(), e.what, facts.mask(e.command), e.result.exit(),
                facts.mask(e.result.tail(8)), log.file().toString()));
        } catch (RemoteException e) {
            if (run.stopRequested()) {
                // the stop cut this step short: not a failure of the host, a place to resume from
                String cut = e.kind() == RemoteException.Kind.INTERRUPTED ? "before its next command" : "while running: " + e.getMessage();
                log.line("step " + step.id() + " interrupted " + cut);
                stoppedAt.put(node.name(), "in step " + step.id() + ", " + facts.mask(cut));
                return new StepResult.Interrupted();
            }
            return new StepResult.Failed(new StepFailure(node.name(), step.id(), unreachableWhat(e), "", -1, facts.mask(e.getMessage()),
                log.file().toString()));
        } catch (RuntimeException e) {
            // e.g. a file on the host that gpuctl refuses to edit (daemon.json that is not JSON): stop this host, say why
            log.line("step " + step.id() + " stopped: " + e);
            return new StepResult.Failed(new StepFailure(node.name(), step.id(), "stopped", "", -1,
                facts.mask(String.valueOf(e.getMessage())), log.file().toString()));
        }
    }

    private StepResult failed(Node node, Step step, String what, List<String> problems, HostLog log) {
        return new StepResult.Failed(new StepFailure(node.name(), step.id(), what, "", -1,
            facts.mask(String.join("\n", problems)), log.file().toString()));
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
            stepRunner(master, run.log(master)).apply(ops);
            prepared.add(step.id());
        }
    }

    /** The step's progress line: "would change: ..." for each problem in a dry run, then its outcome and time. */
    private void say(Node node, Step step, StepResult result, long t0) {
        synchronized (progress) {
            if (result instanceof StepResult.WouldChange w) {
                w.problems().forEach(p -> progress.printf("%-12s %-10s %s%n", node.name(), step.id(), "would change: " + p));
            }
            progress.printf("%-12s %-10s %s%n", node.name(), step.id(), label(result.outcome()) + " (" + seconds(System.nanoTime() - t0) + ")");
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
}
