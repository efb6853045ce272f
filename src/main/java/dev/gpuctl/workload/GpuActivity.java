package dev.gpuctl.workload;

import dev.gpuctl.text.Json;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.hostfiles.DeviceCheckpoint;
import dev.gpuctl.gpu.GpuSamples;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which pod holds which GPU, and whether it uses it: each GPU's utilisation and memory over a sampled window
 * ({@link GpuSamples}) beside the pods the kubelet gave it to ({@link DeviceCheckpoint}, matched to the cluster's pods
 * by UID). A GPU is <b>idle</b> when a running pod holds it and its utilization.gpu was at most
 * {@value #IDLE_MAX_UTIL} % in every sample of the window: memory may be held (a loaded model, a CUDA context), but no
 * kernel ran. Pure: text in, records out.
 */
public final class GpuActivity {
    /** The highest utilization.gpu (%) a held GPU may show in any sample and still count as idle. */
    public static final int IDLE_MAX_UTIL = 0;
    private static final ObjectMapper JSON = Json.MAPPER;

    private GpuActivity() {}

    /** A pod of the cluster, as the checkpoint's PodUID names it. */
    public record PodRef(String namespace, String name) {
        @Override public String toString() { return namespace + "/" + name; }
    }

    /**
     * One GPU over the window.
     *
     * @param pods  the pods holding it (more than one when the GPU is shared by time-slicing or MPS); empty: free
     * @param idle  held by a pod and no sample above {@link #IDLE_MAX_UTIL} %
     */
    public record GpuUse(String node, int index, String uuid, List<PodRef> pods, int samples, Integer utilMax,
                         Integer utilMean, Long memoryUsedMib, Long memoryTotalMib, boolean idle) {
        public GpuUse {
            pods = List.copyOf(pods);
        }
    }

    /** One GPU node: its GPUs, or why they could not be sampled ("" when they were). */
    public record NodeUse(String node, List<GpuUse> gpus, String problem) {
        public NodeUse {
            gpus = List.copyOf(gpus);
        }
    }

    public record Report(Duration window, List<NodeUse> nodes) {
        public Report {
            nodes = List.copyOf(nodes);
        }

        /** The GPUs held by a pod but idle over the window, node by node. */
        public List<GpuUse> idle() { return nodes.stream().flatMap(n -> n.gpus().stream()).filter(GpuUse::idle).toList(); }
    }

    /**
     * The cluster's pods that can hold devices (bound, not finished) by UID, from {@code kubectl get pods -A}'s
     * fields as a {@code -o json}-shaped list ({@code metadata.uid} among them).
     *
     * @throws IllegalArgumentException when the text is no such list
     */
    public static Map<String, PodRef> livePods(String podsJson) {
        JsonNode doc;
        try {
            doc = JSON.readTree(podsJson);
        } catch (IOException e) {
            throw new IllegalArgumentException("kubectl get pods -o json printed no JSON", e);
        }
        if (doc == null || !doc.path("items").isArray()) throw new IllegalArgumentException("kubectl get pods -o json printed no list of items");
        Map<String, PodRef> out = new LinkedHashMap<>();
        for (JsonNode p : doc.path("items")) {
            String uid = p.path("metadata").path("uid").asText("");
            String phase = p.path("status").path("phase").asText("Pending");
            if (uid.isEmpty() || phase.equals("Succeeded") || phase.equals("Failed")) continue;
            out.put(uid, new PodRef(p.path("metadata").path("namespace").asText("default"), p.path("metadata").path("name").asText()));
        }
        return out;
    }

    /**
     * One node's GPUs: the window's samples per GPU, each beside the live pods the checkpoint gives it to (entries of
     * pods that are gone or finished are left out: the kubelet drops them only at its next allocation). The problem
     * is nvidia-smi's, when it printed something that is no sample.
     */
    public static NodeUse node(String node, GpuSamples.Window window, List<DeviceCheckpoint.Entry> checkpoint, Map<String, PodRef> livePods) {
        Map<String, Set<PodRef>> holders = new LinkedHashMap<>();
        for (DeviceCheckpoint.Entry e : checkpoint) {
            if (!e.resource().startsWith("nvidia.com/")) continue;
            PodRef pod = livePods.get(e.podUid());
            if (pod == null) continue;
            for (String uuid : e.devices()) holders.computeIfAbsent(uuid, k -> new LinkedHashSet<>()).add(pod);
        }
        List<GpuUse> gpus = new ArrayList<>();
        for (GpuSamples.Gpu g : window.gpus()) {
            List<PodRef> pods = new ArrayList<>(holders.getOrDefault(g.uuid(), Set.of()));
            pods.sort(Comparator.comparing(PodRef::toString));
            gpus.add(new GpuUse(node, g.index(), g.uuid(), pods, g.samples(), g.utilMax(), g.utilMean(), g.memoryUsedMib(),
                g.memoryTotalMib(), idle(!pods.isEmpty(), g)));
        }
        gpus.sort(Comparator.comparingInt(GpuUse::index));
        String problem = window.problem().orElse(window.samples().isEmpty() ? "nvidia-smi printed no sample" : "");
        return new NodeUse(node, gpus, problem);
    }

    /** The idle rule: held, sampled, and no sample above {@link #IDLE_MAX_UTIL} % (a GPU whose utilisation is N/A is never idle). */
    public static boolean idle(boolean held, GpuSamples.Gpu g) {
        return held && g.samples() > 0 && g.utilMax() != null && g.utilMax() <= IDLE_MAX_UTIL;
    }

    /** A node whose GPUs could not be sampled, and why. */
    public static NodeUse failed(String node, String why) {
        return new NodeUse(node, List.of(), why);
    }
}
