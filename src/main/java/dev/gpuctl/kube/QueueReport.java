package dev.gpuctl.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpuctl.text.Json;
import dev.gpuctl.text.Terminal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code gpuctl queue}: per team (a ClusterQueue) its GPU quota, the GPUs its jobs hold, how many of those it borrows
 * from the cohort and how many of its own idle GPUs other teams' jobs hold (lent), and its pending jobs in Kueue's
 * admission order (higher priority, then older first) with their wait so far and the reason Kueue gives. Built from
 * the ClusterQueues' and Workloads' fields ({@link KubeFields#CLUSTER_QUEUES}, {@link KubeFields#WORKLOADS}). Pure.
 */
public final class QueueReport {
    public static final String SCHEMA = "gpuctl.queue/v1";

    private QueueReport() {}

    public record Pending(String namespace, String job, String workload, int position, Duration waiting, String reason) {}

    public record Team(String name, long quota, long inUse, long borrowed, long lent, int admitted, List<Pending> pending) {
        public Team { pending = List.copyOf(pending); }
    }

    /**
     * The report from the two lists ({@code -o json}-shaped, fields as the queries ask); only ClusterQueues named in
     * {@code teams} when it is not empty.
     */
    public static List<Team> of(JsonNode clusterQueues, JsonNode workloads, Instant now, List<String> teams) {
        Map<String, long[]> gpu = new LinkedHashMap<>();          // name -> {quota, inUse, borrowed}
        Map<String, String> cohort = new LinkedHashMap<>();
        for (JsonNode cq : clusterQueues.path("items")) {
            String name = cq.path("metadata").path("name").asText();
            long quota = 0;
            for (JsonNode rg : cq.path("spec").path("resourceGroups")) {
                for (JsonNode f : rg.path("flavors")) {
                    for (JsonNode r : f.path("resources")) {
                        if (r.path("name").asText().equals(KueueObjects.GPU)) quota += count(r.path("nominalQuota").asText("0"));
                    }
                }
            }
            long used = 0, borrowed = 0;
            for (JsonNode f : cq.path("status").path("flavorsReservation")) {
                for (JsonNode r : f.path("resources")) {
                    if (!r.path("name").asText().equals(KueueObjects.GPU)) continue;
                    used += count(r.path("total").asText("0"));
                    borrowed += count(r.path("borrowed").asText("0"));
                }
            }
            gpu.put(name, new long[] {quota, used, borrowed});
            cohort.put(name, cq.path("spec").path("cohort").asText(""));
        }
        Map<String, List<JsonNode>> pending = new LinkedHashMap<>();
        Map<String, Integer> admitted = new LinkedHashMap<>();
        for (JsonNode w : workloads.path("items")) {
            String queue = w.path("spec").path("queueName").asText();
            if (condition(w, "Finished").filter(c -> c.path("status").asText().equals("True")).isPresent()) continue;
            boolean reserved = condition(w, "QuotaReserved").filter(c -> c.path("status").asText().equals("True")).isPresent();
            String cq = reserved ? w.path("status").path("admission").path("clusterQueue").asText(queue) : queue;
            if (reserved) admitted.merge(cq, 1, Integer::sum);
            else pending.computeIfAbsent(cq, k -> new ArrayList<>()).add(w);
        }
        List<Team> out = new ArrayList<>();
        for (var e : gpu.entrySet()) {
            String name = e.getKey();
            if (!teams.isEmpty() && !teams.contains(name)) continue;
            long[] q = e.getValue();
            List<JsonNode> waiting = new ArrayList<>(pending.getOrDefault(name, List.of()));
            waiting.sort(Comparator.<JsonNode>comparingLong(w -> -w.path("spec").path("priority").asLong(0))
                .thenComparing(w -> w.path("metadata").path("creationTimestamp").asText()));
            List<Pending> rows = new ArrayList<>();
            for (JsonNode w : waiting) {
                String created = w.path("metadata").path("creationTimestamp").asText();
                Duration wait = created.isEmpty() ? Duration.ZERO : Duration.between(Instant.parse(created), now);
                String reason = condition(w, "QuotaReserved").map(c -> c.path("message").asText().replace("\n", " "))
                    .filter(m -> !m.isEmpty()).orElse("not yet considered by Kueue");
                String job = w.path("metadata").path("ownerReferences").path(0).path("name").asText(w.path("metadata").path("name").asText());
                rows.add(new Pending(w.path("metadata").path("namespace").asText(), job, w.path("metadata").path("name").asText(),
                    rows.size() + 1, wait.isNegative() ? Duration.ZERO : wait, reason));
            }
            out.add(new Team(name, q[0], q[1], q[2], lent(name, gpu, cohort), admitted.getOrDefault(name, 0), rows));
        }
        return out;
    }

    /**
     * Each queued job's place in its team's queue, by {@code namespace/job}: "Admitted" for a job whose Workload holds
     * quota, "Pending #N in T" for one waiting, N its place in Kueue's admission order in ClusterQueue T ({@link #of},
     * the order gpuctl queue shows). Finished jobs are not in it.
     */
    public static Map<String, String> jobPlaces(JsonNode clusterQueues, JsonNode workloads, Instant now) {
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode w : workloads.path("items")) {
            if (condition(w, "Finished").filter(c -> c.path("status").asText().equals("True")).isPresent()) continue;
            if (condition(w, "QuotaReserved").filter(c -> c.path("status").asText().equals("True")).isPresent()) {
                String job = w.path("metadata").path("ownerReferences").path(0).path("name").asText(w.path("metadata").path("name").asText());
                out.put(w.path("metadata").path("namespace").asText() + "/" + job, "Admitted");
            }
        }
        for (Team t : of(clusterQueues, workloads, now, List.of())) {
            for (Pending p : t.pending()) out.put(p.namespace() + "/" + p.job(), "Pending #" + p.position() + " in " + t.name());
        }
        return out;
    }

    /**
     * Of the GPUs the cohort's borrowers hold, those counted against this queue's idle quota: the borrowed GPUs are
     * handed to the lenders' idle quota in name order (Kueue pools a cohort's quota; it names no lender).
     */
    static long lent(String name, Map<String, long[]> gpu, Map<String, String> cohort) {
        String co = cohort.get(name);
        if (co.isEmpty()) return 0;
        long borrowed = gpu.entrySet().stream().filter(e -> cohort.get(e.getKey()).equals(co)).mapToLong(e -> e.getValue()[2]).sum();
        for (var e : gpu.entrySet()) {
            if (!cohort.get(e.getKey()).equals(co)) continue;
            long idle = Math.max(0, e.getValue()[0] - e.getValue()[1]);
            long mine = Math.min(idle, borrowed);
            if (e.getKey().equals(name)) return mine;
            borrowed -= mine;
        }
        return 0;
    }

    static Optional<JsonNode> condition(JsonNode w, String type) {
        for (JsonNode c : w.path("status").path("conditions")) if (c.path("type").asText().equals(type)) return Optional.of(c);
        return Optional.empty();
    }

    /** A GPU count as Kueue writes quantities ("2"; "0"). */
    static long count(String q) {
        try {
            return Long.parseLong(q.strip());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    public static String table(List<Team> teams) {
        StringBuilder sb = new StringBuilder();
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("TEAM", "QUOTA", "IN USE", "BORROWED", "LENT", "RUNNING", "PENDING"));
        for (Team t : teams) {
            rows.add(List.of(t.name(), "" + t.quota(), "" + t.inUse(), "" + t.borrowed(), "" + t.lent(), "" + t.admitted(), "" + t.pending().size()));
        }
        int[] w = new int[rows.get(0).size()];
        for (List<String> r : rows) for (int i = 0; i < r.size(); i++) w[i] = Math.max(w[i], r.get(i).length());
        for (List<String> r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.size(); i++) line.append(i == 0 ? "" : "  ").append(String.format("%-" + w[i] + "s", r.get(i)));
            sb.append(line.toString().stripTrailing()).append('\n');
        }
        for (Team t : teams) {
            if (t.pending().isEmpty()) continue;
            sb.append("\nPending in ").append(t.name()).append(", in admission order:\n");
            for (Pending p : t.pending()) {
                sb.append("  ").append(p.position()).append(". ").append(p.namespace()).append('/').append(p.job())
                    .append("  waiting ").append(human(p.waiting())).append("  ").append(p.reason()).append('\n');
            }
        }
        return Terminal.escape(sb.toString());
    }

    public static ObjectNode document(String cluster, List<Team> teams, Instant now) {
        ObjectNode doc = Json.MAPPER.createObjectNode();
        doc.put("schema", SCHEMA);
        doc.put("cluster", cluster);
        doc.put("time", now.toString());
        ArrayNode list = doc.putArray("teams");
        for (Team t : teams) {
            ObjectNode o = list.addObject();
            o.put("team", t.name()).put("quota", t.quota()).put("inUse", t.inUse()).put("borrowed", t.borrowed()).put("lent", t.lent())
                .put("running", t.admitted());
            ArrayNode pend = o.putArray("pending");
            for (Pending p : t.pending()) {
                pend.addObject().put("position", p.position()).put("namespace", p.namespace()).put("job", p.job())
                    .put("workload", p.workload()).put("waitingSeconds", p.waiting().toSeconds()).put("reason", p.reason());
            }
        }
        return doc;
    }

    static String human(Duration d) {
        long s = d.toSeconds();
        if (s < 60) return s + "s";
        if (s < 3600) return (s / 60) + "m" + (s % 60 == 0 ? "" : (s % 60) + "s");
        return (s / 3600) + "h" + ((s % 3600) / 60 == 0 ? "" : ((s % 3600) / 60) + "m");
    }
}
