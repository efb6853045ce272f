package dev.gpuctl.workload;

import dev.gpuctl.text.Json;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.inventory.Inventory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The GPU counts gpuctl last saw: {@code gpuctl gpus} keeps its JSON report in .gpuctl/CLUSTER/gpus.json, and
 * {@code job render}, which opens no connection, checks a job's GPU count against it.
 */
public final class KnownGpus {
    private KnownGpus() {}

    /** What was seen, and when. */
    public record Seen(Map<String, Integer> gpus, String time) {}

    public static Path file(Inventory inv) {
        return inv.stateDir().resolve(inv.cluster().name()).resolve("gpus.json");
    }

    /**
     * Each node's GPU count from a gpuctl.gpus/v1 document: allocatable nvidia.com/gpu, or nvidia-smi's count where
     * the node offered none yet; empty when the text is not such a document.
     */
    public static Optional<Seen> parse(String json) {
        JsonNode doc;
        try {
            doc = Json.MAPPER.readTree(json);
        } catch (IOException e) {
            return Optional.empty();
        }
        if (doc == null || !GpusText.SCHEMA.equals(doc.path("schema").asText())) return Optional.empty();
        Map<String, Integer> gpus = new LinkedHashMap<>();
        for (JsonNode n : doc.path("nodes")) {
            int count = Math.max(n.path("allocatable").asInt(0), n.path("gpus").asInt(0));
            gpus.put(n.path("name").asText(), count);
        }
        return Optional.of(new Seen(gpus, doc.path("time").asText("")));
    }
}
