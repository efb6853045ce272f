package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.Role;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.steps.CertificatesStep;
import dev.gpuctl.steps.Facts;
import dev.gpuctl.steps.HostContext;
import dev.gpuctl.steps.Phase;
import dev.gpuctl.steps.Probe;
import dev.gpuctl.steps.Step;
import dev.gpuctl.steps.Steps;
import dev.gpuctl.steps.PreflightStep;
import java.io.PrintWriter;
import java.io.Writer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * {@code gpuctl verify}: asks every host every step's verify probes, read-only, hosts in parallel. Preflight's
 * probes run first on every host, so that facts such as each node's nvidia-smi GPU count are known when the
 * master's cluster checks compare against them.
 */
public final class Verifier {
    /**
     * One check's answer. fix is the command that makes it right. warning: set on a check that passed but names
     * something that soon will not (a certificate with under 30 days left); empty otherwise.
     */
    public record Check(String step, String check, boolean ok, String problem, String fix, String warning) {
        public Check(String step, String check, boolean ok, String problem, String fix) {
            this(step, check, ok, problem, fix, "");
        }

        public boolean warned() { return ok && !warning.isEmpty(); }
    }

    /**
     * One certificate's expiry as verify read it (JSON: {@code certificates}).
     *
     * @param kind     control-plane | ca | kubelet | kubeconfig
     * @param expires  ISO-8601 UTC, empty when kubeadm reported it missing
     * @param standing ok | expiring (under 30 days left) | expired | missing
     */
    public record CertificateDate(String name, String kind, String expires, long daysLeft, String standing) {}

    public record HostReport(String name, String address, boolean reachable, String error, List<Check> checks,
                             List<CertificateDate> certificates) {
        public HostReport(String name, String address, boolean reachable, String error, List<Check> checks) {
            this(name, address, reachable, error, checks, List.of());
        }

        public boolean ok() { return reachable && checks.stream().allMatch(Check::ok); }
    }

    public record Report(List<HostReport> hosts) {
        public boolean ok() { return hosts.stream().allMatch(HostReport::ok); }
        /** Every check passed, and at least one of them warned. */
        public boolean warned() { return hosts.stream().flatMap(h -> h.checks().stream()).anyMatch(Check::warned); }
        public List<HostReport> unreachable() { return hosts.stream().filter(h -> !h.reachable()).toList(); }
    }

    private final Inventory inv;
    private final Function<Node, Remote> connector;
    private final Duration timeout;
    private final PrintWriter progress;
    private final Duration maxWait;

    public Verifier(Inventory inv, Function<Node, Remote> connector, Duration timeout) {
        this(inv, connector, timeout, new PrintWriter(Writer.nullWriter()), MAX_WAIT);
    }

    /**
     * @param progress where a line goes when a wait for something still starting begins and ends (stderr)
     * @param maxWait  how long into the run what is still starting is waited for (default {@link #MAX_WAIT})
     */
    public Verifier(Inventory inv, Function<Node, Remote> connector, Duration timeout, PrintWriter progress, Duration maxWait) {
        this.inv = inv;
        this.connector = connector;
        this.timeout = timeout;
        this.progress = progress;
        this.maxWait = maxWait;
    }

    /** Every step's proof, on these hosts. */
    public Report verify(List<Node> nodes, int concurrency) {
        return verify(Steps.verifyPhases(), nodes, concurrency);
    }

    /** Only the certificate checks ({@code gpuctl certs check}, and after {@code gpuctl certs renew}). */
    public Report verifyCertificates(List<Node> nodes, int concurrency) {
        return verify(List.of(Steps.certificates()), nodes, concurrency);
    }

    public Report verify(List<Phase> phases, List<Node> nodes, int concurrency) {
        waitUntil = System.nanoTime() + maxWait.toNanos();
        definiteOn.clear();
        Facts facts = new Facts();
        Map<String, String> unreachable = new ConcurrentHashMap<>();
        Map<String, List<Check>> checks = new ConcurrentHashMap<>();
        try (HostRun run = new HostRun(inv, connector, facts, "verify", concurrency)) {
            // preflight first, on every host: it teaches the facts (each node's GPU count, say) that the cluster
            // checks compare against. Then every other phase's probes at once, one batch per host: verify changes
            // nothing, so the order that applying needs (the control plane before the joins) does not hold it up.
            List<Phase> first = phases.stream().filter(Phase::readOnly).toList();
            List<Phase> rest = phases.stream().filter(p -> !p.readOnly()).toList();
            // the probes of the later phases are made while preflight asks (a cluster step's probes read and
            // hash manifests: a second of CPU on the master in a fresh JVM), the master's first: it asks the most
            Map<String, Future<Asked>> later = new ConcurrentHashMap<>();
            ExecutorService maker = Executors.newSingleThreadExecutor();
            try {
                List<Node> masterFirst = new ArrayList<>(nodes);
                masterFirst.sort(Comparator.comparing(n -> n.role() != Role.MASTER));
                for (Node node : masterFirst) later.put(node.name(), maker.submit(() -> probes(rest, node)));
            } finally {
                maker.shutdown();
            }
            for (List<Phase> group : List.of(first, rest)) {
                run.eachHost(nodes.stream().filter(n -> !unreachable.containsKey(n.name())).toList(), node -> {
                    Asked asked = group == rest ? made(later.get(node.name())) : probes(group, node);
                    verifyHost(asked, node, run, unreachable, checks);
                });
                if (group == first) crossHostChecks(nodes, facts, unreachable, checks);
            }
        }
        List<HostReport> hosts = new ArrayList<>();
        for (Node n : nodes) {
            hosts.add(new HostReport(n.name(), n.address(), !unreachable.containsKey(n.name()),
                unreachable.getOrDefault(n.name(), ""), checks.getOrDefault(n.name(), List.of()), certificateDates(facts, n.name())));
        }
        return new Report(hosts);
    }

