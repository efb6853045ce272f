package dev.gpuctl.sim;

import dev.gpuctl.kube.Kubeadm;
import dev.gpuctl.text.Secrets;
import dev.gpuctl.text.Terminal;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Held;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A host in the process: answers every command gpuctl sends from a {@link Recording} of a real bed cluster, with this
 * host's identity ({@link SimHost}) put in, after the host's time by the {@link LatencyModel}. A probe batch (the
 * script that {@code ProbeBatch} makes) is taken apart and each of its commands answered in its frame, as the shell
 * would. A command the recording does not hold is answered with exit 127 and counted ({@link SimStats#unanswered}).
 */
final class SimulatedRemote implements Remote {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /** A manifest's name on the master carries a hash of its content (the pod CIDR patched in): not part of the key. */
    private static final Pattern MANIFEST = Pattern.compile("(/etc/kubernetes/gpuctl/[a-z0-9-]+?)-[0-9a-f]{8}\\.yaml");
    /** verify gives a command what is left of its wait ({@code timeout N}): not part of the key. */
    private static final Pattern TIMEOUT = Pattern.compile("\\btimeout [0-9]+ ");
    private static final Pattern BATCH_HEAD = Pattern.compile("\\A__gpuctl_d='([A-Za-z0-9-]*)''([A-Za-z0-9-]*)'\n");

    private static final String KEY_SHA256 = Simulation.clientKeySha256();

    private final SimHost self;
    private final SimHost master;
    private final List<SimHost> workers;
    private final Recording recording;
    private final LatencyModel latency;
    private final SimStats stats;
    private final Map<String, Recorded> answers = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** An answer with this host's identity put in, and its round; {@code now}: its stdout is the clock. */
    private record Recorded(int exit, String stdout, String stderr, int round, boolean now) {}

    SimulatedRemote(SimHost self, SimHost master, List<SimHost> workers, Recording recording, LatencyModel latency, SimStats stats) {
        this.self = self;
        this.master = master;
        this.workers = workers;
        this.recording = recording;
        this.latency = latency;
        this.stats = stats;
        stats.connected();
    }

    @Override public String name() { return self.name(); }

    @Override public ExecResult exec(String command, Duration timeout) {
        if (closed) throw new RemoteException(RemoteException.Kind.CONNECTION_LOST, self.name(), self.name() + ": the connection is closed");
        stats.sessionOpened(self.name());
        try {
            long cpu0 = THREADS.getCurrentThreadCpuTime();
            stats.execs.increment();
            Optional<Batch> batch = Batch.parse(command);
            List<String> asked = batch.map(Batch::commands).orElse(List.of(command));
            List<Recorded> got = new ArrayList<>();
            for (String c : asked) got.add(answer(c));
            ExecResult result;
            if (batch.isPresent()) {
                String d = batch.get().delimiter();
                StringBuilder out = new StringBuilder();
                StringBuilder err = new StringBuilder();
                for (int i = 0; i < got.size(); i++) {
                    Recorded r = got.get(i);
                    out.append(d).append(" b ").append(i).append('\n').append(stdout(r)).append('\n').append(d).append(" e ").append(i)
                        .append(' ').append(r.exit()).append('\n');
                    err.append(d).append(" b ").append(i).append('\n').append(r.stderr()).append('\n').append(d).append(" e ").append(i).append('\n');
                }
                result = new ExecResult(0, out.toString(), err.toString());
            } else {
                Recorded r = got.get(0);
                result = new ExecResult(r.exit(), stdout(r), r.stderr());
            }
            long nanos = latency.nanos(asked);
            stats.spent(got.isEmpty() ? 0 : got.get(0).round(), self.name(), nanos);
            stats.simCpuNanos.add(THREADS.getCurrentThreadCpuTime() - cpu0);
            sleep(nanos);
            return result;
        } finally {
            stats.sessionClosed(self.name());
        }
    }

    private static String stdout(Recorded r) {
        if (!r.now()) return r.stdout();
        long ms = System.currentTimeMillis();
        return r.stdout().replace("@NOW@", ms / 1000 + "." + String.format("%03d000000", ms % 1000));
    }

    /** One command's answer (made once per command and host, then kept). */
    private Recorded answer(String command) {
        String key = normalize(command);
        stats.commands.increment();
        stats.nvidiaSmi.add(LatencyModel.nvidiaSmiRuns(command));
        stats.kubectl.add(LatencyModel.kubectlRuns(command));
        stats.countHeavy(self.name(), command);
        Recorded r = answers.computeIfAbsent(key, k -> recording.answer(self.role(), k)
            .map(a -> new Recorded(a.exit(), manifestNames(command, fill(a.stdout())), fill(a.stderr()), stats.roundOfStep.applyAsInt(a.step()), a.stdout().contains("@NOW@")))
            .orElse(null));
        if (r == null) {
            stats.unanswered.add(self.name() + ": " + key);
            return new Recorded(127, "", "gpuctl-sim: no recorded answer for this command\n", 0, false);
        }
        stats.answered.computeIfAbsent(self.name(), h -> new LongAdder()).increment();
        return r;
    }

    /**
     * An answer that names gpuctl's manifests on the master (the master's diff of them prints each path), with the
     * names as this command asked them: the recording holds {@code NAME-@HASH@.yaml}.
     */
    static String manifestNames(String command, String text) {
        if (!text.contains("-@HASH@.yaml")) return text;
        Matcher m = MANIFEST.matcher(command);
        while (m.find()) text = text.replace(m.group(1) + "-@HASH@.yaml", m.group());
        return text;
    }

    /** {@code command} as the recording holds it: this host's identity as tokens, masked as gpuctl's logs mask it. */
    String normalize(String command) {
        String c = TIMEOUT.matcher(MANIFEST.matcher(command).replaceAll("$1-@HASH@.yaml")).replaceAll("timeout @S@ ");
        for (int i = 0; i < self.gpus().size(); i++) c = c.replace(self.gpus().get(i), "@GPU" + i + "@");
        c = c.replace(self.machineId(), "@MID@").replace(self.productUuid(), "@PUUID@").replace(SimHost.SUBNET, "@SUBNET@");
        c = ip(master.ip()).matcher(c).replaceAll("@M_IP@");
        if (!self.isMaster()) c = ip(self.ip()).matcher(c).replaceAll("@W_IP@");
        c = ip(SimHost.GATEWAY).matcher(c).replaceAll("@GW@");
        c = word(master.name()).matcher(c).replaceAll("@M_NAME@");
        if (!self.isMaster()) c = word(self.name()).matcher(c).replaceAll("@W_NAME@");
        return Terminal.escape(Secrets.redact(Secrets.redact(Kubeadm.redactTokens(c))));
    }

    /** A recorded output with this host's identity; on the master, each worker's line once for every worker. */
    private String fill(String text) {
        if (!text.contains("@EACH_WORKER@")) return identity(text, self);
        StringBuilder sb = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            if (line.startsWith("@EACH_WORKER@")) {
                String template = line.substring("@EACH_WORKER@".length());
                for (int i = 0; i < workers.size(); i++) {
                    if (sb.length() > 0) sb.append('\n');
                    sb.append(identity(template, workers.get(i)));
                }
            } else {
                if (sb.length() > 0) sb.append('\n');
                sb.append(identity(line, self));
            }
        }
        return sb.toString();
    }

    private String identity(String text, SimHost worker) {
        if (text.indexOf('@') < 0) return text;
        String t = text.replace("@M_NAME@", master.name()).replace("@M_IP@", master.ip())
            .replace("@SUBNET@", SimHost.SUBNET).replace("@GW@", SimHost.GATEWAY)
            .replace("@MID@", self.machineId()).replace("@CLIENT_KEY_SHA256@", KEY_SHA256).replace("@PUUID@", self.productUuid());
        if (!worker.isMaster()) {
            t = t.replace("@W_NAME@", worker.name()).replace("@W_IP@", worker.ip());
            for (int i = 0; i < worker.gpus().size(); i++) t = t.replace("@GPU" + i + "@", worker.gpus().get(i));
        }
        return t;
    }

    private static final Map<String, Pattern> PATTERNS = new ConcurrentHashMap<>();

    private static Pattern ip(String address) {
        return PATTERNS.computeIfAbsent("ip " + address, k -> Pattern.compile(Pattern.quote(address) + "(?![0-9])"));
    }

    /** A host name as a word of its own, as bench/sim-record.py finds it. */
    private static Pattern word(String name) {
        return PATTERNS.computeIfAbsent("word " + name, k -> Pattern.compile("(?<![A-Za-z0-9+/=])" + Pattern.quote(name) + "(?![A-Za-z0-9+/=])"));
    }

    /**
     * The bootstrap lock: held for the whole run, a session of its own that waits on its stdin (counted as held, not
     * as a host at work).
     */
    @Override public Held hold(String command, Duration timeout) {
        Optional<Recording.Answer> a = recording.hold(self.role(), command);
        long nanos = latency.nanos(List.of(command));
        stats.spent(1, self.name(), nanos);
        sleep(nanos);
        if (a.isEmpty()) {
            stats.unanswered.add(self.name() + ": hold " + command);
            return Held.ended("gpuctl-sim: no recorded answer", 127);
        }
        stats.answered.computeIfAbsent(self.name(), h -> new LongAdder()).increment();
        stats.held.incrementAndGet();
        return Held.running(a.get().stdout().strip(), stats.held::decrementAndGet);
    }

    @Override public void upload(byte[] content, String path, String mode, String owner) {
        stats.uploads.increment();
        stats.unanswered.add(self.name() + ": upload " + path);
    }

    @Override public void upload(Path from, String path, String mode, String owner) {
        stats.uploads.increment();
        stats.unanswered.add(self.name() + ": upload " + path);
    }

    @Override public byte[] download(String path) {
        stats.unanswered.add(self.name() + ": download " + path);
        throw new RemoteException(RemoteException.Kind.IO, self.name(), self.name() + ": " + path + " is not in the recording");
    }

    @Override public void download(String path, Path to) {
        download(path);
    }

    @Override public void close() {
        if (!closed) {
            closed = true;
            stats.disconnected();
        }
    }

    static void sleep(long nanos) {
        if (nanos <= 0) return;
        try {
            Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RemoteException(RemoteException.Kind.INTERRUPTED, "sim", "interrupted");
        }
    }

    /** A probe batch's delimiter and commands, taken from its script; empty for any other command. */
    record Batch(String delimiter, List<String> commands) {
        static Optional<Batch> parse(String script) {
            Matcher m = BATCH_HEAD.matcher(script);
            if (!m.find()) return Optional.empty();
            List<String> commands = new ArrayList<>();
            String open = "(\nunset __gpuctl_d __gpuctl_x\n";
            int at = m.end();
            for (int i = 0; ; i++) {
                int b = script.indexOf(open, at);
                if (b < 0) break;
                int from = b + open.length();
                int end = script.indexOf("\n) </dev/null\n__gpuctl_x=$?; printf '\\n%s e " + i + " ", from);
                if (end < 0) return Optional.empty();
                commands.add(script.substring(from, end));
                at = end;
            }
            return Optional.of(new Batch(m.group(1) + m.group(2), commands));
        }
    }
}
