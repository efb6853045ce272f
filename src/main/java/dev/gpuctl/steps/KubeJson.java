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

    /** The item named {@code name} in a list (kubectl get nodes -o json), if it is there. */
    static Optional<JsonNode> node(JsonNode list, String name) {
        for (JsonNode item : list.path("items")) {
            if (name.equals(item.path("metadata").path("name").asText())) return Optional.of(item);
        }
        return Optional.empty();
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

    /** Every node of the list is registered and Ready (nodes join after the pod network: missing ones are fine). */
    static Probe nodesReady(List<String> names) {
        return Probe.of("every node that joined is Ready", Kube.kubectl("get nodes -o json"), r -> {
            if (!r.ok()) return Optional.of("kubectl failed: " + r.tail(2));
            List<String> notReady = new ArrayList<>();
            for (JsonNode n : parse(r.stdout()).path("items")) {
                String name = n.path("metadata").path("name").asText();
                if (!names.contains(name)) continue;
                boolean ready = false;
                String why = "no Ready condition";
                for (JsonNode c : n.path("status").path("conditions")) {
                    if (c.path("type").asText().equals("Ready")) {
                        ready = c.path("status").asText().equals("True");
                        why = c.path("reason").asText() + ": " + c.path("message").asText();
                    }
                }
                if (!ready) notReady.add(name + " (" + why + ")");
            }
            return notReady.isEmpty() ? Optional.empty() : Optional.of("not Ready: " + String.join(", ", notReady));
        });
    }
}
