package dev.gpuctl.workload;

import dev.gpuctl.text.Json;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.gpu.GpuRequests;
import dev.gpuctl.gpu.NvidiaSmi;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Who holds which GPU: the cluster's nodes and pods ({@code kubectl get nodes -o json}, {@code kubectl get pods -A
 * -o json}) and what each GPU node's nvidia-smi says, folded into one {@link Report}. Pure: text in, records out.
 *
 * <p>A pod holds GPUs when it is bound to a node ({@code spec.nodeName}) and not finished (phase neither Succeeded
 * nor Failed), as the scheduler counts it. Its GPUs are {@code nvidia.com/gpu} of its containers' limits (requests
 * where limits do not say; for extended resources they must be equal), at least the largest init container's.
 * A pod that asks for GPUs and is bound to no node is waiting; its reason is the scheduler's message.
 */
public final class GpuUsage {
    public static final String RESOURCE = GpuRequests.RESOURCE;
    private static final ObjectMapper JSON = Json.MAPPER;

    private GpuUsage() {}

    /** One pod that holds (or waits for) GPUs. job is the owning Job's name, "" when a Job does not own it. */
    public record PodGpus(String namespace, String name, String job, int gpus, String phase, String node,
                          Optional<Instant> started, String reason, Map<String, Integer> mig) {
        /** mig: MIG devices per resource (nvidia.com/mig-PROFILE, MIG strategy mixed), empty when it asks for none. */
        public PodGpus {
            mig = Collections.unmodifiableMap(new TreeMap<>(mig));
        }

        public PodGpus(String namespace, String name, String job, int gpus, String phase, String node,
                       Optional<Instant> started, String reason) {
            this(namespace, name, job, gpus, phase, node, started, reason, Map.of());
        }

        public Optional<Duration> age(Instant now) { return started.map(s -> Duration.between(s, now)); }
    }

    /** One MIG resource of a node (MIG strategy mixed): what the device plugin offers, what pods hold. */
    public record MigDevices(String resource, int allocatable, int allocated) {
        /** allocatable minus allocated, never below 0. */
        public int free() { return Math.max(0, allocatable - allocated); }

        /** The profile: "1g.18gb" of nvidia.com/mig-1g.18gb. */
        public String profile() { return resource.substring(GpuRequests.MIG_PREFIX.length()); }
    }

    /**
     * One node that has GPUs: in the inventory with {@code gpu: true}, or offering nvidia.com/gpu in the cluster.
     *
     * @param inCluster   registered as a node of the cluster
     * @param gpus        what the node's nvidia-smi listed (empty when it could not be asked, see problem)
     * @param problem     why nvidia-smi's answer is missing or partial ("" when it answered)
     * @param reachable   false when gpuctl could not reach the node to ask nvidia-smi
     * @param allocatable nvidia.com/gpu the node offers to the scheduler
     * @param allocated   nvidia.com/gpu of the pods bound to it that are not finished
     * @param mig         each nvidia.com/mig-PROFILE resource it offers or its pods hold (MIG strategy mixed), by name
     */
    public record NodeGpus(String name, boolean inCluster, List<NvidiaSmi.Gpu> gpus, String problem, boolean reachable,
                           int allocatable, int allocated, List<PodGpus> pods, List<MigDevices> mig) {
        public NodeGpus {
            gpus = List.copyOf(gpus);
            pods = List.copyOf(pods);
            mig = List.copyOf(mig);
        }

        public NodeGpus(String name, boolean inCluster, List<NvidiaSmi.Gpu> gpus, String problem, boolean reachable,
                        int allocatable, int allocated, List<PodGpus> pods) {
            this(name, inCluster, gpus, problem, reachable, allocatable, allocated, pods, List.of());
        }

        /** allocatable minus allocated, never below 0. */
        public int free() { return Math.max(0, allocatable - allocated); }

        /** The GPU model(s) nvidia-smi named: "NVIDIA H200", "2x NVIDIA H200 + 1x NVIDIA A100", or "" when unknown. */
        public String model() {
            Map<String, Integer> count = new LinkedHashMap<>();
            for (NvidiaSmi.Gpu g : gpus) count.merge(g.name() == null ? "unknown GPU" : g.name(), 1, Integer::sum);
            if (count.size() == 1) return count.keySet().iterator().next();
            List<String> parts = new ArrayList<>();
            count.forEach((model, n) -> parts.add(n + "x " + model));
            return String.join(" + ", parts);
        }
    }

    public record Report(List<NodeGpus> nodes, List<PodGpus> waiting) {
        public Report {
            nodes = List.copyOf(nodes);
            waiting = List.copyOf(waiting);
        }

        public int gpus() { return nodes.stream().mapToInt(n -> n.gpus().size()).sum(); }
        public int allocatable() { return nodes.stream().mapToInt(NodeGpus::allocatable).sum(); }
        public int allocated() { return nodes.stream().mapToInt(NodeGpus::allocated).sum(); }
        public int free() { return nodes.stream().mapToInt(NodeGpus::free).sum(); }

