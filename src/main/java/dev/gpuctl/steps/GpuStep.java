package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.kube.ClusterView;
import dev.gpuctl.gpu.DevicePluginSharing;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.gpu.Mig;
import dev.gpuctl.gpu.NvidiaMig;
import dev.gpuctl.gpu.PluginStatus;
import dev.gpuctl.inventory.GpuSharing;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Step 9, GPUs in the scheduler: label GPU nodes, apply the NVIDIA device plugin, then wait until each GPU
 * node's allocatable nvidia.com/gpu equals the count its nvidia-smi reported at preflight.
 */
public final class GpuStep implements Step {
    static final Duration CAPACITY_WAIT = Duration.ofMinutes(5);
    public static final String PRESENT_LABEL = "nvidia.com/gpu.present";

    @Override public String id() { return "gpu"; }

    @Override public boolean readsCluster() { return true; }
    @Override public String title() { return "GPU labels and NVIDIA device plugin"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.firstMaster() && !gpuNodes(ctx).isEmpty(); }

    static List<Node> gpuNodes(HostContext ctx) { return gpuNodes(ctx.inventory()); }

    /**
     * Labels gpuctl puts on a node: the inventory's, plus nvidia.com/gpu.present=true on GPU nodes and, when the node names
     * its GPU model, {@link dev.gpuctl.kube.KueueObjects#MODEL_LABEL} (its teams' ResourceFlavor selects it); when any node shares
     * its GPUs, every GPU node's device plugin config ({@link DevicePluginSharing#CONFIG_LABEL}) and, on MPS nodes,
     * {@link DevicePluginSharing#MPS_LABEL}.
     */
    static Map<String, String> labels(Inventory inv, Node n) {
        Map<String, String> l = new LinkedHashMap<>();
        if (n.gpu()) l.put(PRESENT_LABEL, "true");
        if (n.gpu() && !n.gpuModel().isEmpty()) l.put(dev.gpuctl.kube.KueueObjects.MODEL_LABEL, n.gpuModel());
        if (n.gpu() && inv.sharesGpus()) {
            GpuSharing s = inv.sharing(n);
            l.put(DevicePluginSharing.CONFIG_LABEL, s.configName());
            if (s.mode() == GpuSharing.Mode.MPS) l.put(DevicePluginSharing.MPS_LABEL, "true");
        }
        l.putAll(new TreeMap<>(n.labels()));
        return l;
    }

    /** The sharing labels gpuctl manages that {@code n} must not have (left from an earlier sharing setting). */
    static List<String> unwanted(Inventory inv, Node n) {
        if (!n.gpu()) return List.of();
        Map<String, String> want = labels(inv, n);
        return Stream.of(DevicePluginSharing.CONFIG_LABEL, DevicePluginSharing.MPS_LABEL)
            .filter(k -> !want.containsKey(k)).toList();
    }

    /** The device plugin's configurations the inventory uses (empty: no sharing anywhere). */
    static List<DevicePluginSharing.Config> sharingConfigs(Inventory inv) {
        return gpuNodes(inv).stream().map(inv::sharing).filter(GpuSharing::configured).map(GpuStep::config).distinct().toList();
    }

    static DevicePluginSharing.Config config(GpuSharing s) {
        return s.mig().map(m -> DevicePluginSharing.Config.mig(s.configName(), m.strategy().key()))
            .orElseGet(() -> new DevicePluginSharing.Config(s.configName(), s.mode().key(), s.replicas()));
    }

    static List<Node> gpuNodes(Inventory inv) { return inv.nodes().stream().filter(Node::gpu).toList(); }

