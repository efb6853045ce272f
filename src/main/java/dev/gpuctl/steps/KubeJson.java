package dev.gpuctl.steps;

import dev.gpuctl.hostconf.Kube;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.hostconf.KubeFields;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The cluster probes' questions and answers: each asks kubectl for the fields it judges ({@link KubeFields}), never
 * whole objects (a pod's environment values would reach the log), and reads the answer as a list shaped like
 * {@code kubectl get -o json}'s.
 */
final class KubeJson {
    private KubeJson() {}

    /** {@code kubectl get nodes}, asking for {@link KubeFields#NODES}. */
    static final String NODES = Kube.kubectl("get nodes " + KubeFields.NODES.outputFlag());

    /** {@code kubectl get pods ARGS}, asking for {@link KubeFields#PODS}. */
    static String pods(String args) { return Kube.kubectl("get pods " + args + " " + KubeFields.PODS.outputFlag()); }

    static JsonNode nodes(String output) { return KubeFields.NODES.list(output); }

    static JsonNode podList(String output) { return KubeFields.PODS.list(output); }

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
        return Probe.of(what, pods("-n " + namespace + sel), r -> {
            if (!r.ok()) return Optional.of("kubectl failed: " + r.tail(2));
            List<String> notRunning = new ArrayList<>();
            JsonNode items = podList(r.stdout()).path("items");
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
        return Probe.of("every node that joined is Ready", NODES, r -> {
            if (!r.ok()) return Optional.of("kubectl failed: " + r.tail(2));
            List<String> notReady = new ArrayList<>();
            for (JsonNode n : nodes(r.stdout()).path("items")) {
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
