package dev.gpuctl.workload;

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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
        return new ClusterState(fields(master, "get nodes", KubeFields.NODES, NEXT), fields(master, "get pods -A", KubeFields.PODS, NEXT));
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
        List<Node> gpuNodes = inv.nodes().stream().filter(Node::gpu).toList();
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(16, gpuNodes.size())));
        try (Remote master = connector.apply(inv.master())) {
            Map<String, Future<GpuUsage.Smi>> asked = new LinkedHashMap<>();
            for (Node n : gpuNodes) {
                asked.put(n.name(), pool.submit(() -> n.isMaster() ? smi(master) : smiOf(n, connector)));
            }
            ClusterState state = clusterState(master);
            Map<String, GpuUsage.Smi> smi = new LinkedHashMap<>();
            for (var e : asked.entrySet()) smi.put(e.getKey(), get(e.getValue()));
            try {
                return GpuUsage.of(gpuNodes.stream().map(Node::name).toList(), state.nodesJson(), state.podsJson(), smi);
            } catch (IllegalArgumentException e) {
                throw new WorkloadException(inv.master().name() + ": " + e.getMessage());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static GpuUsage.Smi smiOf(Node n, Function<Node, Remote> connector) {
        try (Remote r = connector.apply(n)) {
            return smi(r);
        } catch (RemoteException e) {
            return GpuUsage.Smi.failed(e.getMessage(), e.kind() == RemoteException.Kind.TIMEOUT);
        }
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

    private static GpuUsage.Smi get(Future<GpuUsage.Smi> f) {
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
