package dev.gpuctl.workload;

import dev.gpuctl.text.Json;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The cluster's gpuctl jobs ({@code gpuctl job list}): each Job labelled managed-by gpuctl with its state, the GPUs
 * its pod asks for, the node its newest pod runs or ran on, and its age. Pure: the master's kubectl answers
 * ({@code -o json}-shaped, see {@link dev.gpuctl.kube.KubeFields#JOB_LIST} and {@code PODS}) and the time in,
 * rows and text out.
 */
public final class JobList {
    private static final ObjectMapper JSON = Json.MAPPER;

    private JobList() {}

    /**
     * One job.
     *
     * @param status Complete, Failed (with Kubernetes' reason, e.g. DeadlineExceeded), Running or Pending
     * @param node   the node of its newest pod, "" when no pod was bound to one
     */
    public record Row(String namespace, String name, String status, int gpus, String node, String age, boolean managed) {}

    /** Every Job of {@code jobsJson}, oldest first; pods are matched to their Job by ownerReferences. */
    public static List<Row> rows(String jobsJson, String podsJson, Instant now) {
        JsonNode pods = items(podsJson, "get pods");
        List<Row> rows = new ArrayList<>();
        List<JsonNode> jobs = new ArrayList<>();
        items(jobsJson, "get jobs").forEach(jobs::add);
        jobs.sort(Comparator.comparing((JsonNode j) -> j.path("metadata").path("creationTimestamp").asText())
            .thenComparing(j -> j.path("metadata").path("namespace").asText()).thenComparing(j -> j.path("metadata").path("name").asText()));
        for (JsonNode j : jobs) {
            JsonNode md = j.path("metadata");
            String ns = md.path("namespace").asText("default");
            String name = md.path("name").asText();
            JsonNode newest = null;
            for (JsonNode p : pods) {
                if (!p.path("metadata").path("namespace").asText("default").equals(ns) || !ownedBy(p, name)) continue;
                if (newest == null || p.path("metadata").path("creationTimestamp").asText()
                    .compareTo(newest.path("metadata").path("creationTimestamp").asText()) >= 0) newest = p;
            }
            int gpus = 0;
            for (JsonNode c : j.path("spec").path("template").path("spec").path("containers")) {
                gpus += GpuUsage.quantity(c.path("resources").path("limits").path(GpuUsage.RESOURCE));
            }
            String node = newest == null ? "" : newest.path("spec").path("nodeName").asText("");
            String age = GpuUsage.time(md.path("creationTimestamp")).map(t -> GpuUsage.age(Duration.between(t, now))).orElse("?");
            boolean managed = "gpuctl".equals(md.path("labels").path(JobManifest.MANAGED_BY).asText(null));
            rows.add(new Row(ns, name, status(j, newest), gpus, node, age, managed));
        }
        return rows;
    }

    /**
     * The rows with each queued job's place from Kueue ({@code places}: {@link dev.gpuctl.kube.QueueReport#jobPlaces}):
     * a job not yet running shows "Admitted" (quota held, its pod starting) or "Pending #N in T" (its place in team T's
     * queue); Running and finished jobs keep their status.
     */
    public static List<Row> withPlaces(List<Row> rows, java.util.Map<String, String> places) {
        List<Row> out = new ArrayList<>();
        for (Row r : rows) {
            String place = places.get(r.namespace() + "/" + r.name());
            boolean waiting = r.status().equals("Pending");
            out.add(place == null || !waiting ? r : new Row(r.namespace(), r.name(), place, r.gpus(), r.node(), r.age(), r.managed()));
        }
        return out;
    }

    private static boolean ownedBy(JsonNode pod, String job) {
        for (JsonNode o : pod.path("metadata").path("ownerReferences")) {
            if (o.path("kind").asText().equals("Job") && o.path("name").asText().equals(job)) return true;
        }
        return false;
    }

    static String status(JsonNode job, JsonNode newestPod) {
        for (JsonNode c : job.path("status").path("conditions")) {
            if (!c.path("status").asText().equals("True")) continue;
            String type = c.path("type").asText();
            if (type.equals("Complete")) return "Complete";
            if (type.equals("Failed")) {
                String reason = c.path("reason").asText("");
                return reason.isEmpty() ? "Failed" : "Failed (" + reason + ")";
            }
        }
        if (newestPod != null && newestPod.path("status").path("phase").asText().equals("Running")) return "Running";
        return "Pending";
    }

    /** The table, or a line saying there is none. */
    public static String text(List<Row> rows) {
        if (rows.isEmpty()) return "No gpuctl jobs in the cluster (gpuctl job submit SPEC starts one).\n";
        List<String[]> cells = new ArrayList<>();
        cells.add(new String[] {"NAMESPACE", "NAME", "STATUS", "GPUS", "NODE", "AGE"});
        for (Row r : rows) {
            cells.add(new String[] {r.namespace(), r.name(), r.status(), String.valueOf(r.gpus()), r.node().isEmpty() ? "-" : r.node(), r.age()});
        }
        int[] width = new int[6];
        for (String[] c : cells) for (int i = 0; i < c.length; i++) width[i] = Math.max(width[i], c[i].length());
        StringBuilder sb = new StringBuilder();
        for (String[] c : cells) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < c.length; i++) {
                line.append(c[i]);
                if (i < c.length - 1) line.append(" ".repeat(width[i] - c[i].length() + 2));
            }
            sb.append(line.toString().stripTrailing()).append('\n');
        }
        return sb.toString();
    }

    /** The row of job NS/NAME, if the cluster has it. */
    public static Optional<Row> find(List<Row> rows, String namespace, String name) {
        return rows.stream().filter(r -> r.namespace().equals(namespace) && r.name().equals(name)).findFirst();
    }

    private static JsonNode items(String json, String what) {
        try {
            JsonNode doc = JSON.readTree(json);
            if (doc != null && doc.path("items").isArray()) return doc.path("items");
        } catch (IOException e) {
            throw new IllegalArgumentException("kubectl " + what + " printed no JSON", e);
        }
        throw new IllegalArgumentException("kubectl " + what + " printed no list of items");
    }
}
