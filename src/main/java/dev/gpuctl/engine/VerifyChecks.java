package dev.gpuctl.engine;

import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.Role;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.steps.CertificatesStep;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Phase;
import dev.gpuctl.steps.PreflightStep;
import dev.gpuctl.step.Probe;
import dev.gpuctl.steps.Repair;
import dev.gpuctl.step.Step;
import java.time.Instant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * {@link Runner}'s VERIFY mode: a host's probes asked in parts, each answer a row of the report; the cross-host checks
 * as rows of the hosts they concern; the wait for what is still starting; the fix named for each failed check. The
 * run loop (rounds, hosts, the pool, the host logs) stays {@link Runner}'s.
 */
final class VerifyChecks extends RunPart {
    /** Until when (a {@link System#nanoTime()} instant) what is still starting is waited for. */
    private volatile long waitUntil;
    /** Hosts where a check failed for good in this run: waiting for what is still starting there tells nothing more. */
    private final Set<String> definiteOn = ConcurrentHashMap.newKeySet();

    VerifyChecks(RunParts parts) { super(parts); }

    /** A run starts: what is still starting is waited for up to the run's wait from now; nothing has failed for good yet. */
    void start() {
        waitUntil = System.nanoTime() + (options.maxWait() == null ? Runner.VERIFY_WAIT : options.maxWait()).toNanos();
        definiteOn.clear();
    }

    /** The report: every host of the run ({@code selected}, inventory order) with its checks, or why it was not reached. */
    VerifyReport report(List<Node> selected, Map<String, List<VerifyReport.Check>> checks, Map<String, String> unreachable) {
        List<VerifyReport.HostReport> hosts = new ArrayList<>();
        for (Node n : selected) {
            hosts.add(new VerifyReport.HostReport(n.name(), n.address(), !unreachable.containsKey(n.name()),
                unreachable.getOrDefault(n.name(), ""), checks.getOrDefault(n.name(), List.of()), certificateDates(facts, n.name()),
                Repair.lastRepair(facts, n.name()).map(r -> new VerifyReport.LastRepair(r.at(), r.proved(), r.remedies())).orElse(null)));
        }
        return new VerifyReport(hosts);
    }

    /** Steps of one host asked in one batch: the steps, their probes in order, and each probe's step. */
    record Part(List<Step> steps, List<Probe> probes, List<Step> owner) {}

    /** A host's probes for a round, in parts asked side by side: the first phase's steps, then the others'. */
    record Asked(String kind, List<Part> parts) {}

    /** How long making the later probes waits for the first round's connections. */
    static final Duration CONNECTIONS_FIRST = Duration.ofSeconds(3);

    /**
     * Each host's probes for {@code round}, made one host after another beside the pool, the master's first, once
     * the connections to {@code connectingFirst} (the first round's hosts) were tried or {@link #CONNECTIONS_FIRST}
     * passed.
     */
    Map<String, CompletableFuture<Asked>> makeAhead(List<Phase> round, List<Node> selected, List<Node> connectingFirst) {
        List<Node> masterFirst = new ArrayList<>(selected);
        masterFirst.sort(Comparator.comparing(n -> n.role() != Role.MASTER));
        Map<String, CompletableFuture<Asked>> made = new LinkedHashMap<>();
        for (Node node : masterFirst) made.put(node.name(), new CompletableFuture<>());
        run.beside("verify-probes", () -> {
            // the first round's SSH handshakes first: its hosts' first commands wait for them, the probes made here
            // are needed only once the first round's answers are in
            run.awaitConnections(connectingFirst.stream().map(Node::name).toList(), CONNECTIONS_FIRST);
            for (Node node : masterFirst) {
                try {
                    made.get(node.name()).complete(asked(round, node));
                } catch (RuntimeException e) {
                    made.get(node.name()).completeExceptionally(e);
                }
            }
            return null;
        });
        return made;
    }

