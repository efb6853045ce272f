package dev.gpuctl.steps;

import dev.gpuctl.kube.ClusterView;
import dev.gpuctl.gpu.GpuHealth;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The GPUs each GPU node had when gpuctl bootstrapped it, kept on its Node object (annotation {@value #ANNOTATION}:
 * "INDEX:UUID,..."), where it survives a reinstalled host and anyone can read it: recorded once from what preflight's
 * nvidia-smi listed (or, for a node bootstrapped before, from the host file {@value #LEGACY_RECORD} an earlier gpuctl
 * wrote), never overwritten; verified by comparing it with what nvidia-smi lists now, a missing GPU named by its
 * index and UUID. Runs on the master (kubectl with admin.conf).
 */
public final class GpuRecordStep implements Step {
    public static final String ID = "gpu-record";
    public static final String ANNOTATION = ClusterView.GPU_RECORD_ANNOTATION;
    /** nvidia-smi -L as an earlier gpuctl kept it on the node itself; read for the migration only. */
    public static final String LEGACY_RECORD = "/var/lib/gpuctl/gpus-at-bootstrap";

    @Override public String id() { return ID; }
    @Override public String fix(Probe probe, boolean failed, String host, String inventory) {
        return GpuHealthStep.gpuFix(probe, failed, host, inventory);
    }
    @Override public String title() { return "GPUs recorded at bootstrap (node annotation " + ANNOTATION + ")"; }
    @Override public boolean readsCluster() { return true; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.firstMaster() && !GpuStep.gpuNodes(ctx).isEmpty(); }

    /** The GPUs preflight's nvidia-smi listed on the node, as a record. */
    public static String gpusFact(Node n) { return "gpu." + n.name() + ".gpus"; }
    /** Why preflight's nvidia-smi listed no GPU on the node ("" when it answered). */
    public static String gpusProblemFact(Node n) { return "gpu." + n.name() + ".gpusProblem"; }
    /** The record read from {@link #LEGACY_RECORD}, when the node has one. */
    public static String legacyFact(Node n) { return "gpu." + n.name() + ".gpusRecordedOnHost"; }

    /** The annotation's value on the node, one line; empty when it has none (the apply's guard). */
    static String recordedCommand(Node n) {
        return Kube.kubectl("get node " + n.name() + " -o 'jsonpath={.metadata.annotations." + ANNOTATION.replace(".", "\\.") + "}'");
    }

    @Override public List<Probe> check(HostContext ctx) {
        List<Probe> probes = new ArrayList<>();
        for (Node n : GpuStep.gpuNodes(ctx)) {
            probes.add(ClusterProbes.cluster("node " + n.name() + ": every GPU recorded at bootstrap (annotation " + ANNOTATION + ") listed by nvidia-smi",
                (view, facts) -> {
                    var node = view.node(n.name());
                    if (node.isEmpty()) return Optional.of("node " + n.name() + " not found (kubectl get nodes)");
                    Optional<String> then = node.get().gpuRecord();
                    if (then.isEmpty()) {
                        return Optional.of("no GPU list recorded at bootstrap (node " + n.name() + " has no annotation " + ANNOTATION
                            + ") — fix: gpuctl bootstrap --only " + ID + " records it");
                    }
                    Optional<String> now = facts.get(gpusFact(n));
                    if (now.isEmpty()) return Optional.of("nvidia-smi on " + n.name() + " was not asked (see its preflight)");
                    return GpuHealth.missingFromRecord(then.get(), now.get(), facts.get(gpusProblemFact(n)).orElse(""));
                }));
        }
        return probes;
    }

    @Override public List<Op> apply(HostContext ctx) {
        List<Op> ops = new ArrayList<>();
        for (Node n : GpuStep.gpuNodes(ctx)) {
            // the host's old record when an earlier gpuctl left one, else the GPUs preflight listed (both records
            // hold only letters, digits, '-', ':' and ',': safe in single quotes)
            ops.add(Op.Run.of("record " + n.name() + "'s GPUs (annotation " + ANNOTATION + ", once; an earlier host record taken over)",
                    "r='" + Facts.ref(legacyFact(n)) + "'; [ -n \"$r\" ] || r='" + Facts.ref(gpusFact(n)) + "'; "
                        + Kube.kubectl("annotate node " + n.name() + " " + ANNOTATION + "=\"$r\""))
                .unless(recordedCommand(n) + " | grep -q ."));
        }
        return ops;
    }
}
