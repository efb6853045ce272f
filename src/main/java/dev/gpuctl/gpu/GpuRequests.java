package dev.gpuctl.gpu;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/** How many whole GPUs ({@code nvidia.com/gpu}) a pod asks for, read from its spec as the API server returns it. Pure. */
public final class GpuRequests {
    private GpuRequests() {}

    public static final String RESOURCE = "nvidia.com/gpu";
    /** The device plugin's resources for MIG devices with MIG strategy mixed: nvidia.com/mig-1g.18gb and the like. */
    public static final String MIG_PREFIX = "nvidia.com/mig-";

    /**
     * nvidia.com/gpu a pod spec asks for: the containers' sum, at least the largest init container's (the scheduler's
     * effective request). A container's limit counts, else its request (an extended resource's request defaults to its
     * limit, and the two must be equal).
     */
    public static int podGpus(JsonNode spec) {
        int sum = 0;
        for (JsonNode c : spec.path("containers")) sum += containerGpus(c);
        int init = 0;
        for (JsonNode c : spec.path("initContainers")) init = Math.max(init, containerGpus(c));
        return Math.max(sum, init);
    }

    private static int containerGpus(JsonNode c) {
        JsonNode r = c.path("resources");
        JsonNode limit = r.path("limits").path(RESOURCE);
        return quantity(limit.isMissingNode() ? r.path("requests").path(RESOURCE) : limit);
    }

    /**
     * MIG devices a pod spec asks for, per resource ({@code nvidia.com/mig-PROFILE}, sorted), counted as
     * {@link #podGpus} counts nvidia.com/gpu: the containers' sum, at least the largest init container's; a limit
     * counts, else the request. Resources asked 0 times are left out.
     */
    public static Map<String, Integer> podMig(JsonNode spec) {
        Map<String, Integer> asked = new TreeMap<>();
        for (JsonNode c : spec.path("containers")) containerMig(c).forEach((k, v) -> asked.merge(k, v, Integer::sum));
        for (JsonNode c : spec.path("initContainers")) containerMig(c).forEach((k, v) -> asked.merge(k, v, Math::max));
        asked.values().removeIf(v -> v == 0);
        return Collections.unmodifiableMap(asked);
    }

    private static Map<String, Integer> containerMig(JsonNode c) {
        Map<String, Integer> m = new TreeMap<>();
        for (String where : new String[] {"requests", "limits"}) {  // a limit overrides its request
            c.path("resources").path(where).fields().forEachRemaining(e -> {
                if (e.getKey().startsWith(MIG_PREFIX)) m.put(e.getKey(), quantity(e.getValue()));
            });
        }
        return m;
    }

    /** A whole-number quantity as Kubernetes writes it ("2" or 2); anything else counts as 0. */
    public static int quantity(JsonNode q) {
        if (q.isIntegralNumber()) return q.asInt();
        String s = q.asText("").strip();
        return s.matches("[0-9]{1,9}") ? Integer.parseInt(s) : 0;
    }
}
