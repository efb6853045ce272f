package dev.gpuctl.kube;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpuctl.text.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;

/**
 * The Kueue objects that let teams share the GPUs (Kueue v1beta1, the API v0.13–v0.15 serve and store), as Jackson
 * trees: a ResourceFlavor per GPU model (its nodeLabels pick the model's nodes), and per team a ClusterQueue in one
 * cohort, a Namespace and a LocalQueue.
 *
 * <p>A team's ClusterQueue has its GPUs as nominalQuota of every model's flavor (0 for a model it has none of, so that it
 * may still borrow those), its borrowingLimit when the team has one, queueing BestEffortFIFO (a job that does not fit
 * waits aside and lets the next one in), and preemption that reclaims lent GPUs: {@code reclaimWithinCohort: Any} (a
 * team under its quota takes its GPUs back from borrowers, whatever their priority; Kueue picks the lowest priority, then
 * the newest admitted, first, and only workloads of queues above their quota), {@code withinClusterQueue: Never} (a
 * team's own jobs never preempt each other) and {@code borrowWithinCohort: LowerPriority} (a borrowing team may preempt
 * only lower-priority borrowers). Kueue refuses a job that asks for a resource its ClusterQueue does not cover, so cpu
 * and memory are covered too, by the flavor {@link #CPU_MEMORY_FLAVOR} with quotas no lab reaches: teams share GPUs.
 */
public final class KueueObjects {
    public static final String API = "kueue.x-k8s.io/v1beta1";
    public static final String GPU = "nvidia.com/gpu";
    /** The node label naming a node's GPU model (inventory gpuModel), which a model's ResourceFlavor selects. */
    public static final String MODEL_LABEL = "gpuctl.dev/gpu-model";
    /** The label a Job names its LocalQueue with. */
    public static final String QUEUE_LABEL = "kueue.x-k8s.io/queue-name";
    /** The namespace label naming the team it belongs to. */
    public static final String TEAM_LABEL = "gpuctl.dev/team";
    public static final String MANAGED_BY = "app.kubernetes.io/managed-by";
    /** The flavor covering cpu and memory (no node labels: any node). */
    public static final String CPU_MEMORY_FLAVOR = "cpu-memory";
    /** cpu and memory quota per team: beyond any lab, so that only GPUs limit admission. */
    public static final String CPU_QUOTA = "100k";
    public static final String MEMORY_QUOTA = "100Pi";

    private KueueObjects() {}

    /** A GPU model's flavor: its name and the node labels that select its nodes (none when the cluster has one unnamed model). */
    public record Flavor(String name, Map<String, String> nodeLabels) {
        public Flavor { nodeLabels = java.util.Collections.unmodifiableMap(new TreeMap<>(nodeLabels)); }
    }

    /**
     * A team's queue: its name (the ClusterQueue's and the LocalQueue's), its namespace, its GPUs per flavor and the most
     * GPUs it may borrow (empty: any).
     */
    public record Queue(String name, String namespace, Map<String, Integer> gpus, OptionalInt borrowingLimit) {
        public Queue { gpus = java.util.Collections.unmodifiableMap(new TreeMap<>(gpus)); }
    }

    public static ObjectNode resourceFlavor(Flavor f) {
        ObjectNode o = object(API, "ResourceFlavor", f.name(), null);
        ObjectNode spec = o.putObject("spec");
        if (!f.nodeLabels().isEmpty()) {
            ObjectNode labels = spec.putObject("nodeLabels");
            f.nodeLabels().forEach(labels::put);
        }
        return o;
    }

    public static ObjectNode cpuMemoryFlavor() {
        ObjectNode o = object(API, "ResourceFlavor", CPU_MEMORY_FLAVOR, null);
        o.putObject("spec");
        return o;
    }