        /** Nodes that could not be reached to ask nvidia-smi. */
        public List<NodeGpus> unreachable() { return nodes.stream().filter(n -> !n.reachable()).toList(); }
    }

    /** What one GPU node's nvidia-smi said, or why it could not be asked. */
    public record Smi(NvidiaSmi.GpuScan scan, boolean reachable) {
        public static Smi answered(NvidiaSmi.GpuScan scan) { return new Smi(scan, true); }
        public static Smi failed(String why, boolean reachable) { return new Smi(new NvidiaSmi.GpuScan(List.of(), Optional.of(why)), reachable); }
    }

    /**
     * The report. {@code gpuNodes}: the inventory's GPU nodes, in its order (they are listed even when they did not
     * join); cluster nodes that offer nvidia.com/gpu or hold GPU pods follow, sorted by name.
     *
     * @param nodesJson output of {@code kubectl get nodes -o json}
     * @param podsJson  output of {@code kubectl get pods -A -o json}
     * @param smi       nvidia-smi's answer per node name (missing: not asked)
     * @throws IllegalArgumentException when kubectl's output is not a JSON list
     */
    public static Report of(List<String> gpuNodes, String nodesJson, String podsJson, Map<String, Smi> smi) {
        Map<String, Integer> allocatable = allocatable(nodesJson);
        Map<String, Map<String, Integer>> migAllocatable = migAllocatable(nodesJson);
        Map<String, List<PodGpus>> byNode = new LinkedHashMap<>();
        List<PodGpus> waiting = new ArrayList<>();
        for (JsonNode p : items(podsJson, "get pods")) {
            int gpus = podGpus(p.path("spec"));
            Map<String, Integer> mig = GpuRequests.podMig(p.path("spec"));
            String phase = p.path("status").path("phase").asText("Pending");
            if ((gpus == 0 && mig.isEmpty()) || phase.equals("Succeeded") || phase.equals("Failed")) continue;
            PodGpus pod = pod(p, gpus, phase, mig);
            if (pod.node().isEmpty()) waiting.add(pod);
            else byNode.computeIfAbsent(pod.node(), k -> new ArrayList<>()).add(pod);
        }
        Set<String> names = new LinkedHashSet<>(gpuNodes);
        allocatable.entrySet().stream().filter(e -> e.getValue() > 0).map(Map.Entry::getKey).sorted().forEach(names::add);
        migAllocatable.entrySet().stream().filter(e -> e.getValue().values().stream().anyMatch(v -> v > 0))
            .map(Map.Entry::getKey).sorted().forEach(names::add);
        byNode.keySet().stream().sorted().forEach(names::add);
        List<NodeGpus> nodes = new ArrayList<>();
        Comparator<PodGpus> order = Comparator.comparing(PodGpus::namespace).thenComparing(PodGpus::name);
        for (String name : names) {
            List<PodGpus> pods = new ArrayList<>(byNode.getOrDefault(name, List.of()));
            pods.sort(order);
            Smi s = smi.get(name);
            List<NvidiaSmi.Gpu> gpus = s == null ? List.of() : s.scan().gpus();
            String problem = s == null ? "" : s.scan().problem().orElse("");
            Map<String, Integer> offered = migAllocatable.getOrDefault(name, Map.of());
            Map<String, Integer> held = new TreeMap<>();
            pods.forEach(p -> p.mig().forEach((r, n) -> held.merge(r, n, Integer::sum)));
            Set<String> resources = new TreeSet<>(held.keySet());
            offered.forEach((r, n) -> { if (n > 0) resources.add(r); });
            List<MigDevices> mig = resources.stream()
                .map(r -> new MigDevices(r, offered.getOrDefault(r, 0), held.getOrDefault(r, 0))).toList();
            nodes.add(new NodeGpus(name, allocatable.containsKey(name), gpus, problem, s == null || s.reachable(),
                allocatable.getOrDefault(name, 0), pods.stream().mapToInt(PodGpus::gpus).sum(), pods, mig));
        }
        waiting.sort(order);
        return new Report(nodes, waiting);
    }

    /** Each node's allocatable nvidia.com/gpu (0 where it offers none), in kubectl's order. */
    public static Map<String, Integer> allocatable(String nodesJson) { return allocatable(nodesJson, RESOURCE); }

    /** Each node's allocatable {@code resource} (nvidia.com/gpu, nvidia.com/mig-1g.18gb; 0 where it offers none). */
    public static Map<String, Integer> allocatable(String nodesJson, String resource) {
        Map<String, Integer> allocatable = new LinkedHashMap<>();
        for (JsonNode n : items(nodesJson, "get nodes")) {
            allocatable.put(n.path("metadata").path("name").asText(), quantity(n.path("status").path("allocatable").path(resource)));
        }
        return allocatable;
    }