    /** What the manifest patch does, for the plan. */
    static String sharingRule(Inventory inv) {
        List<DevicePluginSharing.Config> configs = sharingConfigs(inv);
        if (configs.isEmpty()) return "no GPU sharing: no config manager, no sharing ConfigMap";
        return "GPU sharing: config manager and ConfigMap " + DevicePluginSharing.CONFIG_MAP + " ("
            + configs.stream().map(DevicePluginSharing.Config::name).collect(Collectors.joining(", "))
            + "), each GPU node's config picked by its " + DevicePluginSharing.CONFIG_LABEL + " label";
    }

    static String path(HostContext ctx) {
        return Manifest.remotePath("nvidia-device-plugin", ctx.cluster().devicePlugin().manifest());
    }

    /** The fact preflight learns from each GPU node's nvidia-smi. */
    public static String gpuCountFact(Node n) { return "gpu." + n.name() + ".count"; }

    @Override public List<Probe> check(HostContext ctx) {
        List<Probe> probes = new ArrayList<>();
        for (Node n : ctx.inventory().nodes()) {
            Map<String, String> want = labels(ctx.inventory(), n);
            List<String> unwanted = unwanted(ctx.inventory(), n);
            if (want.isEmpty()) continue;
            probes.add(ClusterProbes.cluster("node " + n.name() + " labelled " + want, view -> {
                var node = view.node(n.name());
                if (node.isEmpty()) return Optional.of("node " + n.name() + " not found (kubectl get nodes)");
                Map<String, String> have = node.get().labels();
                var missing = want.entrySet().stream().filter(e -> !e.getValue().equals(have.get(e.getKey()))).map(Map.Entry::getKey).toList();
                var stale = unwanted.stream().filter(have::containsKey).toList();
                if (!missing.isEmpty()) return Optional.of("labels missing or different: " + missing);
                return stale.isEmpty() ? Optional.empty() : Optional.of("labels left from an earlier GPU sharing setting: " + stale);
            }));
        }
        probes.add(MasterApi.applied(ctx, "device plugin " + ctx.cluster().devicePlugin().version(), path(ctx)));
        for (Node n : gpuNodes(ctx)) probes.add(allocatable(n, ctx.inventory().sharing(n)));
        return probes;
    }

    @Override public List<Op> apply(HostContext ctx) {
        List<Op> ops = new ArrayList<>();
        for (Node n : ctx.inventory().nodes()) {
            Map<String, String> want = labels(ctx.inventory(), n);
            if (want.isEmpty()) continue;
            List<String> kv = new ArrayList<>(want.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList());
            unwanted(ctx.inventory(), n).forEach(k -> kv.add(k + "-"));
            ops.add(Op.Run.of("label " + n.name(), Kube.kubectl("label node " + n.name() + " --overwrite " + ShellWords.words(kv))));
        }
        List<DevicePluginSharing.Config> configs = sharingConfigs(ctx.inventory());
        ops.addAll(Manifest.place("NVIDIA device plugin " + ctx.cluster().devicePlugin().version(),
            ctx.cluster().devicePlugin().manifest(), path(ctx), sharingRule(ctx.inventory()), m -> DevicePluginSharing.patch(m, configs)));
        ops.add(Manifest.apply("the device plugin", path(ctx)));
        return ops;
    }

    @Override public List<Probe> verify(HostContext ctx) {
        List<Probe> probes = new ArrayList<>(check(ctx).stream().filter(p -> !p.what().contains("allocatable")).toList());
        probes.add(ClusterProbes.nodesReady(ctx.inventory().nodes().stream().map(Node::name).toList()).waitingUpTo(CAPACITY_WAIT));
        for (Node n : gpuNodes(ctx)) probes.add(allocatable(n, ctx.inventory().sharing(n)).waitingUpTo(CAPACITY_WAIT));
        return probes;
    }

