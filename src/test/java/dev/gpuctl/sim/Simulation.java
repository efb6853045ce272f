package dev.gpuctl.sim;

import dev.gpuctl.workflow.BootstrapWorkflow;
import dev.gpuctl.workflow.VerifyWorkflow;
import dev.gpuctl.workflow.Workflows;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Step;
import dev.gpuctl.steps.Steps;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import dev.gpuctl.kube.Kubeconfig;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToIntFunction;

/**
 * gpuctl's engine (the same {@link Runner}, steps, probes and parsers as {@code gpuctl bootstrap} and {@code gpuctl
 * verify}) run against 1 master + N {@link SimulatedRemote} workers answering from the bed's recording: a no-op re-run
 * of bootstrap or a verify, with the figures of the run ({@link Figures}).
 */
final class Simulation {
    enum Mode { RERUN, VERIFY }

    /** What one simulated run measured. */
    record Figures(Mode mode, int workers, int concurrency, long wallNanos, long idealNanos, long idealAtConcurrencyNanos,
                   int rounds, long cpuNanos, long simCpuNanos, int peakThreads, long peakHeapBytes, int peakSessions, int peakBusyHosts,
                   int peakConnections, long execs, long commands, long nvidiaSmi, long kubectl, Map<String, Long> answeredPerHost,
                   List<String> unanswered, int exit, int changed, List<String> problems,
                   Map<String, Map<LatencyModel.Tool, Long>> heavyPerHost) {
        double wallOverIdeal() { return idealNanos == 0 ? 0 : (double) wallNanos / idealNanos; }

        /** The most runs of {@code tool} on one host of the role ({@code master}: the master, else any worker). */
        long mostRuns(LatencyModel.Tool tool, boolean master) {
            return heavyPerHost.entrySet().stream().filter(e -> e.getKey().equals(SimHost.MASTER_NAME) == master)
                .mapToLong(e -> e.getValue().get(tool)).max().orElse(0);
        }

        /** "nvidia-smi 2, kubectl 0, docker/crictl 1, systemctl show 1": the most runs on one host of the role. */
        String heavyText(boolean master) {
            return String.join(", ", java.util.Arrays.stream(LatencyModel.Tool.values()).map(t -> t.label + " " + mostRuns(t, master)).toList());
        }
    }

    private final Path dir;
    private final Path repo;
    private final Recording recording;

    /**
     * @param dir  where the simulated cluster's inventory and gpuctl's state (.gpuctl/: logs, lock record) go
     * @param repo the repository (its testbed/manifests are the inventory's manifests, as on the bed)
     */
    Simulation(Path dir, Path repo, Recording recording) {
        this.dir = dir;
        this.repo = repo;
        this.recording = recording;
    }

    /**
     * The bed's pod network while it has room (a /24 per node), else a larger one (512 workers need more than a /16);
     * no recorded answer holds it, only the manifests' names (their hash, left out of the recording's keys).
     */
    static String podCidr(int workers) {
        return workers + 1 <= 256 ? "10.244.0.0/16" : "10.240.0.0/13";
    }

