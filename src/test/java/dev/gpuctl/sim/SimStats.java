package dev.gpuctl.sim;

import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToIntFunction;

/**
 * What the simulated hosts saw in one run, shared by all of them: commands answered per host, those nothing in the
 * recording answered, the hosts' latency per round and host (for the ideal), sessions and connections open at once,
 * and the CPU the simulation itself spent making answers (taken off gpuctl's).
 */
final class SimStats {
    /** The round a recorded step's command belongs to (bootstrap: its phase; verify: read-only phases, then the rest). */
    final ToIntFunction<String> roundOfStep;
    final Map<String, LongAdder> answered = new ConcurrentHashMap<>();
    final Queue<String> unanswered = new ConcurrentLinkedQueue<>();
    final LongAdder execs = new LongAdder();
    final LongAdder commands = new LongAdder();
    final LongAdder nvidiaSmi = new LongAdder();
    final LongAdder kubectl = new LongAdder();
    final LongAdder uploads = new LongAdder();
    /** Per host, how many times its commands started each heavy tool. */
    final Map<String, Map<LatencyModel.Tool, LongAdder>> heavy = new ConcurrentHashMap<>();
    final LongAdder simCpuNanos = new LongAdder();
    final Map<Integer, Map<String, LongAdder>> latency = new ConcurrentHashMap<>();
    final AtomicInteger sessions = new AtomicInteger();
    final AtomicInteger peakSessions = new AtomicInteger();
    /** Sessions held open by {@code Remote.hold} (the bootstrap lock). */
    final AtomicInteger held = new AtomicInteger();
    final AtomicInteger connections = new AtomicInteger();
    final AtomicInteger peakConnections = new AtomicInteger();

    SimStats(ToIntFunction<String> roundOfStep) {
        this.roundOfStep = roundOfStep;
    }

    void spent(int round, String host, long nanos) {
        latency.computeIfAbsent(round, k -> new ConcurrentHashMap<>()).computeIfAbsent(host, k -> new LongAdder()).add(nanos);
    }

    /** Sessions open per host, and how many hosts had one open at once (what --concurrency bounds). */
    final Map<String, AtomicInteger> hostSessions = new ConcurrentHashMap<>();
    final AtomicInteger busyHosts = new AtomicInteger();
    final AtomicInteger peakBusyHosts = new AtomicInteger();

    void sessionOpened(String host) {
        peakSessions.accumulateAndGet(sessions.incrementAndGet(), Math::max);
        if (hostSessions.computeIfAbsent(host, h -> new AtomicInteger()).incrementAndGet() == 1) {
            peakBusyHosts.accumulateAndGet(busyHosts.incrementAndGet(), Math::max);
        }
    }

    void sessionClosed(String host) {
        sessions.decrementAndGet();
        if (hostSessions.get(host).decrementAndGet() == 0) busyHosts.decrementAndGet();
    }

    void countHeavy(String host, String command) {
        for (LatencyModel.Tool t : LatencyModel.Tool.values()) {
            int n = t.runs(command);
            if (n > 0) heavy.computeIfAbsent(host, h -> new ConcurrentHashMap<>()).computeIfAbsent(t, k -> new LongAdder()).add(n);
        }
    }

    /** Host → tool → runs, every tool present (0 when not run). */
    Map<String, Map<LatencyModel.Tool, Long>> heavyPerHost(java.util.Collection<String> hosts) {
        Map<String, Map<LatencyModel.Tool, Long>> out = new java.util.TreeMap<>();
        for (String h : hosts) {
            Map<LatencyModel.Tool, Long> m = new java.util.EnumMap<>(LatencyModel.Tool.class);
            for (LatencyModel.Tool t : LatencyModel.Tool.values()) {
                LongAdder a = heavy.getOrDefault(h, Map.of()).get(t);
                m.put(t, a == null ? 0L : a.sum());
            }
            out.put(h, m);
        }
        return out;
    }

    void connected() { peakConnections.accumulateAndGet(connections.incrementAndGet(), Math::max); }

    void disconnected() { connections.decrementAndGet(); }

    /** The ideal wall time: per round the slowest host's time in commands, rounds one after another (ns). */
    long idealNanos() {
        return latency.values().stream().mapToLong(hosts -> hosts.values().stream().mapToLong(LongAdder::sum).max().orElse(0)).sum();
    }

    /**
     * The ideal with at most {@code concurrency} hosts at once: per round the slowest host, or all hosts' time shared
     * out over the places, whichever is longer (ns).
     */
    long idealNanos(int concurrency) {
        long sum = 0;
        for (Map<String, LongAdder> hosts : latency.values()) {
            long max = hosts.values().stream().mapToLong(LongAdder::sum).max().orElse(0);
            long all = hosts.values().stream().mapToLong(LongAdder::sum).sum();
            sum += Math.max(max, all / Math.max(1, concurrency));
        }
        return sum;
    }

    int rounds() { return latency.size(); }

    List<String> unansweredList() { return List.copyOf(unanswered); }
}
