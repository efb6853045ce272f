package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.step.Facts;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What every run of the engine has, written once for bootstrap, dry-run and verify: the run's log directory and one
 * log per host in it, one connection per host (made on first use, closed at the end), the pool that works on at
 * most {@code concurrency} hosts at once, the facts the run learns, and the stop request (Ctrl-C) that every
 * connection obeys. A connection that died (the host rebooted) is made again on the host's next use, bounded and
 * announced ({@link #RECONNECT}), through the same connector: the same host-key check, the same login.
 */
final class HostRun implements AutoCloseable {
    private final Function<Node, Remote> connector;
    private final Facts facts;
    private final Path logDir;
    private final ExecutorService pool;
    /**
     * Each host's connection, made on first use by the thread that asks first; a host's handshake never holds up another
     * host's (a connect inside ConcurrentHashMap.computeIfAbsent would lock the map's bin, and the hosts sharing it
     * would connect one after another: at 1+512 the last hosts started seconds late).
     */
    private final Map<String, Connection> remotes = new ConcurrentHashMap<>();

    /** A host's connection once made (null before, and after a failed try: the next use tries again). */
    private static final class Connection {
        volatile Remote remote;
    }
    private final Map<String, HostLog> logs = new ConcurrentHashMap<>();
    private final StoppableRemote.Stop stop = new StoppableRemote.Stop();
    private final ConnectProgress connecting;
    private final Consumer<String> progress;
    /** How long a host whose connection died is tried again, and the pause between tries. */
    private final Duration reconnectFor;
    private final Duration reconnectPause;
    /** Hosts whose connection was tried (made, or failed), for {@link #awaitConnections}. */
    private final Set<String> tried = new HashSet<>();

    /**
     * @param logSuffix the run directory's suffix under .gpuctl/logs ("" for bootstrap, "verify" for verify)
     */
    HostRun(Inventory inv, Function<Node, Remote> connector, Facts facts, String logSuffix, int concurrency) {
        this(inv, connector, facts, logSuffix, concurrency, line -> { }, inv.nodes().size());
    }

    /**
     * @param progress where "connecting to N hosts…" and the hosts still connecting after a few seconds are said
     * @param hosts    how many hosts the run connects to
     */
    HostRun(Inventory inv, Function<Node, Remote> connector, Facts facts, String logSuffix, int concurrency,
            Consumer<String> progress, int hosts) {
        this(inv, connector, facts, logSuffix, concurrency, progress, hosts, RECONNECT, RECONNECT_PAUSE);
    }

    /**
     * How long a host whose connection died is tried again: a host back from a reboot (its kubelet Ready, as a
     * reboot's next step waits for) has its sshd up, so two minutes only cover a slow network start.
     */
    static final Duration RECONNECT = Duration.ofMinutes(2);
    static final Duration RECONNECT_PAUSE = Duration.ofSeconds(3);

    /** @param reconnectFor how long a dead connection is tried again, {@code reconnectPause} apart */
    HostRun(Inventory inv, Function<Node, Remote> connector, Facts facts, String logSuffix, int concurrency,
            Consumer<String> progress, int hosts, Duration reconnectFor, Duration reconnectPause) {
        this.progress = progress;
        this.reconnectFor = reconnectFor;
        this.reconnectPause = reconnectPause;
        this.connecting = new ConnectProgress(progress, hosts, task -> {
            java.util.concurrent.ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "connect-progress");
                t.setDaemon(true);
                return t;
            });
            long ms = ConnectProgress.EVERY.toMillis();
            timer.scheduleAtFixedRate(task, ms, ms, java.util.concurrent.TimeUnit.MILLISECONDS);
            return timer::shutdownNow;
        });
        this.connector = connector;
        this.facts = facts;
        this.logDir = StateDir.newRunDir(inv.stateDir(), logSuffix);
        this.pool = Executors.newFixedThreadPool(Math.max(1, concurrency));
    }

    Path logDir() { return logDir; }

    HostLog log(Node node) {
        return logs.computeIfAbsent(node.name(), h -> new HostLog(logDir, h, facts));
    }

    private final Map<String, HostReadings> readings = new ConcurrentHashMap<>();

    /** The host's reusable answers and op generation for this session, shared by all its step runners. */
    HostReadings readings(Node node) {
        return readings.computeIfAbsent(node.name(), h -> new HostReadings());
    }

    /**
     * The host's connection, made on first use, and made again when it died ({@link #reconnect}); it starts nothing
     * once a stop was requested.
     *
     * @throws RemoteException when the host cannot be reached, or INTERRUPTED after a stop
     */
    Remote remote(Node node) {
        stop.check(node.name(), "connect");
        Connection c = remotes.computeIfAbsent(node.name(), h -> new Connection());
        Remote r = c.remote;
        if (r == null || !r.connected()) {
            synchronized (c) {
                r = c.remote;
                if (r == null) r = c.remote = connect(node);
                else if (!r.connected()) r = c.remote = reconnect(node, r);
            }
        }
        return new StoppableRemote(r, stop);
    }

    /**
     * A new connection in place of {@code dead} (the host rebooted): said on the progress stream and in the host's log,
     * tried until {@link #reconnectFor} has passed while the host cannot be reached yet. A refused host key or login is
     * never tried again: the host that comes back must be the same host.
     */
    private Remote reconnect(Node node, Remote dead) {
        dead.close();
        String h = node.name();
        String why = "the connection to " + h + " was lost (the host rebooted or the link broke)";
        progress.accept(h + ": " + why + "; connecting again, up to " + reconnectFor.toSeconds() + "s, its host key checked as before");
        log(node).line(why + "; connecting again, up to " + reconnectFor.toSeconds() + "s");
        long end = System.nanoTime() + reconnectFor.toNanos();
        while (true) {
            stop.check(h, "connect");
            try {
                Remote r = connector.apply(node);
                log(node).line("connected again to " + h + " (" + node.address() + ")");
                progress.accept(h + ": connected again");
                return r;
            } catch (RemoteException e) {
                boolean again = switch (e.kind()) {
                    case UNREACHABLE, CONNECTION_LOST, TIMEOUT, IO -> System.nanoTime() + reconnectPause.toNanos() < end;
                    default -> false;
                };
                if (!again) {
                    log(node).line("connect again to " + h + " (" + node.address() + ") failed: " + e.getMessage());
                    throw e;
                }
            }
            try {
                Thread.sleep(reconnectPause.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RemoteException(RemoteException.Kind.INTERRUPTED, h, h + ": stopped while connecting again (interrupted)", e);
            }
        }
    }

    private Remote connect(Node node) {
        String h = node.name();
        connecting.started(h);
        try {
            return connector.apply(node);
        } catch (RemoteException e) {
            // the host's log holds why it has nothing else: every failure's "log:" line points here
            log(node).line("connect to " + node.name() + " (" + node.address() + ") failed: " + e.getMessage());
            throw e;
        } finally {
            connecting.finished(h);
            tried(h);
        }
    }

    private synchronized void tried(String host) {
        tried.add(host);
        notifyAll();
    }

    /**
     * Waits until the connection to each of {@code hosts} was tried (made or failed), at most {@code max}: work that
     * can wait (verify making its later probes) then does not take the CPU from the SSH handshakes that the first
     * commands wait for.
     */
    synchronized void awaitConnections(Collection<String> hosts, Duration max) {
        long end = System.nanoTime() + max.toNanos();
        while (!tried.containsAll(hosts) && !stop.requested) {
            long left = (end - System.nanoTime()) / 1_000_000;
            if (left <= 0) return;
            try {
                wait(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Runs {@code work} for every host, at most {@code concurrency} at once, and returns when all are done. */
    void eachHost(List<Node> nodes, Consumer<Node> work) {
        List<Future<?>> running = new ArrayList<>();
        for (Node node : nodes) running.add(pool.submit(() -> work.accept(node)));
        for (Future<?> f : running) {
            try {
                f.get();
            } catch (ExecutionException e) {
                if (e.getCause() instanceof RuntimeException r) throw r;
                if (e.getCause() instanceof Error err) throw err;
                throw new IllegalStateException(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the hosts", e);
            }
        }
    }

    /**
     * Runs {@code work} beside the pool, on a thread of its own: what must not wait for a place in the pool (a host's
     * second batch of probes, asked on its connection alongside the first; probes made while others are asked).
     */
    <T> CompletableFuture<T> beside(String name, Supplier<T> work) {
        return CompletableFuture.supplyAsync(work, runnable -> {
            Thread t = new Thread(runnable, name);
            t.setDaemon(true);
            t.start();
        });
    }

    /** The value of {@code f}, the exception it ended with thrown as it was thrown. */
    static <T> T joined(CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            if (e.getCause() instanceof Error err) throw err;
            throw e;
        }
    }

    /** Asks the run to stop: no command starts any more; the ones running finish. */
    void requestStop() { stop.requested = true; }

    boolean stopRequested() { return stop.requested; }

    /** Cuts the running commands off too: closes every connection. */
    void abort() {
        stop.requested = true;
        closeConnections();
    }

    private void closeConnections() {
        remotes.values().forEach(c -> {
            Remote r = c.remote;
            if (r == null) return;
            try { r.close(); } catch (RuntimeException ignored) { /* closing a dead connection */ }
        });
    }

    @Override public void close() {
        connecting.close();
        pool.shutdownNow();
        closeConnections();
        logs.values().forEach(HostLog::close);
    }
}
