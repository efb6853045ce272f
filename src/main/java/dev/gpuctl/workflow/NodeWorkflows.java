package dev.gpuctl.workflow;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StateDir;
import dev.gpuctl.hostfiles.HostJournal;
import dev.gpuctl.hostfiles.NodeCleanup;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.steps.NodePhases;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.Optional;
import java.time.Duration;
import java.util.List;

/**
 * The node lifecycle commands as workflows (drain, uncordon, remove-node, reset): each one session of the engine, its
 * phases from {@link NodePhases} (the GPU-aware drain is shared with upgrade and repair). The runner's host selection
 * must include the master (where kubectl runs).
 */
public final class NodeWorkflows {
    private NodeWorkflows() {}

    /** {@link NodePhases#DEFAULT_TIMEOUT}. */
    public static final Duration DEFAULT_DRAIN_TIMEOUT = NodePhases.DEFAULT_TIMEOUT;

    /** The command timeout a drain needs: {@link NodePhases#commandTimeout}. */
    public static Duration commandTimeout(Duration drainTimeout, Duration atLeast) {
        return NodePhases.commandTimeout(drainTimeout, atLeast);
    }

    /** Cordon, wait for the GPU jobs (unless force), kubectl drain: {@link NodePhases#drain}. */
    public static Workflow<Runner.Result> drain(List<String> nodes, Duration timeout, boolean force) {
        return Workflow.of(List.of(NodePhases.drain(nodes, timeout, force)));
    }

    /** Schedulable again: {@link NodePhases#uncordon}. */
    public static Workflow<Runner.Result> uncordon(List<String> nodes) {
        return Workflow.of(List.of(NodePhases.uncordon(nodes)));
    }

    /**
     * Drain (the same GPU-aware drain), reset each host, then kubectl delete node, in one session:
     * {@link NodePhases#removeNodes}; with {@code restoreHost}, each host's preparation put back after.
     */
    public static Workflow<Runner.Result> removeNodes(List<String> nodes, Duration timeout, boolean force, boolean restoreHost) {
        return Workflow.of(NodePhases.removeNodes(nodes, timeout, force, restoreHost));
    }

    /** The same, where {@code masters} (of several) leave too: their etcd members removed first ({@link NodePhases#removeNodes}). */
    public static Workflow<Runner.Result> removeNodes(List<String> nodes, List<String> masters, Duration timeout, boolean force, boolean restoreHost) {
        return Workflow.of(NodePhases.removeNodes(nodes, masters, timeout, force, restoreHost));
    }

    /** Every worker reset, then the master: {@link NodePhases#resetCluster}; with {@code restoreHost}, every host's preparation put back after. */
    public static Workflow<Runner.Result> reset(Inventory inv, boolean restoreHost) {
        return Workflow.of(NodePhases.resetCluster(workers(inv), inv.masters().stream().map(Node::name).toList(), restoreHost));
    }

    private static List<String> workers(Inventory inv) {
        return inv.nodes().stream().filter(n -> !n.isMaster()).map(Node::name).toList();
    }

    /** What --restore-host does on each host, for people. */
    public static final String RESTORE_WORK = "put back every file gpuctl changed from its .gpuctl-orig backup (content, owner, mode),"
        + " remove the files it created, unmask or disable the units it masked or enabled, release its package holds, turn swap on"
        + " as it was, in the reverse order of the host's change journal " + HostJournal.PATH + ", which is then archived";

    /**
     * What reset will do, for people, before it asks: the order, each host's work, what stays; with {@code restoreHost},
     * the restore of every host's preparation too.
     */
    public static String resetPlan(Inventory inv, boolean restoreHost) {
        String socket = inv.cluster().runtime().criSocket();
        String work = "kubeadm reset -f --cri-socket " + socket + "; remove " + NodeCleanup.CNI_CONF_DIR + ", the CNI interfaces ("
            + String.join(", ", NodeCleanup.CNI_INTERFACES) + ", cali*), the KUBE-/CNI-/FLANNEL-/cali- iptables chains, gpuctl's join leftovers";
        List<String> workers = workers(inv);
        StringBuilder sb = new StringBuilder("reset of cluster " + inv.cluster().name() + ":\n");
        int n = 1;
        if (!workers.isEmpty()) sb.append("  ").append(n++).append(". workers ").append(String.join(", ", workers)).append(", in parallel: ").append(work).append('\n');
        List<String> others = new java.util.ArrayList<>(inv.masters().stream().skip(1).map(Node::name).toList());
        java.util.Collections.reverse(others);
        if (!others.isEmpty()) sb.append("  ").append(n++).append(". masters ").append(String.join(", ", others)).append(", one at a time:"
            + " the same; kubeadm reset removes each one's etcd member from the cluster\n");
        sb.append("  ").append(n++).append(". master ").append(inv.master().name()).append(": the same; the cluster's etcd data, certificates and"
            + " every workload in it are gone\n");
        if (restoreHost) sb.append("  ").append(n++).append(". every host: ").append(RESTORE_WORK).append('\n');
        sb.append("  ").append(n).append(". this machine: ").append(inv.stateDir().resolve(inv.cluster().name()))
            .append(" (kubeconfig, cached join command) moved to ").append(inv.stateDir().resolve("archive")).append("/\n");
        sb.append(restoreHost ? "kept: the packages gpuctl installed (and the units they enabled), the kernel's live sysctl values until a"
                + " reboot, NFS mounts, container images, the inventory, the ssh user's ~/.kube/config\n"
            : "kept: each host's preparation (time sync, swap off, kernel modules and sysctls, container runtime, Kubernetes packages),"
                + " NFS exports and mounts, container images, the inventory, the ssh user's ~/.kube/config\n");
        return sb.toString();
    }

    /**
     * Moves this cluster's local state ({@code .gpuctl/CLUSTER}) to {@code .gpuctl/archive/CLUSTER-reset-TIME}: kept, not
     * deleted, and out of the way of a new cluster of the same name. Empty when there is none (a second reset).
     */
    public static Optional<Path> archiveClusterState(Inventory inv) throws IOException {
        Path own = inv.stateDir().resolve(inv.cluster().name());
        if (!Files.exists(own, LinkOption.NOFOLLOW_LINKS)) return Optional.empty();
        Path archive = inv.stateDir().resolve("archive");
        StateDir.ensurePrivateDir(archive);
        String stamp = LocalDateTime.now().format(StateDir.RUN_TIME);
        for (int i = 1; ; i++) {
            Path to = archive.resolve(inv.cluster().name() + "-reset-" + stamp + (i > 1 ? "-" + i : ""));
            if (Files.exists(to, LinkOption.NOFOLLOW_LINKS)) continue;
            Files.move(own, to);
            return Optional.of(to);
        }
    }
}
