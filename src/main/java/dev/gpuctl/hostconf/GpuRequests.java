package dev.gpuctl.hostconf;

import com.fasterxml.jackson.databind.JsonNode;

/** How many whole GPUs ({@code nvidia.com/gpu}) a pod asks for, read from its spec as the API server returns it. Pure. */
public final class GpuRequests {
    private GpuRequests() {}

    public static final String RESOURCE = "nvidia.com/gpu";

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

    /** A whole-number quantity as Kubernetes writes it ("2" or 2); anything else counts as 0. */
    public static int quantity(JsonNode q) {
        if (q.isIntegralNumber()) return q.asInt();
        String s = q.asText("").strip();
        return s.matches("[0-9]{1,9}") ? Integer.parseInt(s) : 0;
    }
}
