package dev.gpuctl.steps;

import dev.gpuctl.kube.ClusterView;
import dev.gpuctl.gpu.RepairPlan;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code gpuctl repair}'s phases for the one engine, one node at a time, in three classes along its seams: here the
 * read-only diagnosis ({@link #diagnose}; what each read is kept by key, {@link Probe#keeping}, for the engine to build
 * the diagnosis from) and what the others share; the jobs held safe (drain's own phase, {@link NodePhases#drain}); each
 * remedy with its own check ({@link RepairRemedies}); the proof and the record ({@link RepairProof}).
 */
public final class Repair {
    private Repair() {}

    /** How long a remedy's check waits for the node to come back (plugin re-registered, host rebooted). */
    public static final Duration COME_BACK = Duration.ofMinutes(5);
    /** How long the smoke pod may take. */
    public static final Duration SMOKE_WAIT = Duration.ofMinutes(2);
    /** The smoke pod's image (NVIDIA's CUDA base image: nvidia-smi comes from the driver the runtime injects). */
    public static final String SMOKE_IMAGE = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04";
    /** The node annotation holding the last repair's outcome. */
    public static final String LAST_REPAIR = ClusterView.LAST_REPAIR_ANNOTATION;

    /**
     * The last repair of {@code node} as the run's cluster read saw it (verify's checks read the cluster once); empty
     * when the cluster was not read, the node was never repaired, or its annotation is not in repair's form.
     */
    public static Optional<RepairPlan.LastRepair> lastRepair(Facts facts, String node) {
        return facts.lastAnswer(ClusterProbes.CLUSTER).flatMap(v -> v.node(node)).flatMap(ClusterView.NodeState::lastRepair)
            .flatMap(RepairPlan.LastRepair::parse);
    }

    // ---- keys of the diagnosis's answers

    public static String clusterKey() { return "repair.cluster"; }
    public static String bootIdKey(String node) { return "repair." + node + ".bootId"; }
    public static String gpusKey(String node) { return "repair." + node + ".gpus"; }
    public static String holdersKey(String node) { return "repair." + node + ".holders"; }
    public static String xidsKey(String node) { return "repair." + node + ".xids"; }
    public static String moduleKey(String node) { return "repair." + node + ".module"; }
    public static String driverKey(String node) { return "repair." + node + ".driver"; }
    public static String clockKey(String node) { return "repair." + node + ".clock"; }
    public static String memoryKey(String node) { return "repair." + node + ".memory"; }
    public static String persistencedKey(String node) { return "repair." + node + ".persistenced"; }
    public static String devCharKey(String node) { return "repair." + node + ".devChar"; }
    public static String devCharRuleKey(String node) { return "repair." + node + ".devCharRule"; }
    public static String podsNvmlKey() { return "repair.podsNvml"; }
    public static String dcgmiKey(String node) { return "repair." + node + ".dcgmi"; }

    /** Where DCGM's dcgmi is ("" when not installed). */
    public static final String DCGMI = "command -v dcgmi 2>/dev/null; true";

    /** NVIDIA's udev rule file as it is on the host ("" when missing). */
    public static final String DEV_CHAR_RULE = "cat " + dev.gpuctl.gpu.DevChar.RULE_FILE + " 2>/dev/null; true";

    /** The GPUs, one "INDEX, UUID, BUS" line each. */
    public static final String GPUS = "nvidia-smi --query-gpu=index,uuid,pci.bus_id --format=csv,noheader 2>&1";
    /** The processes holding each GPU, one "UUID, PID, NAME" line each. */
    public static final String HOLDERS = "nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name --format=csv,noheader 2>&1";
    /** The host's clock, seconds since the epoch: what "since the repair began" means on the host. */
    public static final String CLOCK = "date +%s";
    /** The host's boot id (a reboot makes a new one; the kubelet reports it as the node's nodeInfo.bootID). */
    public static final String BOOT_ID = "cat /proc/sys/kernel/random/boot_id";
    /** nvidia-persistenced's unit, as {@code RepairPlan.Persistenced.parse} reads it (LoadState=not-found when absent). */
    public static final String PERSISTENCED = "systemctl show -p LoadState -p UnitFileState -p ActiveState nvidia-persistenced 2>&1; true";

    /** The diagnosis: read-only, on the master (the cluster's view) and on each node. */
    public static Phase diagnose(List<String> nodes) {
        return new Phase("diagnose", "diagnose " + String.join(", ", nodes), List.of(new DiagnoseStep(nodes)), true);
    }

    static final class DiagnoseStep implements Step {
        private final List<String> nodes;

        DiagnoseStep(List<String> nodes) { this.nodes = List.copyOf(nodes); }

        @Override public String id() { return "diagnose"; }
        @Override public String title() { return "diagnose the GPUs of " + String.join(", ", nodes); }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster() || nodes.contains(ctx.node().name()); }

        @Override public List<Probe> check(HostContext ctx) {
            List<Probe> probes = new ArrayList<>();
            if (ctx.node().isMaster()) {
                probes.add(Probe.keeping("the cluster's nodes and pods", ClusterView.COMMAND, clusterKey()));
                probes.add(Probe.keeping("nvidia-smi -L in every running GPU pod", GpuPodsNvmlStep.PODS, podsNvmlKey()));
            }
            String n = ctx.node().name();
            if (nodes.contains(n)) {
                probes.add(Probe.keeping("the host's clock", CLOCK, clockKey(n)));
                probes.add(Probe.keeping("the host's boot id", BOOT_ID, bootIdKey(n)));
                probes.add(Probe.keeping("the GPUs nvidia-smi lists", GPUS, gpusKey(n)));
                probes.add(Probe.keeping("the processes holding each GPU", HOLDERS, holdersKey(n)));
                probes.add(Probe.keeping("the Xids in the kernel log since boot", GpuHealthStep.XID, xidsKey(n)));
                probes.add(Probe.keeping("the loaded kernel module's version", GpuHealthStep.MODULE, moduleKey(n)));
                probes.add(Probe.keeping("the NVML library's driver version", GpuHealthStep.DRIVER, driverKey(n)));
                probes.add(Probe.keeping("the GPUs' ECC errors and row remapping", GpuHealthStep.MEMORY, memoryKey(n)));
                probes.add(Probe.keeping("nvidia-persistenced's unit", PERSISTENCED, persistencedKey(n)));
                probes.add(Probe.keeping("the NVIDIA device nodes and their /dev/char links", dev.gpuctl.gpu.DevChar.LISTING, devCharKey(n)));
                probes.add(Probe.keeping("NVIDIA's udev rule for the /dev/char links", DEV_CHAR_RULE, devCharRuleKey(n)));
                probes.add(Probe.keeping("DCGM's dcgmi (its quick test proves the repair)", DCGMI, dcgmiKey(n)));
            }
            return probes;
        }

        @Override public List<Op> apply(HostContext ctx) { return List.of(); }
    }

    /** The probe a remedy and the proof share: allocatable nvidia.com/gpu of {@code node} is {@code want}. */
    static Probe allocatable(String node, int want) {
        return ClusterProbes.cluster("node " + node + " allocatable nvidia.com/gpu = " + want, view -> {
            var n = view.node(node);
            if (n.isEmpty()) return Optional.of("node " + node + " not found (kubectl get nodes)");
            String have = n.get().allocatable("nvidia.com/gpu");
            return have.equals(String.valueOf(want)) ? Optional.empty()
                : Optional.of("allocatable nvidia.com/gpu is " + have + ", " + want + " expected; " + GpuStep.pluginPod(view, node));
        });
    }
}