    /**
     * allocatable nvidia.com/gpu of a node equals its nvidia-smi count (a fact learned at preflight); when it does
     * not, the message names the node's device plugin pod and its state, and what to check.
     */
    static Probe allocatable(Node n, GpuSharing sharing) {
        if (sharing.mig().isPresent()) return allocatableMig(n, sharing.mig().get());
        String times = sharing.shared() ? " × " + sharing.replicas() + " (" + sharing.mode().key() + ")" : "";
        return ClusterProbes.cluster("node " + n.name() + " allocatable nvidia.com/gpu = its nvidia-smi count" + times, (view, facts) -> {
            var node = view.node(n.name());
            if (node.isEmpty()) return Optional.of("node " + n.name() + " not found (kubectl get nodes)");
            String have = node.get().allocatable("nvidia.com/gpu");
            Optional<String> count = facts.get(gpuCountFact(n));
            String want = count.filter(c -> c.matches("[0-9]{1,4}")).map(c -> String.valueOf(Integer.parseInt(c) * sharing.replicas()))
                .orElse("?");
            if (have.equals(want)) return Optional.empty();
            return Optional.of("allocatable nvidia.com/gpu is " + have + ", nvidia-smi counts " + count.orElse("?")
                + (sharing.shared() ? " GPUs × " + sharing.replicas() + " replicas = " + want : "") + "; " + pluginPod(view, n.name())
                + " — check that nvidia is the default runtime on " + n.name() + " (gpuctl verify --hosts " + n.name() + ")");
        });
    }

    /**
     * A MIG node's allocatable per resource the plugin advertises (single: nvidia.com/gpu = every instance; mixed:
     * nvidia.com/mig-PROFILE = that profile's instances), from the GPU count and profiles preflight learned.
     */
    static Probe allocatableMig(Node n, Mig mig) {
        return ClusterProbes.cluster("node " + n.name() + " allocatable = its MIG instances (" + mig + ")", (view, facts) -> {
            var node = view.node(n.name());
            if (node.isEmpty()) return Optional.of("node " + n.name() + " not found (kubectl get nodes)");
            Optional<String> count = facts.get(gpuCountFact(n)).filter(c -> c.matches("[0-9]{1,4}"));
            Optional<String> totals = facts.get(MigStep.totalsFact(n));
            if (count.isEmpty() || totals.isEmpty()) return Optional.of("the node's GPUs and MIG profiles are not known (preflight learns them)");
            Map<String, Integer> want = NvidiaMig.resources(mig, Integer.parseInt(count.get()), NvidiaMig.decode(totals.get()));
            List<String> wrong = new ArrayList<>();
            for (var e : want.entrySet()) {
                String have = node.get().allocatable(e.getKey());
                if (!have.equals(String.valueOf(e.getValue()))) wrong.add(e.getKey() + " is " + have + ", expected " + e.getValue());
            }
            if (wrong.isEmpty()) return Optional.empty();
            return Optional.of("allocatable " + String.join(", ", wrong) + " (" + count.get() + " GPUs cut as " + mig + "); "
                + pluginPod(view, n.name()) + " — check the instances on " + n.name() + " (nvidia-smi -L) and the plugin's log");
        });
    }

    /** "device plugin pod kube-system/NAME is CrashLoopBackOff (kubectl -n kube-system logs NAME)", or that there is none. */
    static String pluginPod(ClusterView view, String node) {
        var readySince = view.node(node).flatMap(ClusterView.NodeState::ready).filter(ClusterView.Condition::isTrue).flatMap(ClusterView.Condition::since);
        for (ClusterView.PodState p : view.pods()) {
            if (!p.name().contains("nvidia-device-plugin") || !node.equals(p.node())) continue;
            String stale = PluginStatus.ERRORS.contains(p.state()) && PluginStatus.stale(p.statusTime(), readySince)
                ? ", a status posted before " + node + " became Ready at " + readySince.get() + " (after a boot: the plugin has not re-registered yet)"
                : "";
            return "device plugin pod " + p.namespace() + "/" + p.name() + " is " + p.state() + stale + " (kubectl -n " + p.namespace() + " logs " + p.name() + ")";
        }
        return "no device plugin pod runs on " + node;
    }
}
