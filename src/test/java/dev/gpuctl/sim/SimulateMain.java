package dev.gpuctl.sim;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.Remotes;
import dev.gpuctl.remote.SshOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The scale simulation's entry point for {@code bench/run --simulate N} (run from the test classes):
 *
 * <pre>
 *   SimulateMain --workers N --mode rerun|verify [--concurrency C] [--handshake-ms MS]
 *   SimulateMain --measure-handshake INVENTORY [--times K]
 * </pre>
 *
 * The first runs gpuctl's engine once against 1 master + N simulated workers and prints the figures, a last line
 * {@code sim-json {...}} for bench/run; the second opens gpuctl's SSH connection (sshj: key exchange, host key check,
 * login) to the master of a real inventory (a test bed) K times and prints the median in ms. Exit 0 when the run
 * ended with exit 0 and every command was answered, 1 otherwise, 2 for a wrong argument.
 */
public final class SimulateMain {
    private SimulateMain() {}

    public static void main(String[] args) throws IOException {
        System.exit(run(args));
    }

    static int run(String[] args) throws IOException {
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) return usage("expected --NAME VALUE pairs, got '" + args[i] + "'");
            a.put(args[i].substring(2), args[++i]);
        }
        if (a.containsKey("measure-handshake")) return measureHandshake(Path.of(a.get("measure-handshake")), intArg(a, "times", 5));
        int workers = intArg(a, "workers", 64);
        int concurrency = intArg(a, "concurrency", 16);
        int handshakeMs = intArg(a, "handshake-ms", 100);
        if (workers < 1 || concurrency < 1 || handshakeMs < 0) return usage("--workers and --concurrency must be at least 1, --handshake-ms at least 0");
        Simulation.Mode mode;
        switch (a.getOrDefault("mode", "rerun")) {
            case "rerun" -> mode = Simulation.Mode.RERUN;
            case "verify" -> mode = Simulation.Mode.VERIFY;
            default -> { return usage("--mode is rerun or verify"); }
        }
        Path dir = Files.createTempDirectory("gpuctl-sim");
        Simulation.Figures f = new Simulation(dir, Path.of(a.getOrDefault("repo", ".")), Recording.load())
            .run(mode, workers, concurrency, LatencyModel.standard(Duration.ofMillis(handshakeMs)));
        long rssKb = peakRssKb();
        int hosts = workers + 1;
        System.out.printf(Locale.ROOT, "%s 1+%d, concurrency %d: wall %.2f s, ideal %.2f s (wall/ideal %.2f; at concurrency %d: %.2f s, %.2f),"
                + " gpuctl CPU %.2f s (%.1f ms/host), simulation's own CPU %.2f s, peak RSS %d MiB, peak heap %d MiB, peak threads %d,"
                + " sessions at once %d, hosts busy at once %d, connections %d; %d execs, %d commands (nvidia-smi %d, kubectl %d);"
                + " exit %d, %d steps changed, %d commands unanswered%n",
            mode == Simulation.Mode.RERUN ? "no-op re-run" : "verify", workers, concurrency, f.wallNanos() / 1e9, f.idealNanos() / 1e9,
            f.wallOverIdeal(), concurrency, f.idealAtConcurrencyNanos() / 1e9, (double) f.wallNanos() / Math.max(1, f.idealAtConcurrencyNanos()),
            f.cpuNanos() / 1e9, f.cpuNanos() / 1e6 / hosts, f.simCpuNanos() / 1e9, rssKb / 1024, f.peakHeapBytes() >> 20, f.peakThreads(),
            f.peakSessions(), f.peakBusyHosts(), f.peakConnections(), f.execs(), f.commands(), f.nvidiaSmi(), f.kubectl(),
            f.exit(), f.changed(), f.unanswered().size());
        System.out.println("  heavy tool runs, most on one host: master " + f.heavyText(true) + "; worker " + f.heavyText(false));
        for (String p : first(f.problems())) System.out.println("  problem: " + p);
        for (String u : first(f.unanswered())) System.out.println("  unanswered: " + u);
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("mode", mode == Simulation.Mode.RERUN ? "rerun" : "verify");
        json.put("workers", workers);
        json.put("concurrency", concurrency);
        json.put("handshake_ms", handshakeMs);
        json.put("wall_s", f.wallNanos() / 1e9);
        json.put("ideal_s", f.idealNanos() / 1e9);
        json.put("ideal_at_concurrency_s", f.idealAtConcurrencyNanos() / 1e9);
        json.put("rounds", f.rounds());
        json.put("cpu_s", f.cpuNanos() / 1e9);
        json.put("cpu_ms_per_host", f.cpuNanos() / 1e6 / hosts);
        json.put("sim_cpu_s", f.simCpuNanos() / 1e9);
        json.put("peak_rss_kb", rssKb);
        json.put("peak_heap_mb", f.peakHeapBytes() >> 20);
        json.put("peak_threads", f.peakThreads());
        json.put("peak_sessions", f.peakSessions());
        json.put("peak_busy_hosts", f.peakBusyHosts());
        json.put("connections", f.peakConnections());
        json.put("execs", f.execs());
        json.put("commands", f.commands());
        json.put("nvidia_smi", f.nvidiaSmi());
        json.put("kubectl", f.kubectl());
        for (LatencyModel.Tool t : LatencyModel.Tool.values()) {
            json.put("master_" + t.name().toLowerCase(Locale.ROOT), f.mostRuns(t, true));
            json.put("worker_max_" + t.name().toLowerCase(Locale.ROOT), f.mostRuns(t, false));
        }
        json.put("exit", f.exit());
        json.put("changed", f.changed());
        json.put("unanswered", f.unanswered().size());
        json.put("hosts_answered", f.answeredPerHost().size());
        System.out.println("sim-json " + new ObjectMapper().writeValueAsString(json));
        return f.exit() == 0 && f.unanswered().isEmpty() && f.answeredPerHost().size() == hosts ? 0 : 1;
    }

    private static List<String> first(List<String> all) {
        return all.size() <= 5 ? all : new ArrayList<>(all.subList(0, 5));
    }

    /** VmHWM of this process (peak resident set), in KiB; 0 where /proc is not there. */
    static long peakRssKb() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }

    /** The median time of gpuctl's connect (sshj) to the inventory's master, over {@code times} connections. */
    static int measureHandshake(Path inventory, int times) {
        Inventory inv = InventoryLoader.load(inventory);
        SshOptions ssh = SshOptions.defaults(false);
        List<Long> ms = new ArrayList<>();
        for (int i = 0; i < times; i++) {
            long t0 = System.nanoTime();
            try (Remote r = Remotes.open(inv.master(), ssh)) {
                r.exec("true", Duration.ofSeconds(30));
                ms.add((System.nanoTime() - t0) / 1_000_000);
            }
        }
        List<Long> sorted = ms.stream().sorted().toList();
        System.out.println("connect + first command to " + inv.master().name() + ", ms: " + ms + "; median " + sorted.get(sorted.size() / 2));
        System.out.println("handshake_ms " + sorted.get(sorted.size() / 2));
        return 0;
    }

    private static int intArg(Map<String, String> a, String name, int def) {
        try {
            return a.containsKey(name) ? Integer.parseInt(a.get(name)) : def;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be a whole number, got '" + a.get(name) + "'");
        }
    }

    private static int usage(String why) {
        System.err.println("SimulateMain: " + why);
        System.err.println("usage: SimulateMain --workers N --mode rerun|verify [--concurrency C] [--handshake-ms MS] [--repo DIR]");
        System.err.println("       SimulateMain --measure-handshake INVENTORY [--times K]");
        return 2;
    }
}
