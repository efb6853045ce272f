package dev.gpuctl.workload;

import dev.gpuctl.hostconf.DeviceCheckpoint;
import dev.gpuctl.hostconf.GpuSamples;
import dev.gpuctl.hostconf.HostConfException;
import dev.gpuctl.hostconf.KubeFields;
import dev.gpuctl.hostconf.NvidiaSmi;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.hostconf.Kube;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * Asks the cluster who holds which GPU: kubectl on the master (its admin.conf, so this machine needs no
 * kubeconfig) for nodes and pods, and nvidia-smi on every GPU node of the inventory, in parallel. Read-only.
 */
public final class GpuSurvey {
    static final Duration TIMEOUT = Duration.ofMinutes(1);
    static final String NEXT = "Is the cluster up? Check it with: gpuctl verify";

    private GpuSurvey() {}

    /**
     * The nodes' and pods' JSON from the master: the fields the report reads ({@link KubeFields}), in the shape of
     * {@code kubectl get -o json}'s list; never whole pods, whose environment values are nobody's business here.
     */
    public record ClusterState(String nodesJson, String podsJson) {}

    /** kubectl ARGS on the master; its stdout, or a {@link WorkloadException} naming the host, command and stderr. */
    public static String kubectl(Remote master, String args, String next) {
        String command = Kube.kubectl(args);
        ExecResult r = master.exec(command, TIMEOUT);
        if (!r.ok()) throw WorkloadException.failed(master.name(), command, r, next);
        return r.stdout();
    }

    public static ClusterState clusterState(Remote master) {
        return new ClusterState(fields(master, "get nodes", KubeFields.NODES, NEXT), fields(master, "get pods -A", KubeFields.GPU_PODS, NEXT));
    }

    /** kubectl ARGS on the master asking for the query's fields; the answer as {@code -o json}-shaped list text. */
    public static String fields(Remote master, String args, KubeFields.Query query, String next) {
        String out = kubectl(master, args + " " + query.outputFlag(), next);
        try {
            return query.json(out);
        } catch (IllegalArgumentException e) {
            throw new WorkloadException(master.name() + ": kubectl " + args + ": " + e.getMessage() + ". " + next);
        }
    }

    /**
     * The report: the master must answer (a {@link RemoteException} or {@link WorkloadException} otherwise); a GPU
     * node that cannot be reached or whose nvidia-smi fails is a line of the report, not an exception.
     */
    public static GpuUsage.Report survey(Inventory inv, Function<Node, Remote> connector) {
        return survey(inv, connector, Duration.ZERO).usage();
    }

    /** Who holds which GPU and, when a window was sampled, how each GPU was used meanwhile. */
    public record Survey(GpuUsage.Report usage, Optional<GpuActivity.Report> activity) {}

    /** What one GPU node answered: nvidia-smi's list, and its GPUs' use over the window (absent: not sampled). */
    private record Answer(GpuUsage.Smi smi, Optional<Sampled> sampled) {}

    /** The kubelet's device checkpoint and the window's samples, as the node printed them; or why not. */
    record Sampled(String checkpoint, String samples, String problem) {}