    /** Each node's allocatable MIG resources (nvidia.com/mig-PROFILE, MIG strategy mixed), sorted by resource. */
    public static Map<String, Map<String, Integer>> migAllocatable(String nodesJson) {
        Map<String, Map<String, Integer>> all = new LinkedHashMap<>();
        for (JsonNode n : items(nodesJson, "get nodes")) {
            Map<String, Integer> mig = new TreeMap<>();
            n.path("status").path("allocatable").fields().forEachRemaining(e -> {
                if (e.getKey().startsWith(GpuRequests.MIG_PREFIX)) mig.put(e.getKey(), quantity(e.getValue()));
            });
            all.put(n.path("metadata").path("name").asText(), mig);
        }
        return all;
    }

    /**
     * The state of the Job {@code name} in {@code kubectl get jobs -n NS -o json}: "running, 1 active", "Complete",
     * "Failed"; empty when there is no such Job.
     */
    public static Optional<String> jobStatus(String jobsJson, String name) {
        for (JsonNode j : items(jobsJson, "get jobs")) {
            if (!j.path("metadata").path("name").asText().equals(name)) continue;
            for (JsonNode c : j.path("status").path("conditions")) {
                String type = c.path("type").asText();
                if ((type.equals("Complete") || type.equals("Failed")) && c.path("status").asText().equals("True")) return Optional.of(type);
            }
            return Optional.of("running, " + j.path("status").path("active").asInt(0) + " active");
        }
        return Optional.empty();
    }

    private static PodGpus pod(JsonNode p, int gpus, String phase, Map<String, Integer> mig) {
        JsonNode md = p.path("metadata");
        String job = "";
        for (JsonNode o : md.path("ownerReferences")) {
            if (o.path("kind").asText().equals("Job")) job = o.path("name").asText();
        }
        Optional<Instant> started = time(p.path("status").path("startTime")).or(() -> time(md.path("creationTimestamp")));
        String reason = "";
        for (JsonNode c : p.path("status").path("conditions")) {
            if (c.path("type").asText().equals("PodScheduled") && c.path("status").asText().equals("False")) {
                reason = c.path("message").asText(c.path("reason").asText(""));
            }
        }
        return new PodGpus(md.path("namespace").asText("default"), md.path("name").asText(), job, gpus, phase,
            p.path("spec").path("nodeName").asText(""), started, reason, mig);
    }

    /** nvidia.com/gpu a pod spec asks for: {@link GpuRequests#podGpus}. */
    static int podGpus(JsonNode spec) {
        return GpuRequests.podGpus(spec);
    }

    /** A whole-number quantity as Kubernetes writes it: {@link GpuRequests#quantity}. */
    static int quantity(JsonNode q) {
        return GpuRequests.quantity(q);
    }

    /** An RFC 3339 time as the API server writes it; empty when absent or unreadable. */
    static Optional<Instant> time(JsonNode t) {
        try {
            return t.isTextual() && !t.asText().isEmpty() ? Optional.of(Instant.parse(t.asText())) : Optional.empty();
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    private static JsonNode items(String json, String what) {
        JsonNode doc;
        try {
            doc = JSON.readTree(json);
        } catch (IOException e) {
            throw new IllegalArgumentException("kubectl " + what + " -o json printed no JSON: " + firstLine(json), e);
        }
        if (doc == null || !doc.path("items").isArray()) {
            throw new IllegalArgumentException("kubectl " + what + " -o json printed no list of items: " + firstLine(json));
        }
        return doc.path("items");
    }

    private static String firstLine(String s) {
        String t = s.strip();
        int nl = t.indexOf('\n');
        t = nl < 0 ? t : t.substring(0, nl) + " ...";
        return t.length() > 200 ? t.substring(0, 197) + "..." : t;
    }

    /** A duration as kubectl's AGE column writes it: 45s, 3m12s, 2h5m, 3d4h, 2y10d. */
    public static String age(Duration d) {
        long s = d.getSeconds();
        if (s < 0) return "0s";
        if (s < 120) return s + "s";
        long m = s / 60;
        if (m < 10) return s % 60 == 0 ? m + "m" : m + "m" + s % 60 + "s";
        if (m < 180) return m + "m";
        long h = m / 60;
        if (h < 8) return m % 60 == 0 ? h + "h" : h + "h" + m % 60 + "m";
        if (h < 48) return h + "h";
        if (h < 24 * 8) return h % 24 == 0 ? h / 24 + "d" : h / 24 + "d" + h % 24 + "h";
        if (h < 24 * 365 * 2) return h / 24 + "d";
        if (h < 24 * 365 * 8) return h / 24 / 365 + "y" + h / 24 % 365 + "d";
        return h / 24 / 365 + "y";
    }
}