    /** The probes made beside preflight's questions (see {@link #verify}). */
    private static Asked made(Future<Asked> later) {
        try {
            return later.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while making the probes", e);
        }
    }

    /** Steps of one host asked in one batch: the steps, their probes in order, and each probe's step. */
    private record Part(List<Step> steps, List<Probe> probes, List<Step> owner) {}

    /** A host's probes for some phases, in parts asked side by side: the first phase's steps, then the others'. */
    private record Asked(String kind, List<Part> parts) {}

    private Asked probes(List<Phase> phases, Node node) {
        HostContext ctx = new HostContext(inv, node);
        List<Part> parts = new ArrayList<>();
        for (Phase phase : phases) {
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
        return new Asked(phases.stream().allMatch(Phase::readOnly) ? "check" : "verify", parts);
    }

    /**
     * One host's probes: each part as one batch, the parts side by side on the host's connection (the cluster's
     * checks on the master need not wait for its host checks); each answer is then filed under its step, in
     * step order. A step's probes stay together and in order, so a probe that waits holds up only the ones
     * after it in its part.
     */
    private void verifyHost(Asked asked, Node node, HostRun run, Map<String, String> unreachable, Map<String, List<Check>> checks) {
        if (asked.parts().isEmpty()) return;
        Facts facts = run.facts();
        try {
            Remote remote = run.remote(node);
            HostLog log = run.log(node);
            // the parts after the first start first, each on a thread of its own; the first runs on this thread
            List<CompletableFuture<List<Optional<String>>>> others = new ArrayList<>();
            for (Part part : asked.parts().subList(1, asked.parts().size())) {
                others.add(CompletableFuture.supplyAsync(() -> askPart(part, asked.kind(), remote, log, facts), runnable -> {
                    Thread t = new Thread(runnable, "verify-" + node.name());
                    t.setDaemon(true);
                    t.start();
                }));
            }
            List<List<Optional<String>>> answers = new ArrayList<>();
            answers.add(askPart(asked.parts().get(0), asked.kind(), remote, log, facts));
            for (CompletableFuture<List<Optional<String>>> f : others) {
                try {
                    answers.add(f.join());
                } catch (CompletionException e) {
                    if (e.getCause() instanceof RuntimeException r) throw r;
                    throw e;
                }
            }
            List<Check> hostChecks = checks.computeIfAbsent(node.name(), n -> new CopyOnWriteArrayList<>());
            for (int k = 0; k < asked.parts().size(); k++) {
                Part part = asked.parts().get(k);
                for (int i = 0; i < part.probes().size(); i++) {
                    hostChecks.add(check(part.probes().get(i), answers.get(k).get(i), facts, part.owner().get(i), node));
                }
            }
        } catch (RemoteException e) {
            unreachable.put(node.name(), e.getMessage());
        }
    }

    /** One part's probes as one batch, its log entries kept together in the host's log. */
    private List<Optional<String>> askPart(Part part, String kind, Remote remote, HostLog log, Facts facts) {
        try (HostLog own = log.part()) {
            own.stepsAsked(part.steps().stream().map(Step::id).toList(), kind);
            return new StepRunner(remote, own, facts, timeout, null).askWith(part.probes(), new Patient(remote.name(), part, own));
        }
    }

    /**
     * How long into a verify run what is still starting is waited for: a unit activating or waiting to restart, the
     * API server, nodes not yet Ready, pods not yet running, time not yet synchronised (right after a boot these
     * settle within a minute or two). A definite answer (a unit failed, masked or missing; a file wrong) is never
     * waited for; and once one is found, waiting for what depends on it stops: on its host, and in the cluster's
     * checks, which depend on every host. Bootstrap waits each probe's full time.
     */
    public static final Duration MAX_WAIT = Duration.ofMinutes(2);
    private volatile long waitUntil;
    /** Hosts where a check failed for good in this run: waiting for what is still starting there tells nothing more. */
    private final Set<String> definiteOn = ConcurrentHashMap.newKeySet();

    /** A verify part's patience: each probe's own wait, capped by the run's; progress lines; definite failures noted. */
    private final class Patient implements StepRunner.Patience {
        private final String host;
        private final Map<Probe, Step> owner = new IdentityHashMap<>();

        Patient(String host, Part part, HostLog log) {
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
            say(host + ": still starting, waiting up to " + Math.max(1, (deadline - System.nanoTime()) / 1_000_000_000L)
                + " s: " + p.what() + " (" + firstLine(problem) + ")");
        }

        @Override public void waited(Probe p, Optional<String> problem, long nanos) {
            String after = String.format("%.0f s", nanos / 1e9);
            say(host + ": " + p.what() + (problem.isEmpty() ? ": right after " + after
                : ": still wrong after " + after + (worthWaiting(p) ? "" : " (stopped waiting: another check failed for good)")));
        }
    }

    private void say(String line) {
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
        long left = Math.max(1, Math.min((waitUntil - System.nanoTime()) / 1_000_000_000L, timeout.toSeconds() - 5));
        return Probe.of("host finished booting (systemctl is-system-running)",
            "s=$(timeout " + left + " systemctl is-system-running --wait 2>/dev/null); echo \"${s:-unknown}\"",
            r -> switch (r.stdout().strip()) {
                case "initializing", "starting" -> Optional.of("still booting after " + left + " s (" + r.stdout().strip() + ")");
                default -> Optional.empty();
            });
    }

    /**
     * Preflight's cross-host checks ({@link Preflight#problems}: the same code bootstrap refuses on) on every
     * reachable host, after preflight's probes taught their facts: one check per kind a host took part in, after
     * the host's preflight checks; a problem concerning no host in particular goes to the master.
     */
    private void crossHostChecks(List<Node> nodes, Facts facts, Map<String, String> unreachable, Map<String, List<Check>> checks) {
        List<Node> reached = nodes.stream().filter(n -> !unreachable.containsKey(n.name())).toList();
        List<Preflight.Problem> problems = Preflight.problems(inv, reached, facts);
        String fallback = reached.stream().filter(Node::isMaster).findFirst().or(() -> reached.stream().findFirst()).map(Node::name).orElse("");
        for (Node n : reached) {
            for (Preflight.Kind kind : Preflight.checkedOn(n, facts)) {
                List<String> mine = problems.stream().filter(p -> p.kind() == kind)
                    .filter(p -> p.hosts().contains(n.name()) || (p.hosts().isEmpty() && n.name().equals(fallback)))
                    .map(p -> facts.mask(p.message())).toList();
                checks.computeIfAbsent(n.name(), h -> new CopyOnWriteArrayList<>())
                    .add(new Check("preflight", kind.what, mine.isEmpty(), String.join("\n", mine),
                        mine.isEmpty() ? "" : PREFLIGHT_FIX));
            }
        }
    }

    /** The command that makes a failed check right: a cluster check's fix is the whole ordered run ({@link Step#readsCluster}). */
    static String fix(Step step, String host, String inventory) {
        if (step instanceof PreflightStep) return PREFLIGHT_FIX;
        if (step instanceof CertificatesStep) return CertificatesStep.fix(inventory);
        if (step instanceof dev.gpuctl.steps.GpuHealthStep || step instanceof dev.gpuctl.steps.GpuRecordStep) return "the fix named in the problem (gpuctl does not change a GPU's health)";
        if (step instanceof dev.gpuctl.steps.SchedulingStep) return "gpuctl uncordon -i " + inventory + " NODE… once its maintenance is done";
        if (step.readsCluster()) return "gpuctl bootstrap " + inventory;
        return "gpuctl bootstrap --only " + step.id() + " --hosts " + host + " " + inventory;
    }

    private static final String PREFLIGHT_FIX = "see the problem; preflight checks are not changed by gpuctl";

    private Check check(Probe p, Optional<String> problem, Facts facts, Step step, Node node) {
        String fix = fix(step, node.name(), inv.file().toString());
        String warning = problem.isEmpty() && step instanceof CertificatesStep certs ? certs.warning(p, facts, node.name()) : "";
        return new Check(step.id(), p.what(), problem.isEmpty(), facts.mask(problem.orElse("")),
            problem.isEmpty() && warning.isEmpty() ? "" : fix, warning);
    }

    /** The certificate dates the certificate checks learned on a host (none where they did not run). */
    static List<CertificateDate> certificateDates(Facts facts, String host) {
        Instant now = Instant.now();
        return CertificatesStep.certificates(facts, host).stream().map(c -> new CertificateDate(c.name(),
            c.kind().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'),
            c.notAfter() == null ? "" : c.notAfter().toString(), c.daysLeft(now),
            c.standing(now).name().toLowerCase(java.util.Locale.ROOT))).toList();
    }
}