    /**
     * {@link #survey(Inventory, Function)}, and with a positive {@code window} every GPU node's GPUs sampled for that
     * long ({@link GpuSamples#COMMAND}), all nodes at once, and the kubelet's device checkpoint read there (which pod
     * holds which GPU): the whole takes about the window, however many nodes.
     */
    public static Survey survey(Inventory inv, Function<Node, Remote> connector, Duration window) {
        List<Node> gpuNodes = inv.nodes().stream().filter(Node::gpu).toList();
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(64, gpuNodes.size())));
        boolean sample = window.compareTo(Duration.ZERO) > 0;
        try (Remote master = connector.apply(inv.master())) {
            Map<String, Future<Answer>> asked = new LinkedHashMap<>();
            for (Node n : gpuNodes) {
                asked.put(n.name(), pool.submit(() -> n.isMaster() ? answer(master, sample ? window : null) : answerOf(n, connector, sample ? window : null)));
            }
            ClusterState state = clusterState(master);
            Map<String, Answer> answers = new LinkedHashMap<>();
            for (var e : asked.entrySet()) answers.put(e.getKey(), get(e.getValue()));
            Map<String, GpuUsage.Smi> smi = new LinkedHashMap<>();
            answers.forEach((k, v) -> smi.put(k, v.smi()));
            try {
                GpuUsage.Report usage = GpuUsage.of(gpuNodes.stream().map(Node::name).toList(), state.nodesJson(), state.podsJson(), smi);
                if (!sample) return new Survey(usage, Optional.empty());
                Map<String, GpuActivity.PodRef> pods = GpuActivity.livePods(state.podsJson());
                List<GpuActivity.NodeUse> nodes = new ArrayList<>();
                answers.forEach((name, a) -> nodes.add(activity(name, a.sampled().orElseThrow(), pods)));
                return new Survey(usage, Optional.of(new GpuActivity.Report(window, nodes)));
            } catch (IllegalArgumentException e) {
                throw new WorkloadException(inv.master().name() + ": " + e.getMessage());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** One node's GPU use from what it printed; an unreadable checkpoint is the node's problem, not an exception. */
    static GpuActivity.NodeUse activity(String node, Sampled s, Map<String, GpuActivity.PodRef> pods) {
        if (!s.problem().isEmpty()) return GpuActivity.failed(node, s.problem());
        try {
            return GpuActivity.node(node, GpuSamples.parse(s.samples()), DeviceCheckpoint.parse(s.checkpoint()), pods);
        } catch (HostConfException e) {
            return GpuActivity.failed(node, e.getMessage());
        }
    }

    private static Answer answerOf(Node n, Function<Node, Remote> connector, Duration window) {
        try (Remote r = connector.apply(n)) {
            return answer(r, window);
        } catch (RemoteException e) {
            return new Answer(GpuUsage.Smi.failed(e.getMessage(), e.kind() == RemoteException.Kind.TIMEOUT),
                window == null ? Optional.empty() : Optional.of(new Sampled("", "", e.getMessage())));
        }
    }

    private static Answer answer(Remote host, Duration window) {
        GpuUsage.Smi smi = smi(host);
        if (window == null) return new Answer(smi, Optional.empty());
        return new Answer(smi, Optional.of(sample(host, window)));
    }

    /**
     * The command that reads the kubelet's device checkpoint, then samples the GPUs for {@code window}: nvidia-smi's
     * {@code -lms} loop stopped by {@code timeout} (its exit 124 is the normal end).
     */
    static String sampleCommand(Duration window) {
        return "cat " + DeviceCheckpoint.PATH + " 2>/dev/null; echo; echo " + SEP + "; timeout "
            + String.format(Locale.ROOT, "%.3f", window.toMillis() / 1000.0) + " " + GpuSamples.COMMAND + " 2>&1; echo \"" + SEP + " $?\"";
    }

    static final String SEP = "@@@gpuctl";

    /** Samples one host's GPUs (see {@link #sampleCommand}); what went wrong is the answer's problem. */
    static Sampled sample(Remote host, Duration window) {
        String command = sampleCommand(window);
        ExecResult r;
        try {
            r = host.exec(command, window.plus(TIMEOUT));
        } catch (RemoteException e) {
            return new Sampled("", "", e.getMessage());
        }
        String[] parts = r.stdout().split("(?m)^" + SEP + "\\R", 2);
        if (!r.ok() || parts.length < 2) return new Sampled("", "", "sampling failed (exit " + r.exit() + "): " + r.tail(2));
        int end = parts[1].lastIndexOf(SEP + " ");
        String samples = end < 0 ? parts[1] : parts[1].substring(0, end);
        String exit = end < 0 ? "" : parts[1].substring(end + SEP.length() + 1).strip();
        if (exit.equals("127")) return new Sampled("", "", "nvidia-smi is not installed on " + host.name());
        return new Sampled(parts[0], samples, "");
    }

    /** nvidia-smi's answer on one host; a failed or unreadable answer is the reason in words. */
    static GpuUsage.Smi smi(Remote host) {
        ExecResult r = host.exec(NvidiaSmi.QUERY_COMMAND + " 2>&1", TIMEOUT);
        if (r.exit() == 127) {
            return GpuUsage.Smi.failed("nvidia-smi is not installed: install the NVIDIA driver, or set gpu: false for "
                + host.name() + " in the inventory", true);
        }
        try {
            NvidiaSmi.GpuScan scan = NvidiaSmi.parseQuery(r.stdout());
            if (!r.ok() && scan.problem().isEmpty()) {
                return GpuUsage.Smi.failed("nvidia-smi failed (exit " + r.exit() + "): " + r.tail(2), true);
            }
            return GpuUsage.Smi.answered(scan);
        } catch (HostConfException e) {
            return GpuUsage.Smi.failed(e.getMessage(), true);
        }
    }

    private static <T> T get(Future<T> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) throw re;
            throw new IllegalStateException(e.getCause());
        }
    }
}
