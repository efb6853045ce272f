package dev.gpuctl.kube;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.text.Json;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the master's cluster checks read of the cluster, asked in one kubectl call ({@link #COMMAND}): every node's
 * name, labels, gpuctl's GPU record annotation, cordon flag, taints, allocatable resources and conditions, and every
 * pod's namespace, name, node, phase, waiting reasons, status times, owner kind and GPU limits. Only those fields are asked for (a jsonpath per kind), so a
 * pod's environment or a node's other annotations never reach a log. Parsed once per answer into records that the
 * checks of several steps read (labels, capacity, the device plugin's pods, the CNI's pods, readiness, cordons,
 * taints, the GPU record). Pure: text in, records out.
 *
 * @param nodes the cluster's nodes, in kubectl's order
 * @param pods  the pods of every namespace, in kubectl's order
 */
public record ClusterView(List<NodeState> nodes, List<PodState> pods) {
    private static final ObjectMapper JSON = Json.MAPPER;

    /** The node annotation in which gpuctl keeps the GPUs a node had at bootstrap ("INDEX:UUID,..."). */
    public static final String GPU_RECORD_ANNOTATION = "gpuctl.dev/gpus-at-bootstrap";
    /** The node annotation in which {@code gpuctl repair} keeps the node's last repair ({@link dev.gpuctl.gpu.RepairPlan.LastRepair}). */
    public static final String LAST_REPAIR_ANNOTATION = "gpuctl.dev/last-repair";

    /** A node's fields, in the order of its line (after the {@code N} tag); dots inside a key are escaped as jsonpath wants. */
    public static final List<String> NODE_FIELDS = List.of("metadata.name", "metadata.labels",
        "metadata.annotations." + GPU_RECORD_ANNOTATION.replace(".", "\\."), "spec.unschedulable", "spec.taints",
        "status.allocatable", "status.conditions", "metadata.annotations." + LAST_REPAIR_ANNOTATION.replace(".", "\\."));

    /** A pod's fields, in the order of its line (after the {@code P} tag). */
    public static final List<String> POD_FIELDS = List.of("metadata.namespace", "metadata.name", "spec.nodeName", "status.phase",
        "status.containerStatuses[*].state.waiting.reason", "status.conditions[*].lastTransitionTime",
        "status.containerStatuses[*].state.running.startedAt", "status.containerStatuses[*].lastState.terminated.finishedAt",
        "metadata.ownerReferences[0].kind", "spec.containers[*].resources.limits.nvidia\\.com/gpu");

    /** The jsonpath: one tab-separated line per node, tagged N, then one per pod, tagged P. */
    public static final String JSONPATH = section("Node", "N", NODE_FIELDS) + section("Pod", "P", POD_FIELDS);

    /** The one kubectl call (on the master, with admin.conf). */
    public static final String COMMAND = Kube.kubectl("get nodes,pods -A -o 'jsonpath=" + JSONPATH + "'");

    public ClusterView {
        nodes = List.copyOf(nodes);
        pods = List.copyOf(pods);
    }

    /**
     * A node as the checks read it.
     *
     * @param gpuRecord the value of {@link #GPU_RECORD_ANNOTATION}, empty when the node has none
     * @param ready     the Ready condition, empty when the node has none yet
     * @param lastRepair the value of {@link #LAST_REPAIR_ANNOTATION}, empty when the node was never repaired
     */
    public record NodeState(String name, Map<String, String> labels, Optional<String> gpuRecord, boolean unschedulable,
                            List<String> taintKeys, Map<String, String> allocatable, Optional<Condition> ready, Optional<String> lastRepair) {
        public NodeState {
            labels = Map.copyOf(labels);
            taintKeys = List.copyOf(taintKeys);
            allocatable = Map.copyOf(allocatable);
        }

        public NodeState(String name, Map<String, String> labels, Optional<String> gpuRecord, boolean unschedulable,
                         List<String> taintKeys, Map<String, String> allocatable, Optional<Condition> ready) {
            this(name, labels, gpuRecord, unschedulable, taintKeys, allocatable, ready, Optional.empty());
        }

        /** The allocatable amount of a resource as kubectl prints it, "0" when the node advertises none. */
        public String allocatable(String resource) { return allocatable.getOrDefault(resource, "0"); }
    }

    /**
     * A node condition: whether its status is True, with kubelet's reason and message, and since when (its
     * lastTransitionTime, empty when kubectl gave none or not an RFC 3339 time).
     */
    public record Condition(boolean isTrue, String reason, String message, Optional<Instant> since) {
        public Condition(boolean isTrue, String reason, String message) { this(isTrue, reason, message, Optional.empty()); }
    }