    /** The inventory of 1 master + {@code workers} GPU workers, the bed's cluster settings. */
    Path inventory(int workers) {
        StringBuilder y = new StringBuilder();
        Path manifests = repo.resolve("testbed/manifests").toAbsolutePath().normalize();
        y.append("cluster:\n  name: gpu-bed\n  kubernetesVersion: \"1.35\"\n  runtime: docker\n  cni: flannel\n")
            .append("  podCidr: ").append(podCidr(workers)).append("\n  serviceCidr: 10.96.0.0/12\n  siteNetworks: []\n")
            .append("  timeServers: [").append(SimHost.GATEWAY).append("]\n  packages: system\n")
            .append("  cniManifest: ").append(manifests.resolve("kube-flannel-v0.28.9.yml")).append('\n')
            .append("  devicePlugin:\n    version: v0.20.0\n    manifest: ").append(manifests.resolve("nvidia-device-plugin-v0.20.0.yml")).append('\n')
            .append("ssh:\n  user: root\n  port: 22\n  identityFile: ").append(dir.resolve("id_ed25519")).append('\n')
            .append("  knownHosts: ").append(dir.resolve("known_hosts")).append('\n')
            .append("nodes:\n");
        SimHost m = SimHost.theMaster();
        y.append("  - { name: ").append(m.name()).append(", address: ").append(m.ip()).append(", role: master }\n");
        for (int i = 1; i <= workers; i++) {
            SimHost w = SimHost.worker(i);
            y.append("  - { name: ").append(w.name()).append(", address: ").append(w.ip()).append(", role: worker }\n");
        }
        try {
            Files.createDirectories(dir);
            Path file = dir.resolve("inventory-" + workers + ".yaml");
            Files.writeString(file, y.toString(), StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The round of each recorded step: bootstrap, its phase; verify, the read-only phases then the rest together. */
    static ToIntFunction<String> rounds(Mode mode) {
        Map<String, Integer> round = new HashMap<>();
        List<Phase> phases = mode == Mode.VERIFY ? Steps.verifyPhases() : Steps.phases();
        for (int i = 0; i < phases.size(); i++) {
            for (Step s : phases.get(i).steps()) round.putIfAbsent(s.id(), mode == Mode.VERIFY ? (phases.get(i).readOnly() ? 0 : 1) : i);
        }
        round.put("lock", 1);
        return step -> round.getOrDefault(step, 0);
    }

    /**
     * A stand-in for the cluster admin's client key (base64 of a PEM frame with no key in it): the laptop's kubeconfig
     * holds it, and the master answers its SHA-256 where the recording had the real key's.
     */
    static final String CLIENT_KEY_DATA = Base64.getEncoder().encodeToString(
        "-----BEGIN PRIVATE KEY-----\nsimulated cluster: no key\n-----END PRIVATE KEY-----\n".getBytes(StandardCharsets.US_ASCII));

    static String clientKeySha256() {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(CLIENT_KEY_DATA.getBytes(StandardCharsets.US_ASCII)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * This machine's copy of the cluster's admin.conf, as a bootstrap leaves it (.gpuctl/CLUSTER/admin.conf): the
     * master's server, CA and client certificate from the recording, the stand-in key.
     */
    void laptopKubeconfig(Inventory inv, SimHost master) {
        String probe = recording.byRole().getOrDefault("master", Map.of()).values().stream().map(Recording.Answer::stdout)
            .filter(o -> o.contains("client-key-sha256 ")).findFirst()
            .orElseThrow(() -> new IllegalStateException("the recording has no answer of the master's admin.conf credentials"));
        Map<String, String> got = new HashMap<>();
        for (String line : probe.split("\n")) {
            int sp = line.indexOf(' ');
            if (sp > 0) got.put(line.substring(0, sp), line.substring(sp + 1).strip());
        }
        String server = got.get("server").replace("@M_IP@", master.ip());
        String text = Kubeconfig.render(new Kubeconfig.Admin(server, got.get("certificate-authority-data"), "",
            got.get("client-certificate-data"), CLIENT_KEY_DATA), inv.cluster().name());
        try {
            Path file = inv.localKubeconfig();
            Files.createDirectories(file.getParent());
            Files.writeString(file, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Figures run(Mode mode, int workers, int concurrency, LatencyModel latency) {
        Inventory inv = InventoryLoader.load(inventory(workers));
        laptopKubeconfig(inv, SimHost.theMaster());
        SimHost master = SimHost.theMaster();
        List<SimHost> sims = new ArrayList<>();
        for (int i = 1; i <= workers; i++) sims.add(SimHost.worker(i));
        Map<String, SimHost> byName = new HashMap<>();
        byName.put(master.name(), master);
        sims.forEach(s -> byName.put(s.name(), s));
        SimStats stats = new SimStats(rounds(mode));

        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        threads.resetPeakThreadCount();
        List<MemoryPoolMXBean> heap = ManagementFactory.getMemoryPoolMXBeans().stream().filter(p -> p.getType() == MemoryType.HEAP).toList();
        heap.forEach(MemoryPoolMXBean::resetPeakUsage);
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();

        PrintWriter progress = new PrintWriter(OutputStream.nullOutputStream());
        java.util.function.Function<Node, dev.gpuctl.remote.Remote> connect = node -> {
            SimHost h = byName.get(node.name());
            long hs = latency.handshakeNanos();
            stats.spent(0, h.name(), hs);
            SimulatedRemote.sleep(hs);
            return new SimulatedRemote(h, master, sims, recording, latency, stats);
        };
        Runner.Result result;
        int exit;
        if (mode == Mode.VERIFY) {
            result = Workflows.run(VerifyWorkflow.verify(), new Workflows.Target(inv, connect, progress,
                Runner.Options.verify(concurrency, Set.of(), Duration.ofMinutes(2), null), null), Workflows.Guard.NONE);
            var report = result.report();
            exit = !report.unreachable().isEmpty() ? 6 : !report.ok() ? 4 : report.warned() ? 5 : 0;
        } else {
            result = Workflows.run(new BootstrapWorkflow(inv, Set.of(), false, progress), new Workflows.Target(inv, connect, progress,
                new Runner.Options(false, concurrency, Set.of(), Duration.ofMinutes(10), null), "gpuctl bootstrap (simulation)"), Workflows.Guard.NONE);
            exit = result.ok() ? 0 : result.preflightRefused() ? 3 : 1;
        }
        long wall = System.nanoTime() - t0;
        long cpu = os.getProcessCpuTime() - cpu0;
        long peakHeap = heap.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
        int changed = (int) result.outcomes().values().stream().flatMap(m -> m.values().stream())
            .filter(o -> o == Runner.Outcome.CHANGED).count();
        List<String> problems = new ArrayList<>(result.preflightProblems());
        result.failures().forEach(f -> problems.add(f.describe()));
        if (mode == Mode.VERIFY) {
            result.report().hosts().forEach(h -> h.checks().stream().filter(c -> !c.ok() || c.warned())
                .forEach(c -> problems.add(h.name() + " " + c.step() + " " + c.check() + ": " + c.problem() + c.warning())));
        }
        Map<String, Long> answered = new HashMap<>();
        stats.answered.forEach((h, n) -> answered.put(h, n.sum()));
        return new Figures(mode, workers, concurrency, wall, stats.idealNanos(), stats.idealNanos(concurrency), stats.rounds(),
            cpu - stats.simCpuNanos.sum(), stats.simCpuNanos.sum(), threads.getPeakThreadCount(), peakHeap, stats.peakSessions.get(), stats.peakBusyHosts.get(),
            stats.peakConnections.get(), stats.execs.sum(), stats.commands.sum(), stats.nvidiaSmi.sum(), stats.kubectl.sum(),
            answered, stats.unansweredList(), exit, changed, problems, stats.heavyPerHost(answered.keySet()));
    }
}
