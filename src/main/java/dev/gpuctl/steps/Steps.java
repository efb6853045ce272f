package dev.gpuctl.steps;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/** The bootstrap's phases and steps, in order (docs/design.md, "Steps are data"). */
public final class Steps {
    private Steps() {}

    public static List<Phase> phases() {
        return List.of(
            new Phase("preflight", "preflight: every host, read-only", List.of(new PreflightStep(), new ClusterIdentityStep(),
                new ControlPlaneChangeStep()), true),
            new Phase("hosts", "host preparation", List.of(new ProxyStep(), new TimeSyncStep(), new SwapStep(), new KernelStep(),
                new RuntimeStep(), new DevCharStep(), new KubePackagesStep(), new DriverHoldStep(), new MigStep()), false),
            new Phase("control-plane", "control plane and pod network", List.of(new LoadBalancerStep(), new ControlPlaneStep(), new EndpointStep(), new CniStep(),
                new SchedulableStep()), false),
            new Phase(KubeletEndpointStep.ID, "kubelets pointed at the controlPlaneEndpoint", List.of(new KubeletEndpointStep()), false),
            new Phase(LostMasterStep.ID, "etcd members of masters whose disk was lost", List.of(new LostMasterStep()), false),
            new Phase("masters", "the other masters join the control plane", List.of(new ControlPlaneJoinStep()), false),
            new Phase("join", "workers join", List.of(new JoinStep()), false),
            new Phase("gpu", "GPUs", List.of(new GpuStep(), new GpuRecordStep(), new GpuHealthStep()), false),
            new Phase("teams", "teams' queues (Kueue)", List.of(new KueueStep()), false),
            new Phase("nfs-server", "NFS server", List.of(new NfsServerStep()), false),
            new Phase("nfs-clients", "NFS clients", List.of(new NfsClientStep()), false));
    }

    /**
     * What {@code gpuctl verify} asks: the bootstrap's phases, then that no node was left cordoned ({@link SchedulingStep}),
     * then the certificates (read-only checks that bootstrap does not run: {@code gpuctl certs renew} is what renews).
     */
    public static List<Phase> verifyPhases() {
        List<Phase> all = new ArrayList<>(phases());
        all.add(new Phase("scheduling", "scheduling", List.of(new SchedulingStep()), false));
        all.add(new Phase("control-plane-ha", "highly available control plane", List.of(new ControlPlaneHaStep()), false));
        all.add(certificates());
        // verify only: a kubectl exec in every running GPU pod is a read a bootstrap re-run has no reason to pay for.
        // Last: its execs are made from the cluster read's answer (a fact), so they are asked after the batch that
        // holds the read; a check after them would start a batch, and a cluster read, of its own.
        all.add(new Phase("gpu-pods", "running GPU pods see their GPUs", List.of(new GpuPodsNvmlStep()), false));
        return List.copyOf(all);
    }

    public static Phase certificates() {
        return new Phase("certificates", "certificates", List.of(new CertificatesStep()), false);
    }

    /**
     * The phases with {@link KubeletEndpointStep}'s phase split into one phase per node of the inventory, in its order:
     * a kubelet pointed at a new endpoint restarts only after the node before it is Ready again.
     */
    public static List<Phase> oneNodeAtATime(List<Phase> phases, Inventory inv) {
        List<Phase> out = new ArrayList<>();
        for (Phase p : phases) {
            if (!p.id().equals(KubeletEndpointStep.ID)) {
                out.add(p);
                continue;
            }
            for (Node n : inv.nodes()) {
                out.add(new Phase(p.id() + "-" + n.name(), p.title() + " (" + n.name() + ")",
                    List.of(new KubeletEndpointStep(Optional.of(n.name()))), false));
            }
        }
        return List.copyOf(out);
    }

    /** Step ids accepted by --only, in order. */
    public static List<String> ids() {
        return phases().stream().flatMap(p -> p.steps().stream()).map(Step::id).distinct().toList();
    }

    /**
     * Phases reduced to the steps named (preflight always stays; the cluster identity check only when the run would
     * init or join: preparing a wiped master's host for {@code gpuctl restore} changes no cluster).
     */
    public static List<Phase> only(Set<String> ids) {
        if (ids.isEmpty()) return phases();
        boolean makesCluster = ids.contains("init") || ids.contains("join") || ids.contains("join-masters") || ids.contains("endpoint")
            || ids.contains(KubeletEndpointStep.ID);
        return phases().stream()
            .map(p -> new Phase(p.id(), p.title(), p.steps().stream()
                .filter(s -> p.readOnly() ? !(s instanceof ClusterIdentityStep || s instanceof ControlPlaneChangeStep) || makesCluster
                    : ids.contains(s.id()))
                .collect(Collectors.toList()), p.readOnly()))
            .filter(p -> !p.steps().isEmpty())
            .toList();
    }
}
