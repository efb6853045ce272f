package dev.gpuctl.steps;

import dev.gpuctl.hostconf.Kube;
import dev.gpuctl.inventory.Node;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

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
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster() && !gpuNodes(ctx).isEmpty(); }

    static List<Node> gpuNodes(HostContext ctx) { return ctx.inventory().nodes().stream().filter(Node::gpu).toList(); }

    /** Labels gpuctl puts on a node: the inventory's, plus nvidia.com/gpu.present=true on GPU nodes. */
    static Map<String, String> labels(Node n) {
        Map<String, String> l = new LinkedHashMap<>();
        if (n.gpu()) l.put(PRESENT_LABEL, "true");
        l.putAll(new java.util.TreeMap<>(n.labels()));
        return l;
    }

    static String path(HostContext ctx) {
        return Manifest.remotePath("nvidia-device-plugin", ctx.cluster().devicePlugin().manifest());
    }

    /** The fact preflight learns from each GPU node's nvidia-smi. */
    public static String gpuCountFact(Node n) { return "gpu." + n.name() + ".count"; }

    /**
     * The cluster's nodes, and its nodes then its pods (the fields the checks read, see {@link KubeJson}): every
     * node's probe asks the same command, so that a batch runs it once for all nodes (one kubectl call instead of one
     * per node; see the step runner).
     */
    static final String NODES = KubeJson.NODES;
    static final String NODES_THEN_PODS = NODES + " && echo @@@ && " + KubeJson.pods("-A");

    @Override public List<Probe> check(HostContext ctx) {
        List<Probe> probes = new ArrayList<>();
        for (Node n : ctx.inventory().nodes()) {
            Map<String, String> want = labels(n);
            if (want.isEmpty()) continue;
            probes.add(Probe.of("node " + n.name() + " labelled " + want, NODES, r -> {
                if (!r.ok()) return Optional.of("kubectl failed: " + r.tail(2));
                var node = KubeJson.node(KubeJson.nodes(r.stdout()), n.name());
                if (node.isEmpty()) return Optional.of("node " + n.name() + " not found (kubectl get nodes)");
                var have = node.get().path("metadata").path("labels");
                var missing = want.entrySet().stream().filter(e -> !e.getValue().equals(have.path(e.getKey()).asText(null))).map(Map.Entry::getKey).toList();
                return missing.isEmpty() ? Optional.empty() : Optional.of("labels missing or different: " + missing);
            }));
        }
        probes.add(Manifest.applied("device plugin " + ctx.cluster().devicePlugin().version(), path(ctx)));
        for (Node n : gpuNodes(ctx)) probes.add(allocatable(n));
        return probes;
    }

    @Override public List<Op> apply(HostContext ctx) {
        List<Op> ops = new ArrayList<>();
        for (Node n : ctx.inventory().nodes()) {
            Map<String, String> want = labels(n);
            if (want.isEmpty()) continue;
            List<String> kv = want.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList();
            ops.add(Op.Run.of("label " + n.name(), Kube.kubectl("label node " + n.name() + " --overwrite " + Sh.words(kv))));
        }
        ops.addAll(Manifest.place("NVIDIA device plugin " + ctx.cluster().devicePlugin().version(),
            ctx.cluster().devicePlugin().manifest(), path(ctx), "", java.util.function.UnaryOperator.identity()));
        ops.add(Manifest.apply("the device plugin", path(ctx)));
        return ops;
    }

    @Override public List<Probe> verify(HostContext ctx) {
        List<Probe> probes = new ArrayList<>(check(ctx).stream().filter(p -> !p.what().contains("allocatable")).toList());
        probes.add(KubeJson.nodesReady(ctx.inventory().nodes().stream().map(Node::name).toList()).waitingUpTo(CAPACITY_WAIT));
        for (Node n : gpuNodes(ctx)) probes.add(allocatable(n).waitingUpTo(CAPACITY_WAIT));
        return probes;
    }

    /**
     * allocatable nvidia.com/gpu of a node equals its nvidia-smi count (a fact learned at preflight); when it does
     * not, the message names the node's device plugin pod and its state, and what to check.
     */
    static Probe allocatable(Node n) {
        return Probe.of("node " + n.name() + " allocatable nvidia.com/gpu = its nvidia-smi count",
                NODES_THEN_PODS, r -> Optional.empty())
            .judgedWithFacts((r, facts) -> {
                if (!r.ok()) return Optional.of("kubectl failed: " + r.tail(2));
                String[] parts = r.stdout().split("(?m)^@@@\n", 2);
                var node = KubeJson.node(KubeJson.nodes(parts[0]), n.name());
                if (node.isEmpty()) return Optional.of("node " + n.name() + " not found (kubectl get nodes)");
                String have = node.get().path("status").path("allocatable").path("nvidia.com/gpu").asText("0");
                String want = facts.get(gpuCountFact(n)).orElse("?");
                if (have.equals(want)) return Optional.empty();
                String pod = parts.length < 2 ? "" : pluginPod(KubeJson.podList(parts[1]), n.name());
                return Optional.of("allocatable nvidia.com/gpu is " + have + ", nvidia-smi counts " + want + "; " + pod
                    + " — check that nvidia is the default runtime on " + n.name() + " (gpuctl verify --hosts " + n.name() + ")");
            });
    }

    /** "device plugin pod kube-system/NAME is CrashLoopBackOff (kubectl -n kube-system logs NAME)", or that there is none. */
    static String pluginPod(com.fasterxml.jackson.databind.JsonNode pods, String node) {
        for (var p : pods.path("items")) {
            String name = p.path("metadata").path("name").asText();
            if (!name.contains("nvidia-device-plugin") || !node.equals(p.path("spec").path("nodeName").asText())) continue;
            String ns = p.path("metadata").path("namespace").asText();
            String state = p.path("status").path("phase").asText("Unknown");
            for (var c : p.path("status").path("containerStatuses")) {
                String reason = c.path("state").path("waiting").path("reason").asText("");
                if (!reason.isEmpty()) state = reason;
            }
            return "device plugin pod " + ns + "/" + name + " is " + state + " (kubectl -n " + ns + " logs " + name + ")";
        }
        return "no device plugin pod runs on " + node;
    }
}
