package dev.gpuctl.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Says on the progress stream what connecting waits for: "connecting to 9 hosts…" when the first connection starts (of
 * several), then
 * every {@link #EVERY} the hosts whose connection has taken that long and is still not made or failed, so a host that
 * accepts TCP and never speaks SSH is named while the run waits for it, not only when its timeout ends.
 */
final class ConnectProgress implements AutoCloseable {
    static final Duration EVERY = Duration.ofSeconds(3);
    static final int NAMED = 8;

    private final Consumer<String> out;
    private final int hosts;
    private final Function<Runnable, AutoCloseable> every;
    private final Map<String, Long> pending = new LinkedHashMap<>();
    private boolean announced;
    private boolean closed;
    private AutoCloseable timer;

    /**
     * @param hosts how many hosts this run connects to (for the first line)
     * @param every starts running a task every {@link #EVERY} (the engine's timer); closing what it returns stops it
     */
    ConnectProgress(Consumer<String> out, int hosts, Function<Runnable, AutoCloseable> every) {
        this.out = out;
        this.hosts = hosts;
        this.every = every;
    }

    synchronized void started(String host) {
        if (closed) return;
        if (!announced) {
            announced = true;
            if (hosts > 1) out.accept("connecting to " + hosts + " hosts…");
            timer = every.apply(this::tick);
        }
        pending.put(host, System.nanoTime());
    }

    synchronized void finished(String host) {
        pending.remove(host);
    }

    private synchronized void tick() {
        if (closed) return;
        pending(pending, System.nanoTime(), EVERY).ifPresent(out);
    }

    /**
     * The line naming the hosts pending at least {@code after} at {@code now} (System.nanoTime), oldest first with how
     * long each has taken: "still connecting: h1 (6s), h2 (3s)"; at most {@link #NAMED} named, then "and N more".
     */
    static java.util.Optional<String> pending(Map<String, Long> startedAt, long now, Duration after) {
        List<Map.Entry<String, Long>> slow = new ArrayList<>();
        for (Map.Entry<String, Long> e : startedAt.entrySet()) {
            if (now - e.getValue() >= after.toNanos()) slow.add(e);
        }
        if (slow.isEmpty()) return java.util.Optional.empty();
        slow.sort(Map.Entry.comparingByValue());
        List<String> named = new ArrayList<>();
        for (Map.Entry<String, Long> e : slow.subList(0, Math.min(NAMED, slow.size()))) {
            named.add(e.getKey() + " (" + TimeUnit.NANOSECONDS.toSeconds(now - e.getValue()) + "s)");
        }
        String more = slow.size() > NAMED ? " and " + (slow.size() - NAMED) + " more" : "";
        return java.util.Optional.of("still connecting: " + String.join(", ", named) + more);
    }

    @Override public synchronized void close() {
        closed = true;
        if (timer != null) {
            try {
                timer.close();
            } catch (Exception ignored) {
                // a timer that will not stop only prints a line more
            }
        }
    }
}
