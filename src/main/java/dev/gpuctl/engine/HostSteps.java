package dev.gpuctl.engine;

import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
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
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The {@link Runner}'s apply path (APPLY and DRY_RUN): one host's steps of one phase, in order, each checked, applied
 * when not right (or said what would change), verified; one progress line per step; a step's once-per-run ops on the
 * master first. The runner owns the session (rounds, lock, stop); this class owns what one host does in a phase.
 */
final class HostSteps extends RunPart {
    private final Set<String> prepared = Collections.synchronizedSet(new HashSet<>());

    HostSteps(RunParts parts) { super(parts); }

    private StepRunner stepRunner(Node node, HostLog log) {
        return new StepRunner(run.remote(node), log, facts, options.commandTimeout(), options.maxWait(), (problem, deadline) -> {},
            run.readings(node)).telling(told(node, "-"));
    }

    /** Prints what an op tells the user on the progress stream, as a line of the host's. */
    private Consumer<String> told(Node node, String stepId) {
        return line -> {
            synchronized (progress) {
                progress.printf("%-12s %-10s %s%n", node.name(), stepId, line);
                progress.flush();
            }
        };
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
        }, run.readings(node)).telling(told(node, step.id()));
    }

    /**
     * One host's steps of one phase, in order, each to its result; the host stops at its first failed or
     * interrupted step. Every step's check is asked in one round trip first, and an answer is used while nothing on
     * this host has changed since; a step that applies asks the later steps' checks again with its verify.
     */
    Map<Step, StepResult> run(Phase phase, Node node) {
        HostContext ctx = new HostContext(inv, node);
        HostLog log = run.log(node);
        List<Step> steps = phase.steps().stream().filter(s -> s.runsOn(ctx)).toList();
        Map<Step, StepResult> results = new LinkedHashMap<>();
        long phaseStart = System.nanoTime();
        Map<Step, List<String>> asked = new HashMap<>(); // the later steps' checks, asked since the host's last change
        if (!phase.readOnly() && steps.size() > 1 && !run.stopRequested()) {
            Optional<Map.Entry<Step, StepResult>> failed = askChecks(ctx, steps, log, asked);
            if (failed.isPresent()) {
                results.put(failed.get().getKey(), failed.get().getValue());
                say(node, failed.get().getKey(), failed.get().getValue(), phaseStart);
                return results;
            }
        }
        List<Pending> pending = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            Step step = steps.get(i);
            if (run.stopRequested()) {
                stoppedAt.putIfAbsent(node.name(), "before step " + step.id() + " (not started)");
                return results;
            }
            long t0 = step == steps.get(0) ? phaseStart : System.nanoTime(); // the first step's time includes the batch
            List<String> known = asked.remove(step);
            if (known != null && i > 0) log.line("-- step " + step.id() + ": check (answered in the batch above)");
            List<Step> rest = steps.subList(i + 1, steps.size());
            StepResult result = runStep(phase, ctx, step, log, known, rest.isEmpty() ? null : pending, rest, asked);
            results.put(step, result);
            say(node, step, result, t0);
            if (result instanceof StepResult.Failed || result instanceof StepResult.Interrupted) return results;
        }
        for (Pending p : pending) {
            if (run.stopRequested()) {
                stoppedAt.putIfAbsent(node.name(), "before the end of step " + p.step().id() + "'s verify (waited for at the end of the phase)");
                return results;
            }
            long t0 = System.nanoTime();
            StepResult proof = guarded(node, p.step(), log, () -> {
                log.line("-- step " + p.step().id() + ": verify, waited for at the end of the phase");
                List<String> still = stepRunner(node, log, p.step()).probe(p.probes(), true);
                return still.isEmpty() ? new StepResult.Ok() : failed(node, p.step(), "verify after apply", still, log);
            });
            if (!(proof instanceof StepResult.Ok)) { // the step's line said "changed": this one says how it ended
                results.put(p.step(), proof);
                say(node, p.step(), proof, t0);
                return results;
            }
        }
        return results;
    }

    /** A step's verify probes that were wrong right after its apply, waited for at the end of the host's phase ({@link Probe#provenAtPhaseEnd}). */
    private record Pending(Step step, List<Probe> probes) {}

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
            return Optional.of(Map.entry(step, new StepResult.Failed(StepFailure.unreachable(node.name(), step.id(), e.cause,
                facts.mask(e.cause.getMessage()), log.file().toString()))));
        } catch (RemoteException e) {
            asked.clear(); // stopped before connecting: the steps' loop says where
            return Optional.empty();
        }
    }

    /**
     * One step on one host: check (or the batch's answer, {@code known}); if not right, apply (or, in dry-run, say
     * what would change); then verify. A verify probe declared {@link Probe#provenAtPhaseEnd} that is wrong right
     * after the apply goes to {@code pending} (null: the step is the host's last of the phase, and everything is
     * waited for in place). An apply empties {@code asked} (the host changed: its answers are old), and the checks of
     * the host's later steps of the phase ({@code rest}) are asked with the verify, in its round trip, after its waits,
     * and put in {@code asked} when the verify passes. Whatever a command or the host does, the answer is a value.
     */
    private StepResult runStep(Phase phase, HostContext ctx, Step step, HostLog log, List<String> known, List<Pending> pending,
                               List<Step> rest, Map<Step, List<String>> asked) {
        Node node = ctx.node();
        String failedWhat = phase.readOnly() ? "preflight check" : "verify after apply";
        return guarded(node, step, log, () -> {
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
            asked.clear();
            boolean changed = sr.apply(step.apply(ctx));
            log.line("-- step " + step.id() + ": verify" + (rest.isEmpty() ? ""
                : " (asked together with the check of steps " + String.join(", ", rest.stream().map(Step::id).toList()) + ")"));
            List<Probe> verify = step.verify(ctx);
            List<Probe> later = pending == null ? List.of() : verify.stream().filter(Probe::atPhaseEnd).toList();
            List<Probe> now = later.isEmpty() ? verify : verify.stream().filter(p -> !p.atPhaseEnd()).toList();
            List<List<Probe>> once = new ArrayList<>();
            once.add(later); // asked once: wrong, it is waited for at the phase's end
            rest.forEach(s -> once.add(s.check(ctx)));
            List<List<String>> got = sr.probeWith(now, once);
            List<String> still = got.get(0);
            if (!still.isEmpty()) return failed(node, step, failedWhat, still, log);
            if (!later.isEmpty() && !got.get(1).isEmpty()) {
                log.line("step " + step.id() + ": not right yet, waited for at the end of the phase (after the host's later steps)");
                pending.add(new Pending(step, later));
            }
            for (int k = 0; k < rest.size(); k++) asked.put(rest.get(k), got.get(k + 2));
            return changed ? new StepResult.Changed() : new StepResult.Ok();
        });
    }

    /**
     * Runs {@code body} (a step's work on one host) and turns whatever the host or a command does into a value: a
     * failed command, a host that stopped answering, a stop (Ctrl-C) that cut it short, a file gpuctl refuses to edit.
     */
    private StepResult guarded(Node node, Step step, HostLog log, Supplier<StepResult> body) {
        try {
            return body.get();
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
            return new StepResult.Failed(StepFailure.unreachable(node.name(), step.id(), e, facts.mask(e.getMessage()),
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
            facts.mask(String.join("\n", problems)), log.file().toString(), false, step.failureKind()));
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
            progress.printf("%-12s %-10s %s%n", node.name(), step.id(), Runner.label(result.outcome()) + " (" + Runner.seconds(System.nanoTime() - t0) + ")");
            progress.flush();
        }
    }
}