    public static ObjectNode clusterQueue(Queue q, String cohort, List<Flavor> flavors) {
        ObjectNode o = object(API, "ClusterQueue", q.name(), null);
        ObjectNode spec = o.putObject("spec");
        spec.put("cohort", cohort);
        spec.putObject("namespaceSelector").putObject("matchLabels").put("kubernetes.io/metadata.name", q.namespace());
        spec.put("queueingStrategy", "BestEffortFIFO");
        ArrayNode groups = spec.putArray("resourceGroups");
        ObjectNode gpus = groups.addObject();
        gpus.putArray("coveredResources").add(GPU);
        ArrayNode gpuFlavors = gpus.putArray("flavors");
        for (Flavor f : flavors) {
            ObjectNode fl = gpuFlavors.addObject();
            fl.put("name", f.name());
            ObjectNode r = fl.putArray("resources").addObject();
            r.put("name", GPU);
            r.put("nominalQuota", q.gpus().getOrDefault(f.name(), 0));
            q.borrowingLimit().ifPresent(b -> r.put("borrowingLimit", b));
        }
        ObjectNode cpuMemory = groups.addObject();
        cpuMemory.putArray("coveredResources").add("cpu").add("memory");
        ObjectNode cm = cpuMemory.putArray("flavors").addObject();
        cm.put("name", CPU_MEMORY_FLAVOR);
        ArrayNode cmr = cm.putArray("resources");
        cmr.addObject().put("name", "cpu").put("nominalQuota", CPU_QUOTA);
        cmr.addObject().put("name", "memory").put("nominalQuota", MEMORY_QUOTA);
        ObjectNode preemption = spec.putObject("preemption");
        preemption.put("reclaimWithinCohort", "Any");
        preemption.putObject("borrowWithinCohort").put("policy", "LowerPriority");
        preemption.put("withinClusterQueue", "Never");
        return o;
    }

    public static ObjectNode namespace(Queue q) {
        ObjectNode o = object("v1", "Namespace", q.namespace(), null);
        ((ObjectNode) o.get("metadata").get("labels")).put(TEAM_LABEL, q.name());
        return o;
    }

    public static ObjectNode localQueue(Queue q) {
        ObjectNode o = object(API, "LocalQueue", q.name(), q.namespace());
        o.putObject("spec").put("clusterQueue", q.name());
        return o;
    }

    /** Every object, in the order to apply them: flavors, then per team its namespace, ClusterQueue and LocalQueue. */
    public static List<ObjectNode> all(String cohort, List<Flavor> flavors, List<Queue> queues) {
        List<ObjectNode> out = new ArrayList<>();
        flavors.forEach(f -> out.add(resourceFlavor(f)));
        out.add(cpuMemoryFlavor());
        for (Queue q : queues) {
            out.add(namespace(q));
            out.add(clusterQueue(q, cohort, flavors));
            out.add(localQueue(q));
        }
        return out;
    }

    /**
     * How a ClusterQueue in the cluster ({@code kubectl get clusterqueue -o json}) differs from the team's queue gpuctl
     * makes ({@link #clusterQueue}): its cohort, and per GPU flavor its nominalQuota and borrowingLimit; empty when they
     * match. Each difference says the cluster's value and the inventory's.
     */
    public static List<String> differences(com.fasterxml.jackson.databind.JsonNode live, Queue q, String cohort, List<Flavor> flavors) {
        List<String> out = new ArrayList<>();
        String liveCohort = live.path("spec").path("cohort").asText("");
        if (!liveCohort.equals(cohort)) out.add("cohort is '" + liveCohort + "', the inventory's is '" + cohort + "'");
        Map<String, com.fasterxml.jackson.databind.JsonNode> gpu = new TreeMap<>();
        for (com.fasterxml.jackson.databind.JsonNode rg : live.path("spec").path("resourceGroups")) {
            for (com.fasterxml.jackson.databind.JsonNode f : rg.path("flavors")) {
                for (com.fasterxml.jackson.databind.JsonNode r : f.path("resources")) {
                    if (r.path("name").asText().equals(GPU)) gpu.put(f.path("name").asText(), r);
                }
            }
        }
        for (Flavor f : flavors) {
            com.fasterxml.jackson.databind.JsonNode r = gpu.get(f.name());
            int want = q.gpus().getOrDefault(f.name(), 0);
            if (r == null) {
                out.add("no " + GPU + " quota for flavor " + f.name() + ", the inventory's is " + want);
                continue;
            }
            String nominal = r.path("nominalQuota").asText("");
            if (!nominal.equals(String.valueOf(want))) out.add("nominalQuota of " + f.name() + " is " + nominal + ", the inventory's is " + want);
            String limit = r.path("borrowingLimit").isMissingNode() || r.path("borrowingLimit").isNull() ? "none" : r.path("borrowingLimit").asText();
            String wantLimit = q.borrowingLimit().isPresent() ? String.valueOf(q.borrowingLimit().getAsInt()) : "none";
            if (!limit.equals(wantLimit)) out.add("borrowingLimit of " + f.name() + " is " + limit + ", the inventory's is " + wantLimit);
        }
        return out;
    }

    private static ObjectNode object(String apiVersion, String kind, String name, String namespace) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("apiVersion", apiVersion);
        o.put("kind", kind);
        ObjectNode md = o.putObject("metadata");
        md.put("name", name);
        if (namespace != null) md.put("namespace", namespace);
        md.putObject("labels").put(MANAGED_BY, "gpuctl");
        return o;
    }
}
