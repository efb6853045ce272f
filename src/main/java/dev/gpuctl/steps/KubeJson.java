package dev.gpuctl.steps;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Reads {@code kubectl get -o json} output (a List) for the cluster probes. */
final class KubeJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private KubeJson() {}

    static JsonNode parse(String text) {
        try {
            return JSON.readTree(text);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("kubectl printed no JSON: " + Probe.oneLine(text), e);
        }
    }

    /** Pods of a namespace (optionally a label selector), all Running and at least one. */
    static Probe podsRunning(String what, String namespace, String selector) {
        String sel = selector.isEmpty() ? "" : " -l " + Sh.quote(selector);
        return Probe.of(what, Kube.kubectl("get pods -n " + namespace + sel + " -o json"), r -> {
            if (!r.ok()) return Optional.of("kubectl failed: " + r.tail(2));
            List<String> notRunning = new ArrayList<>();
            JsonNode items = parse(r.stdout()).path("items");
            for (JsonNode pod : items) {
                String phase = pod.path("status").path("phase").asText();
                if (!phase.equals("Running")) notRunning.add(pod.path("metadata").path("name").asText() + " " + phase);
            }
            if (items.isEmpty()) return Optional.of("no pods in " + namespace);
            return notRunning.isEmpty() ? Optional.empty() : Optional.of("not running: " + String.join(", ", notRunning));
        });
    }
}