    Asked asked(List<Phase> round, Node node) {
        HostContext ctx = new HostContext(inv, node);
        List<Part> parts = new ArrayList<>();
        for (Phase phase : round) {
            if (parts.size() < 2) parts.add(new Part(new ArrayList<>(), new ArrayList<>(), new ArrayList<>()));
            Part part = parts.get(parts.size() - 1);
            for (Step step : phase.steps()) {
                if (!step.runsOn(ctx)) continue;
                List<Probe> own = phase.readOnly() ? step.check(ctx) : step.verify(ctx);
                if (step instanceof PreflightStep) {
                    own = new ArrayList<>(own);
                    own.add(0, bootFinished());
                }
                if (own.isEmpty()) continue;
                part.steps().add(step);
                part.probes().addAll(own);
                own.forEach(p -> part.owner().add(step));
            }
        }
        parts.removeIf(p -> p.probes().isEmpty());
        return new Asked(round.stream().allMatch(Phase::readOnly) ? "check" : "verify", parts);
    }

    /**
     * One host's probes: each part as one batch, the parts side by side on the host's connection (the cluster's
     * checks on the master need not wait for its host checks); each answer is then filed under its step, in step
     * order, as that step's {@link StepResult.Checked}. A step's probes stay together and in order, so a probe that
     * waits holds up only the ones after it in its part. A host that cannot be reached is one {@link StepResult.Failed}.
     */
    Map<Step, StepResult> verifyHost(Asked asked, Node node) {
        Map<Step, StepResult> results = new LinkedHashMap<>();
        if (asked.parts().isEmpty()) return results;
        HostLog log = run.log(node);
        try {
            Remote remote = run.remote(node);
            // the parts after the first start first, each beside the pool; the first runs on this thread
            List<CompletableFuture<List<Optional<String>>>> others = new ArrayList<>();
            for (Part part : asked.parts().subList(1, asked.parts().size())) {
                others.add(run.beside("verify-" + node.name(), () -> askPart(part, asked.kind(), remote, log)));
            }
            List<List<Optional<String>>> answers = new ArrayList<>();
            answers.add(askPart(asked.parts().get(0), asked.kind(), remote, log));
            for (CompletableFuture<List<Optional<String>>> f : others) answers.add(HostRun.joined(f));
            Map<Step, List<VerifyReport.Check>> rows = new LinkedHashMap<>();
            for (int k = 0; k < asked.parts().size(); k++) {
                Part part = asked.parts().get(k);
                for (int i = 0; i < part.probes().size(); i++) {
                    Step step = part.owner().get(i);
                    rows.computeIfAbsent(step, x -> new ArrayList<>()).add(check(part.probes().get(i), answers.get(k).get(i), step, node));
                }
            }
            rows.forEach((step, list) -> results.put(step, new StepResult.Checked(list)));
        } catch (RemoteException e) {
            // a host not reached fails the run for good: waiting for what is still starting elsewhere tells nothing more
            // (a cluster check of this node, its allocatable against its nvidia-smi count, could never pass)
            definiteOn.add(node.name());
            Step first = asked.parts().get(0).steps().get(0);
            if (run.stopRequested()) stoppedAt.putIfAbsent(node.name(), "while verifying: " + facts.mask(e.getMessage()));
            results.put(first, new StepResult.Failed(StepFailure.unreachable(node.name(), first.id(), e,
                facts.mask(e.getMessage()), log.file().toString())));
        }
        return results;
    }

    /** One part's probes as one batch, its log entries kept together in the host's log. */
    private List<Optional<String>> askPart(Part part, String kind, Remote remote, HostLog log) {
        try (HostLog own = log.part()) {
            own.stepsAsked(part.steps().stream().map(Step::id).toList(), kind);
            return new StepRunner(remote, own, facts, options.commandTimeout(), null).askWith(part.probes(), new Patient(remote.name(), part));
        }
    }

    /** A verify part's patience: each probe's own wait, capped by the run's; progress lines; definite failures noted. */
    private final class Patient implements StepRunner.Patience {
        private final String host;
        private final Map<Probe, Step> owner = new IdentityHashMap<>();

        Patient(String host, Part part) {
            this.host = host;
            for (int i = 0; i < part.probes().size(); i++) owner.put(part.probes().get(i), part.owner().get(i));
        }

        private boolean cluster(Probe p) {
            Step s = owner.get(p);
            return s != null && s.readsCluster();
        }

        @Override public Long deadline(Probe p) {
            return Math.min(System.nanoTime() + p.waitUpTo().toNanos(), waitUntil);
        }

        @Override public boolean worthWaiting(Probe p) {
            return cluster(p) ? definiteOn.isEmpty() : !definiteOn.contains(host);
        }

