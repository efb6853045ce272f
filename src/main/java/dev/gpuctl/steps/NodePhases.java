package dev.gpuctl.steps;

import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The node lifecycle commands' phases for the one engine ({@code Runner.run(List<Phase>)}): the GPU-aware
 * {@link #drain}, which any command that takes nodes out of service (drain, upgrade, remove-node) runs before, and
 * {@link #uncordon} after (both on the master only: the runner's host selection must include it); remove-node's
 * {@link #removeNodes}, reset's {@link #resetCluster}, and {@code --restore-host}'s {@link #restoreHosts}.
 */
public final class NodePhases {
    private NodePhases() {}

    /** How long a drain waits for the GPU jobs on a node, and kubectl drain for evictions, unless told otherwise. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(10);

    /**
     * Cordon the nodes; then, unless {@code force}, wait up to {@code timeout} for the GPU Jobs and bare GPU pods on
     * them to finish, failing (step "gpu-jobs", naming each node, pod and GPU count) while any still runs, before
     * anything is evicted; then kubectl drain the rest (DaemonSets ignored, emptyDir data deleted, PDBs respected up
     * to {@code timeout}); with {@code force}, GPU jobs and bare pods are evicted too.
     */
    public static Phase drain(List<String> nodes, Duration timeout, boolean force) {
        List<Step> steps = force
            ? List.of(new CordonStep(nodes, true), new EvictStep(nodes, timeout, true))
            : List.of(new CordonStep(nodes, true), new GpuJobsStep(nodes, timeout), new EvictStep(nodes, timeout, false));
        return new Phase("drain", "drain " + String.join(", ", nodes), steps, false);
    }

    /**
     * remove-node's phases, in kubeadm's documented order: {@link #drain} (a node that is no longer registered has
     * nothing to drain), each host reset ({@link ResetHostStep}: its kubelet stopped), then the nodes deleted from the
     * cluster (a kubelet still running would register its node again); then, with {@code restoreHost},
     * {@link #restoreHosts} on them.
     */
    public static List<Phase> removeNodes(List<String> nodes, Duration timeout, boolean force, boolean restoreHost) {
        return removeNodes(nodes, List.of(), timeout, force, restoreHost);
    }

    /**
     * remove-node's phases where {@code masters} (some of the nodes, of a control plane of several) leave too: after the
     * drain, each master's etcd member is removed from another master ({@link EtcdMemberRemoveStep}, one at a time),
     * before its host is reset; the kubectl work runs on the first master that stays ({@link HostContext#actingMaster}).
     */
    public static List<Phase> removeNodes(List<String> nodes, List<String> masters, Duration timeout, boolean force, boolean restoreHost) {
        List<Step> drain = force
            ? List.of(new CordonStep(nodes, true, true), new EvictStep(nodes, timeout, true))
            : List.of(new CordonStep(nodes, true, true), new GpuJobsStep(nodes, timeout), new EvictStep(nodes, timeout, false));
        List<Phase> phases = new ArrayList<>(List.of(new Phase("drain", "drain " + String.join(", ", nodes), drain, false)));
        for (String m : masters) {
            phases.add(new Phase("etcd-member", "remove " + m + "'s etcd member", List.of(new EtcdMemberRemoveStep(m)), false));
        }
        phases.addAll(List.of(new Phase("reset", "reset the hosts", List.of(new ResetHostStep(nodes)), false),
            new Phase("delete-node", "delete from the cluster", List.of(new DeleteNodeStep(nodes)), false)));
        if (restoreHost) phases.add(restoreHosts(nodes));
        return List.copyOf(phases);
    }

    /** reset's phases: every worker reset (in parallel), then the master; then, with {@code restoreHost}, {@link #restoreHosts} on every host. */
    public static List<Phase> resetCluster(List<String> workers, String master, boolean restoreHost) {
        return resetCluster(workers, List.of(master), restoreHost);
    }

    /**
     * reset's phases for a control plane of several masters: the workers, then each master but the first one at a time
     * (its kubeadm reset removes its own etcd member while the others still make a quorum), then the first master.
     */
    public static List<Phase> resetCluster(List<String> workers, List<String> masters, boolean restoreHost) {
        List<Phase> phases = new ArrayList<>(List.of(new Phase("reset-workers", "reset the workers", List.of(new ResetHostStep(workers)), false)));
        List<String> others = new ArrayList<>(masters.subList(1, masters.size()));
        java.util.Collections.reverse(others);
        for (String m : others) {
            phases.add(new Phase("reset-master-" + m, "reset the master " + m + " (its etcd member removed)", List.of(new ResetHostStep(List.of(m))), false));
        }
        phases.add(new Phase("reset-master", "reset the master", List.of(new ResetHostStep(List.of(masters.get(0)))), false));
        if (restoreHost) {
            List<String> all = new ArrayList<>(workers);
            all.addAll(masters);
            phases.add(restoreHosts(all));
        }
        return List.copyOf(phases);
    }

    /**
     * {@code --restore-host}: each host's preparation put back from its change journal and backups
     * ({@link RestoreHostStep}), after the host was reset.
     */
    public static Phase restoreHosts(List<String> hosts) {
        return new Phase("restore-host", "put the hosts' preparation back", List.of(new RestoreHostStep(hosts)), false);
    }

    /** Make the nodes schedulable again. */
    public static Phase uncordon(List<String> nodes) {
        return new Phase("uncordon", "uncordon " + String.join(", ", nodes), List.of(new CordonStep(nodes, false)), false);
    }

    /** The runner's command timeout a drain needs: kubectl drain runs up to {@code timeout}, plus a minute. */
    public static Duration commandTimeout(Duration timeout, Duration atLeast) {
        Duration need = timeout.plusMinutes(1);
        return need.compareTo(atLeast) > 0 ? need : atLeast;
    }
}
