package dev.gpuctl.kube;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpuctl.text.Json;
import java.io.IOException;
import java.util.List;
import java.util.stream.Stream;

/**
 * The fields of a Kubernetes list that a check needs, asked for by name instead of whole objects: {@code kubectl get
 * ... -o json} carries every pod's environment values and a Job's template, and whatever kubectl prints ends up in a
 * log. A {@link Query} is a kubectl jsonpath that prints one line per item, its fields separated by tabs (a map or
 * list as compact JSON, a string as it is, several matches of a {@code [*]} path separated by spaces, as kubectl
 * prints them); {@link Query#list} folds that output back into a list of the same shape as {@code -o json}'s, holding
 * only those fields, so the code that reads it stays the same. Pure: text in, JSON out.
 */
public final class KubeFields {
    private static final ObjectMapper JSON = Json.MAPPER;

    private KubeFields() {}

    /** The nodes' names, labels, allocatable resources and conditions. */
    public static final Query NODES = new Query(List.of("metadata.name", "metadata.labels", "status.allocatable", "status.conditions"));

    /** What the GPU and pod checks read of a pod: where it runs, its state, what it asks for, who owns it. */
    public static final Query PODS = new Query(List.of("metadata.namespace", "metadata.name", "metadata.creationTimestamp",
        "metadata.ownerReferences", "spec.nodeName", "status.phase", "status.startTime", "status.conditions",
        "status.containerStatuses", "spec.containers[*].resources", "spec.initContainers[*].resources"));

    /** {@link #PODS} and each pod's UID, by which the kubelet's device checkpoint names the pod (gpuctl gpus). */
    public static final Query GPU_PODS = new Query(Stream.concat(PODS.paths().stream(), Stream.of("metadata.uid")).toList());

    /**
     * What gpuctl job list, logs and delete read of a Job: where and since when, its labels, its state and the resources
     * its containers ask for (the template's resources only: its environment is not asked for).
     */
    public static final Query JOB_LIST = new Query(List.of("metadata.namespace", "metadata.name", "metadata.creationTimestamp",
        "metadata.labels", "status.active", "status.succeeded", "status.failed", "status.conditions",
        "spec.template.spec.containers[*].resources"));

    /** What gpuctl queue reads of a Kueue ClusterQueue: its quotas and what its workloads hold. */
    public static final Query CLUSTER_QUEUES = new Query(List.of("metadata.name", "spec.cohort", "spec.resourceGroups",
        "status.flavorsReservation", "status.pendingWorkloads", "status.admittedWorkloads"));

    /** What gpuctl queue reads of a Kueue Workload (its pod template, which holds the environment, is not asked for). */
    public static final Query WORKLOADS = new Query(List.of("metadata.namespace", "metadata.name", "metadata.creationTimestamp",
        "metadata.ownerReferences", "spec.queueName", "spec.priority", "status.conditions", "status.admission"));

    /**
     * What gpuctl usage reads of a Job: its team's queue and its person (labels), when it ran (startTime, completionTime,
     * its conditions) and the GPUs its pods ask for (the template's resources only, not its environment).
     */
    public static final Query USAGE_JOBS = new Query(List.of("metadata.namespace", "metadata.name", "metadata.labels",
        "spec.parallelism", "status.startTime", "status.completionTime", "status.conditions",
        "spec.template.spec.containers[*].resources"));

    /** A Job's name and state (its pod template, which holds the environment, is not asked for). */
    public static final Query JOBS = new Query(List.of("metadata.name", "status.active", "status.conditions"));

    /**
     * Fields of each item of a list, each a dotted path; one step of a path may be {@code name[*]} (every element of
     * a list), followed by one more field of each element.
     */
    public record Query(List<String> paths) {
        public Query {
            paths = List.copyOf(paths);
        }

        /** The jsonpath template: {@code {range .items[*]}{.a}{"\t"}{.b}{"\n"}{end}}. */
        public String jsonpath() {
            StringBuilder sb = new StringBuilder("{range .items[*]}");
            for (int i = 0; i < paths.size(); i++) {
                if (i > 0) sb.append("{\"\\t\"}");
                sb.append("{.").append(paths.get(i)).append('}');
            }
            return sb.append("{\"\\n\"}{end}").toString();
        }

        /** kubectl's output flag, quoted for a POSIX shell. */
        public String outputFlag() { return "-o 'jsonpath=" + jsonpath() + "'"; }

        /**
         * The list kubectl's output describes, as {@code {"items": [...]}} with the asked fields only.
         *
         * @throws IllegalArgumentException when a line does not have one value per field, or a value is not JSON
         *                                  where a map or list is expected
         */
        public ObjectNode list(String output) {
            ObjectNode doc = JSON.createObjectNode();
            ArrayNode items = doc.putArray("items");
            int n = 0;
            for (String line : output.split("\n", -1)) {
                n++;
                if (line.isEmpty()) continue;
                String[] values = line.split("\t", -1);
                if (values.length != paths.size()) {
                    throw new IllegalArgumentException("kubectl's line " + n + " has " + values.length + " fields, expected "
                        + paths.size() + ": " + shortened(line));
                }
                ObjectNode item = items.addObject();
                for (int i = 0; i < values.length; i++) put(item, paths.get(i), values[i]);
            }
            return doc;
        }

        /** {@link #list} as JSON text, for code that reads {@code kubectl -o json}'s text. */
        public String json(String output) {
            return list(output).toString();
        }
    }

    private static void put(ObjectNode item, String path, String value) {
        if (value.isEmpty()) return;
        int star = path.indexOf("[*]");
        if (star < 0) {
            ObjectNode parent = parent(item, path);
            parent.set(last(path), value.startsWith("{") || value.startsWith("[") ? parse(value, path) : JSON.getNodeFactory().textNode(value));
            return;
        }
        String listPath = path.substring(0, star);
        String field = path.substring(star + 4);
        ArrayNode list = parent(item, listPath).putArray(last(listPath));
        try (var values = JSON.readerFor(JsonNode.class).<JsonNode>readValues(value)) {
            while (values.hasNext()) list.addObject().set(field, values.next());
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("kubectl's value of ." + path + " is not JSON: " + shortened(value), e);
        }
    }

    private static JsonNode parse(String value, String path) {
        try {
            return JSON.readTree(value);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("kubectl's value of ." + path + " is not JSON: " + shortened(value), e);
        }
    }

    private static ObjectNode parent(ObjectNode root, String path) {
        String[] parts = path.split("\\.");
        ObjectNode cur = root;
        for (int i = 0; i < parts.length - 1; i++) {
            cur = cur.has(parts[i]) ? (ObjectNode) cur.get(parts[i]) : cur.putObject(parts[i]);
        }
        return cur;
    }

    private static String last(String path) {
        return path.substring(path.lastIndexOf('.') + 1);
    }

    private static String shortened(String s) {
        return s.length() > 120 ? s.substring(0, 117) + "..." : s;
    }
}