    /**
     * A pod as the checks read it.
     *
     * @param node           the node it is bound to, "" while it is not scheduled
     * @param waitingReasons the reasons its containers are waiting (CrashLoopBackOff, ImagePullBackOff, ...)
     * @param statusTimes    every time its status names (its conditions' transitions, its containers' starts and last
     *                       exits): the newest is when the kubelet last said something new of it
     * @param ownerKind      its first owner's kind (DaemonSet, ReplicaSet, Job, ...), "" for a bare pod
     * @param gpuLimits      each container's {@code nvidia.com/gpu} limit that is set, as kubectl printed it
     */
    public record PodState(String namespace, String name, String node, String phase, List<String> waitingReasons, List<Instant> statusTimes,
                           String ownerKind, List<String> gpuLimits) {
        public PodState {
            waitingReasons = List.copyOf(waitingReasons);
            statusTimes = List.copyOf(statusTimes);
            gpuLimits = List.copyOf(gpuLimits);
        }

        public PodState(String namespace, String name, String node, String phase, List<String> waitingReasons, List<Instant> statusTimes) {
            this(namespace, name, node, phase, waitingReasons, statusTimes, "", List.of());
        }

        public PodState(String namespace, String name, String node, String phase, List<String> waitingReasons) {
            this(namespace, name, node, phase, waitingReasons, List.of());
        }

        /** Running with a container that is given GPUs (an {@code nvidia.com/gpu} limit above 0). */
        public boolean runningWithGpus() {
            return phase.equals("Running") && gpuLimits.stream().anyMatch(g -> !g.isEmpty() && !g.equals("0"));
        }

        /** The newest time its status names; empty when it names none. */
        public Optional<Instant> statusTime() { return statusTimes.stream().max(Instant::compareTo); }

        /** Its last container's waiting reason when one waits, else its phase ("Unknown" when kubectl gave none). */
        public String state() {
            if (!waitingReasons.isEmpty()) return waitingReasons.get(waitingReasons.size() - 1);
            return phase.isEmpty() ? "Unknown" : phase;
        }
    }

    public Optional<NodeState> node(String name) {
        return nodes.stream().filter(n -> n.name().equals(name)).findFirst();
    }

    public List<PodState> podsIn(String namespace) {
        return pods.stream().filter(p -> p.namespace().equals(namespace)).toList();
    }

    /**
     * The view kubectl's answer to {@link #COMMAND} describes.
     *
     * @throws IllegalArgumentException when a line is not a tagged line with one value per field, or a value that must
     *                                  be JSON (labels, taints, allocatable, conditions) is not
     */
    public static ClusterView parse(String output) {
        List<NodeState> nodes = new ArrayList<>();
        List<PodState> pods = new ArrayList<>();
        int n = 0;
        for (String line : output.split("\n", -1)) {
            n++;
            if (line.isEmpty()) continue;
            String[] f = line.split("\t", -1);
            if (f[0].equals("N") && f.length == NODE_FIELDS.size() + 1) {
                nodes.add(new NodeState(f[1], strings(json(f[2], "labels", n)), Optional.of(f[3]).filter(s -> !s.isBlank()),
                    f[4].equals("true"), taintKeys(json(f[5], "taints", n)), strings(json(f[6], "allocatable", n)),
                    ready(json(f[7], "conditions", n)), Optional.of(f[8]).filter(s -> !s.isBlank())));
            } else if (f[0].equals("P") && f.length == POD_FIELDS.size() + 1) {
                List<Instant> times = new ArrayList<>();
                for (int i = 6; i <= 8; i++) times.addAll(instants(f[i]));
                pods.add(new PodState(f[1], f[2], f[3], f[4], f[5].isBlank() ? List.of() : List.of(f[5].strip().split(" +")), times,
                    f[9].strip(), f[10].isBlank() ? List.of() : List.of(f[10].strip().split(" +"))));
            } else {
                throw new IllegalArgumentException("kubectl's line " + n + " is not a node (N + " + NODE_FIELDS.size()
                    + " fields) or a pod (P + " + POD_FIELDS.size() + " fields): " + shortened(line));
            }
        }
        return new ClusterView(nodes, pods);
    }

    private static String section(String kind, String tag, List<String> fields) {
        StringBuilder sb = new StringBuilder("{range .items[?(@.kind==\"" + kind + "\")]}" + tag);
        for (String f : fields) sb.append("{\"\\t\"}{.").append(f).append('}');
        return sb.append("{\"\\n\"}{end}").toString();
    }

    private static JsonNode json(String value, String what, int line) {
        if (value.isEmpty()) return JSON.missingNode();
        try {
            return JSON.readTree(value);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("kubectl's line " + line + ": the " + what + " are not JSON: " + shortened(value), e);
        }
    }

    private static Map<String, String> strings(JsonNode map) {
        Map<String, String> out = new LinkedHashMap<>();
        map.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }

    private static List<String> taintKeys(JsonNode taints) {
        List<String> keys = new ArrayList<>();
        for (JsonNode t : taints) keys.add(t.path("key").asText());
        return keys;
    }

    private static Optional<Condition> ready(JsonNode conditions) {
        for (JsonNode c : conditions) {
            if (c.path("type").asText().equals("Ready")) {
                return Optional.of(new Condition(c.path("status").asText().equals("True"), c.path("reason").asText(), c.path("message").asText(),
                    instants(c.path("lastTransitionTime").asText("")).stream().findFirst()));
            }
        }
        return Optional.empty();
    }

    /** The RFC 3339 times in a space-separated jsonpath list; what is no such time is left out. */
    private static List<Instant> instants(String list) {
        List<Instant> out = new ArrayList<>();
        for (String t : list.strip().split(" +")) {
            if (t.isEmpty()) continue;
            try {
                out.add(Instant.parse(t));
            } catch (DateTimeParseException e) {
                // not a time: says nothing of when
            }
        }
        return out;
    }

    private static String shortened(String s) {
        return s.length() > 120 ? s.substring(0, 117) + "..." : s;
    }
}
