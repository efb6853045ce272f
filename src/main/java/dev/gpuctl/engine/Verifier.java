package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.steps.Facts;
import dev.gpuctl.steps.HostContext;
import dev.gpuctl.steps.Phase;
import dev.gpuctl.steps.Probe;
import dev.gpuctl.steps.Step;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
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
    /** One check's answer. fix is the command that makes it right. */
    public record Check(String step, String check, boolean ok, String problem, String fix) {}

    public record HostReport(String name, String address, boolean reachable, String error, List<Check> checks) {
        public boolean ok() { return reachable && checks.stream().allMatch(Check::ok); }
    }

    public record Report(List<HostReport> hosts) {
        public boolean ok() { return hosts.stream().allMatch(HostReport::ok); }
        public List<HostReport> unreachable() { return hosts.stream().filter(h -> !h.reachable()).toList(); }
    }

    private final Inventory inv;
    private final Function<Node, Remote> connector;
    private final Duration timeout;

    public Verifier(Inventory inv, Function<Node, Remote> connector, Duration timeout) {
        this.inv = inv;
        this.connector = connector;
        this.timeout = timeout;
    }

    public Report verify(List<Phase> phases, List<Node> nodes, int concurrency) {
        waitUntil = System.nanoTime() + MAX_WAIT.toNanos();
        Facts facts = new Facts();
        Map<String, Remote> remotes = new ConcurrentHashMap<>();
        Map<String, String> unreachable = new ConcurrentHashMap<>();
        Map<String, List<Check>> checks = new ConcurrentHashMap<>();
        Path logDir = inv.stateDir().resolve("logs").resolve(java.time.LocalDateTime.now()
            .format(java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + "-verify");
        Map<String, HostLog> logs = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, concurrency));
        try {
            // preflight first, on every host: it teaches the facts (each node's GPU count, say) that the cluster
            // checks compare against. Then every other phase's probes at once, one batch per host: verify changes
            // nothing, so the order that applying needs (the control plane before the joins) does not hold it up.
            List<Phase> first = phases.stream().filter(Phase::readOnly).toList();
            List<Phase> rest = phases.stream().filter(p -> !p.readOnly()).toList();
            for (List<Phase> group : List.of(first, rest)) {
                List<Future<?>> running = new ArrayList<>();
                for (Node node : nodes) {
                    if (unreachable.containsKey(node.name())) continue;
                    running.add(pool.submit(() -> verifyHost(group, node, facts, remotes, unreachable, checks, logs, logDir)));
                }
                for (Future<?> f : running) {
                    try {
                        f.get();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            }
        } finally {
            pool.shutdownNow();
            remotes.values().forEach(Remote::close);
            logs.values().forEach(HostLog::close);
        }
        List<HostReport> hosts = new ArrayList<>();
        for (Node n : nodes) {
            hosts.add(new HostReport(n.name(), n.address(), !unreachable.containsKey(n.name()),
                unreachable.getOrDefault(n.name(), ""), checks.getOrDefault(n.name(), List.of())));
        }
        return new Report(hosts);
    }

    /**
     * One host's probes for every step of these phases that runs on it, asked as one batch (a step's probes
     * stay together and in order, so a probe that waits holds up only the ones after it); each answer is then
     * filed under its step.
     */
    private void verifyHost(List<Phase> phases, Node node, Facts facts, Map<String, Remote> remotes,
                            Map<String, String> unreachable, Map<String, List<Check>> checks,
                            Map<String, HostLog> logs, Path logDir) {
        HostContext ctx = new HostContext(inv, node);
        List<Step> steps = new ArrayList<>();
        List<Probe> probes = new ArrayList<>();
        List<Step> owner = new ArrayList<>();
        for (Phase phase : phases) {
            for (Step step : phase.steps()) {
                if (!step.runsOn(ctx)) continue;
                List<Probe> own = phase.readOnly() ? step.check(ctx) : step.verify(ctx);
                if (own.isEmpty()) continue;
                steps.add(step);
                probes.addAll(own);
                own.forEach(p -> owner.add(step));
            }
        }
        if (probes.isEmpty()) return;
        try {
            Remote remote = remotes.computeIfAbsent(node.name(), n -> connector.apply(node));
            HostLog log = logs.computeIfAbsent(node.name(), n -> new HostLog(logDir, n, facts));
            String kind = phases.stream().allMatch(Phase::readOnly) ? "check" : "verify";
            log.line("-- step " + steps.get(0).id() + ": " + kind
                + (steps.size() > 1 ? " (asked together with steps " + steps.subList(1, steps.size()).stream().map(Step::id)
                    .collect(java.util.stream.Collectors.joining(", ")) + ")" : ""));
            List<Optional<String>> problems = new StepRunner(remote, log, facts, timeout, null)
                .askAll(probes, p -> Math.min(System.nanoTime() + p.waitUpTo().toNanos(), waitUntil));
            List<Check> hostChecks = checks.computeIfAbsent(node.name(), n -> new java.util.concurrent.CopyOnWriteArrayList<>());
            for (int i = 0; i < probes.size(); i++) hostChecks.add(check(probes.get(i), problems.get(i), facts, owner.get(i), node));
        } catch (RemoteException e) {
            unreachable.put(node.name(), e.getMessage());
        }
    }

    /**
     * How long into a verify run probes that declare a wait (time sync, pods, node readiness settle in seconds
     * after a reboot) are asked again; after that each probe is asked once. Bootstrap waits each probe's full time.
     */
    public static final Duration MAX_WAIT = Duration.ofSeconds(30);
    private volatile long waitUntil;

    /** Cluster checks depend on the hosts (a stopped kubelet, a lost default runtime): their fix is the whole ordered run. */
    static final java.util.Set<String> CLUSTER_STEPS = java.util.Set.of("init", "cni", "gpu");

    /** The command that makes a failed check right. */
    static String fix(String step, String host, String inventory) {
        if (step.equals("preflight")) return "see the problem; preflight checks are not changed by gpuctl";
        if (CLUSTER_STEPS.contains(step)) return "gpuctl bootstrap " + inventory;
        return "gpuctl bootstrap --only " + step + " --hosts " + host + " " + inventory;
    }

    private Check check(Probe p, Optional<String> problem, Facts facts, Step step, Node node) {
        String fix = fix(step.id(), node.name(), inv.file().toString());
        return new Check(step.id(), p.what(), problem.isEmpty(), facts.mask(problem.orElse("")), problem.isEmpty() ? "" : fix);
    }
}
