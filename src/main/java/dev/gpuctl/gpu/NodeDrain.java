package dev.gpuctl.gpu;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.kube.KubeFields;
import dev.gpuctl.text.ShellWords;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What a GPU-aware drain decides, over typed facts about the pods on a node. {@code kubectl drain} evicts every pod a
 * controller owns, Job pods included, so a training run on the node would die: the drain first waits for the pods
 * that hold GPUs and run to completion (a Job's pods, or bare pods), and evicts them only when told to (--force).
 * Everything else is left to {@code kubectl drain}, PodDisruptionBudgets included. Pure: facts in, decisions and
 * messages out.
 */
public final class NodeDrain {
    private NodeDrain() {}

    /** The fields of a pod the drain reads ({@link KubeFields#PODS}: where it runs, its state, owner, resources). */
    public static final KubeFields.Query PODS = KubeFields.PODS;

    /**
     * One pod, as the drain sees it.
     *
     * @param ownerKind the kind of its controller ("Job", "ReplicaSet", "DaemonSet", "Node" for a static pod's
     *                  mirror), empty for a bare pod
     * @param gpus      whole nvidia.com/gpu it asks for ({@link GpuRequests#podGpus})
     */
    public record Pod(String namespace, String name, String node, String phase, String ownerKind, String ownerName, int gpus) {
        public String ref() { return namespace + "/" + name; }

        /** Succeeded or Failed: nothing runs any more, nothing to wait for or evict. */
        public boolean finished() { return phase.equals("Succeeded") || phase.equals("Failed"); }
    }

    /** The pods of a list shaped like {@code kubectl get pods -o json}'s (or {@link #PODS}' answer folded back). */
    public static List<Pod> pods(JsonNode list) {
        List<Pod> out = new ArrayList<>();
        for (JsonNode p : list.path("items")) {
            JsonNode md = p.path("metadata");
            String kind = "";
            String owner = "";
            for (JsonNode o : md.path("ownerReferences")) {
                if (kind.isEmpty() || o.path("controller").asBoolean(false)) {
                    kind = o.path("kind").asText("");
                    owner = o.path("name").asText("");
                }
            }
            out.add(new Pod(md.path("namespace").asText("default"), md.path("name").asText(), p.path("spec").path("nodeName").asText(""),
                p.path("status").path("phase").asText("Pending"), kind, owner, GpuRequests.podGpus(p.path("spec"))));
        }
        return out;
    }

    /**
     * True for a pod the drain must not evict unless forced: it holds GPUs, still runs, and runs to completion (owned
     * by a Job, or by nothing: a bare pod is nobody's to restart). A Deployment's or StatefulSet's GPU pod is a
     * service that its controller starts again elsewhere: kubectl drain evicts it, PodDisruptionBudgets permitting.
     */
    public static boolean guarded(Pod p) {
        return p.gpus() > 0 && !p.finished() && (p.ownerKind().equals("Job") || p.ownerKind().isEmpty());
    }

    /**
     * True for a pod that a drain of its node has to move: it still runs and is neither a DaemonSet's (kubectl drain
     * --ignore-daemonsets leaves those: the DaemonSet ignores cordons) nor a static pod's mirror (not deletable
     * through the API server).
     */
    public static boolean toEvict(Pod p) {
        return !p.finished() && !p.ownerKind().equals("DaemonSet") && !p.ownerKind().equals("Node");
    }

    /** The guarded pods on each of {@code nodes} that has any, in the order of {@code nodes}. */
    public static Map<String, List<Pod>> guardedOn(List<Pod> pods, Collection<String> nodes) {
        Map<String, List<Pod>> out = new LinkedHashMap<>();
        for (String n : nodes) {
            List<Pod> on = pods.stream().filter(p -> p.node().equals(n) && guarded(p)).toList();
            if (!on.isEmpty()) out.put(n, on);
        }
        return out;
    }

    /** The pods still to evict on each of {@code nodes} that has any. */
    public static Map<String, List<Pod>> toEvictOn(List<Pod> pods, Collection<String> nodes) {
        Map<String, List<Pod>> out = new LinkedHashMap<>();
        for (String n : nodes) {
            List<Pod> on = pods.stream().filter(p -> p.node().equals(n) && toEvict(p)).toList();
            if (!on.isEmpty()) out.put(n, on);
        }
        return out;
    }

    /** "team-a/train-42 on 4 GPUs", several joined by ", ". */
    public static String describe(List<Pod> pods) {
        return pods.stream().map(p -> p.ref() + " on " + p.gpus() + (p.gpus() == 1 ? " GPU" : " GPUs"))
            .collect(Collectors.joining(", "));
    }

    private static final String ADVICE = "; re-run later, or with --force to evict ";

    /** What a drain that gave up left on a node: "h3: still runs team-a/train-42 on 4 GPUs; re-run later, or with --force to evict it". */
    public static String left(String node, List<Pod> pods) {
        return node + ": still runs " + describe(pods) + ADVICE + (pods.size() == 1 ? "it" : "them");
    }

    /** {@link #left} lines as a wait's progress line: what still runs, without the advice, on one line ("; " between nodes). */
    public static String withoutAdvice(String left) {
        return left.lines().map(l -> {
            int i = l.indexOf(ADVICE);
            return i < 0 ? l : l.substring(0, i);
        }).collect(Collectors.joining("; "));
    }

    /** Every node's {@link #left} line, one a line; empty when nothing is left. */
    public static String left(Map<String, List<Pod>> guarded) {
        return guarded.entrySet().stream().map(e -> left(e.getKey(), e.getValue())).collect(Collectors.joining("\n"));
    }

    /** What a node still has to evict: "h3: 2 pods to evict (default/web-1, default/web-2)". */
    public static String pending(String node, List<Pod> pods) {
        return node + ": " + pods.size() + (pods.size() == 1 ? " pod" : " pods") + " to evict ("
            + pods.stream().map(Pod::ref).collect(Collectors.joining(", ")) + ")";
    }

    /** A duration as a Go duration that kubectl's flags read, in whole seconds ("600s"; at least 1s). */
    public static String goDuration(Duration d) {
        return Math.max(1, (d.toMillis() + 999) / 1000) + "s";
    }

    /**
     * kubectl drain's arguments for one node: DaemonSet pods left alone, emptyDir data deleted with its pod, evictions
     * (which respect PodDisruptionBudgets) retried until {@code timeout}; {@code force} also deletes bare pods.
     */
    public static String kubectlDrainArgs(String node, Duration timeout, boolean force) {
        return "drain " + ShellWords.quote(node) + " --ignore-daemonsets --delete-emptydir-data --timeout=" + goDuration(timeout)
            + (force ? " --force" : "");
    }

    /** "worker-2 is cordoned (SchedulingDisabled): no new pods there; `gpuctl uncordon worker-2` ends its maintenance". */
    public static String cordonedProblem(List<String> nodes) {
        String list = String.join(", ", nodes);
        return list + (nodes.size() == 1 ? " is" : " are") + " cordoned (SchedulingDisabled): no new pods there; `gpuctl uncordon "
            + String.join(" ", nodes) + "` ends the maintenance";
    }
}