        @Override public void definite(Probe p, String problem) {
            definiteOn.add(host);
        }

        @Override public void waiting(Probe p, String problem, long deadline) {
            sayVerify(host + ": still starting, waiting up to " + Math.max(1, (deadline - System.nanoTime()) / 1_000_000_000L)
                + " s: " + p.what() + " (" + firstLine(problem) + ")");
        }

        @Override public void waited(Probe p, Optional<String> problem, long nanos) {
            String after = String.format("%.0f s", nanos / 1e9);
            sayVerify(host + ": " + p.what() + (problem.isEmpty() ? ": right after " + after
                : ": still wrong after " + after + (worthWaiting(p) ? "" : " (stopped waiting: another check failed for good)")));
        }
    }

    private void sayVerify(String line) {
        synchronized (progress) {
            progress.println("verify: " + line);
            progress.flush();
        }
    }

    private static String firstLine(String s) {
        String l = s.strip().lines().findFirst().orElse("");
        return l.length() > 100 ? l.substring(0, 97) + "..." : l;
    }

    /**
     * Waits (bounded by the run's wait) until systemd has finished booting the host, so that what a boot starts is
     * judged once it had its chance: right after a reboot sshd answers before docker or the kubelet are up.
     */
    private Probe bootFinished() {
        long left = Math.max(1, Math.min((waitUntil - System.nanoTime()) / 1_000_000_000L, options.commandTimeout().toSeconds() - 5));
        return Probe.of("host finished booting (systemctl is-system-running)",
            "s=$(timeout " + left + " systemctl is-system-running --wait 2>/dev/null); echo \"${s:-unknown}\"",
            r -> switch (r.stdout().strip()) {
                case "initializing", "starting" -> Optional.of("still booting after " + left + " s (" + r.stdout().strip() + ")");
                default -> Optional.empty();
            });
    }

    /**
     * Preflight's cross-host checks ({@link Preflight#problems}: the same code APPLY refuses on) on every reached
     * host, after preflight's probes taught their facts: one check per kind a host took part in, after the host's
     * preflight checks; a problem concerning no host in particular goes to the master.
     */
    void crossHostChecks(List<Node> reached, Map<String, List<VerifyReport.Check>> checks) {
        List<Preflight.Problem> problems = Preflight.problems(inv, reached, facts);
        String fallback = reached.stream().filter(Node::isMaster).findFirst().or(() -> reached.stream().findFirst()).map(Node::name).orElse("");
        for (Node n : reached) {
            for (Preflight.Kind kind : Preflight.checkedOn(inv, n, facts)) {
                List<String> mine = problems.stream().filter(p -> p.kind() == kind)
                    .filter(p -> p.hosts().contains(n.name()) || (p.hosts().isEmpty() && n.name().equals(fallback)))
                    .map(p -> facts.mask(p.message())).toList();
                checks.computeIfAbsent(n.name(), h -> new CopyOnWriteArrayList<>())
                    .add(new VerifyReport.Check("preflight", kind.what, mine.isEmpty(), String.join("\n", mine),
                        mine.isEmpty() ? "" : PreflightStep.FIX));
            }
        }
    }

    private VerifyReport.Check check(Probe p, Optional<String> problem, Step step, Node node) {
        String fix = step.fix(p, problem.isPresent(), node.name(), inv.file().toString());
        String warning = problem.isEmpty() ? step.warning(p, facts, node.name()) : "";
        return new VerifyReport.Check(step.id(), p.what(), problem.isEmpty(), facts.mask(problem.orElse("")),
            problem.isEmpty() && warning.isEmpty() ? "" : fix, warning, facts.mask(step.detail(p, facts, node.name())));
    }

    /** The certificate dates the certificate checks learned on a host (none where they did not run). */
    static List<VerifyReport.CertificateDate> certificateDates(Facts facts, String host) {
        Instant now = Instant.now();
        return CertificatesStep.certificates(facts, host).stream().map(c -> new VerifyReport.CertificateDate(c.name(),
            c.kind().name().toLowerCase(Locale.ROOT).replace('_', '-'),
            c.notAfter() == null ? "" : c.notAfter().toString(), c.daysLeft(now),
            c.standing(now).name().toLowerCase(Locale.ROOT))).toList();
    }
}
