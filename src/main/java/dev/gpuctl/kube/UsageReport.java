package dev.gpuctl.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpuctl.text.Json;
import dev.gpuctl.text.Terminal;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * {@code gpuctl usage}: GPU-hours per team and per person from the cluster's own records. A run of a queued Job holds
 * its GPUs from its Workload's {@code Admitted} condition turning True to its {@code Finished} condition turning True
 * (each condition's {@code lastTransitionTime}, as Kueue writes them); where the Workload does not say, the Job's
 * {@code status.startTime} and {@code status.completionTime}; a run still admitted counts up to now. A job holding N
 * GPUs counts N × its hours; only the part of a run inside the window counts. These are allocated hours: measured
 * utilisation is sampled by {@code gpuctl gpus} only while it runs and is kept nowhere in the cluster. Pure.
 */
public final class UsageReport {
    public static final String SCHEMA = "gpuctl.usage/v1";
    /** The label a Job names its LocalQueue with (a team's LocalQueue is named for the team). */
    static final String QUEUE_LABEL = KueueObjects.QUEUE_LABEL;
    /** The label naming who submitted a Job (gpuctl job submit sets it for a team's member). */
    public static final String PERSON_LABEL = "gpuctl.dev/person";
    /** The person of a Job without {@link #PERSON_LABEL}. */
    public static final String UNKNOWN_PERSON = "(unknown)";
    /** What the report says about measured utilisation: the cluster keeps none. */
    public static final String NOT_MEASURED = "measured utilisation is not kept in the cluster (gpuctl gpus samples the GPUs"
        + " only while it runs), so these are allocated GPU-hours: the time Kueue held the GPUs for each job";

    private UsageReport() {}

    /** Whose usage a row sums. */
    public enum By { TEAM, PERSON }

    /**
     * One run of a queued Job: its GPUs from {@code start} to {@code end} (empty: still running).
     *
     * @param source where the times come from: "workload" (Kueue's conditions) or "job" (the Job's status)
     */
    public record Run(String namespace, String job, String team, String person, int gpus, Instant start, Optional<Instant> end,
                      String source) {}

    /** One row: a team, or a person (with the team the jobs ran for), its GPU-hours in the window and its jobs there. */
    public record Row(String name, String team, double gpuHours, int jobs) {}

    /** A team's GPU-hours per UTC day of the window, every day of it in order. */
    public record Days(String team, Map<LocalDate, Double> hours) {
        public Days { hours = java.util.Collections.unmodifiableMap(new TreeMap<>(hours)); }
    }

    public record Report(Instant since, Instant until, By by, List<Row> rows, List<Days> days) {
        public Report {
            rows = List.copyOf(rows);
            days = List.copyOf(days);
        }

        public double total() { return rows.stream().mapToDouble(Row::gpuHours).sum(); }
    }

    /**
     * The runs of the queued Jobs in {@code jobs} ({@code -o json}-shaped: metadata namespace, name, labels; the
     * template's containers' resources; parallelism; status startTime, completionTime, active), with their Workloads
     * ({@code workloads}: metadata namespace, ownerReferences; status conditions and admission). A Job never
     * admitted, or preempted and waiting again, has no run. Jobs without the queue label are not a team's.
     */
    public static List<Run> runs(JsonNode workloads, JsonNode jobs, Instant now) {
        Map<String, JsonNode> byJob = new LinkedHashMap<>();
        for (JsonNode w : workloads.path("items")) {
            for (JsonNode o : w.path("metadata").path("ownerReferences")) {
                if (o.path("kind").asText().equals("Job")) byJob.put(w.path("metadata").path("namespace").asText() + "/" + o.path("name").asText(), w);
            }
        }
        List<Run> out = new ArrayList<>();
        for (JsonNode j : jobs.path("items")) {
            JsonNode md = j.path("metadata");
            String queue = md.path("labels").path(QUEUE_LABEL).asText("");
            if (queue.isEmpty()) continue;
            String ns = md.path("namespace").asText();
            String name = md.path("name").asText();
            JsonNode w = byJob.get(ns + "/" + name);
            String team = w == null ? queue : w.path("status").path("admission").path("clusterQueue").asText(queue);
            String person = md.path("labels").path(PERSON_LABEL).asText("");
            Optional<Instant> admitted = w == null ? Optional.empty() : trueSince(w, "Admitted");
            Optional<Instant> finished = w == null ? Optional.empty() : trueSince(w, "Finished");
            Optional<Instant> jobStart = time(j.path("status").path("startTime"));
            Optional<Instant> jobEnd = time(j.path("status").path("completionTime"));
            Optional<Instant> start = admitted.isPresent() ? admitted : jobStart;
            if (start.isEmpty()) continue;
            String source = admitted.isPresent() ? "workload" : "job";
            Optional<Instant> end = finished.isPresent() ? finished : jobEnd.isPresent() ? jobEnd : failedAt(j);
            int gpus = w == null ? 0 : admittedGpus(w);
            if (gpus == 0) gpus = templateGpus(j);
            if (gpus == 0) continue;
            Instant s = start.get();
            if (end.isPresent() && end.get().isBefore(s)) continue;
            if (s.isAfter(now)) s = now;
            out.add(new Run(ns, name, team, person.isEmpty() ? UNKNOWN_PERSON : person, gpus, s, end, source));
        }
        return out;
    }

    /**
     * GPU-hours of {@code runs} inside {@code [since, now]}, per team or per person, largest first; with each team's
     * hours per UTC day of the window. A run's part outside the window does not count; a running one counts up to now.
     */
    public static Report sum(List<Run> runs, Instant since, Instant now, By by) {
        Map<String, double[]> totals = new LinkedHashMap<>();
        Map<String, String> teamOf = new LinkedHashMap<>();
        Map<String, Map<LocalDate, Double>> days = new TreeMap<>();
        for (Run r : runs) {
            Instant from = r.start().isBefore(since) ? since : r.start();
            Instant to = r.end().filter(e -> e.isBefore(now)).orElse(now);
            if (!to.isAfter(from)) continue;
            String key = by == By.TEAM ? r.team() : r.person() + "\0" + r.team();
            double[] t = totals.computeIfAbsent(key, k -> new double[2]);
            t[0] += gpuHours(r.gpus(), from, to);
            t[1] += 1;
            teamOf.put(key, r.team());
            Map<LocalDate, Double> perDay = days.computeIfAbsent(r.team(), k -> new TreeMap<>());
            for (Instant d = from; d.isBefore(to); ) {
                LocalDate day = d.atZone(ZoneOffset.UTC).toLocalDate();
                Instant next = day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant();
                Instant until = next.isBefore(to) ? next : to;
                perDay.merge(day, gpuHours(r.gpus(), d, until), Double::sum);
                d = until;
            }
        }
        List<Row> rows = new ArrayList<>();
        totals.forEach((k, t) -> rows.add(new Row(by == By.TEAM ? k : k.substring(0, k.indexOf('\0')), teamOf.get(k), t[0], (int) t[1])));
        rows.sort(Comparator.comparingDouble(Row::gpuHours).reversed().thenComparing(Row::name).thenComparing(Row::team));
        List<Days> dayRows = new ArrayList<>();
        LocalDate first = since.atZone(ZoneOffset.UTC).toLocalDate();
        LocalDate last = now.atZone(ZoneOffset.UTC).toLocalDate();
        for (var e : days.entrySet()) {
            Map<LocalDate, Double> all = new TreeMap<>();
            for (LocalDate d = first; !d.isAfter(last); d = d.plusDays(1)) all.put(d, e.getValue().getOrDefault(d, 0.0));
            dayRows.add(new Days(e.getKey(), all));
        }
        return new Report(since, now, by, rows, dayRows);
    }

    /** N GPUs over [from, to) in GPU-hours. */
    static double gpuHours(int gpus, Instant from, Instant to) {
        return gpus * Duration.between(from, to).toMillis() / 3_600_000.0;
    }

    /** When condition {@code type} last turned True, if it is True now. */
    static Optional<Instant> trueSince(JsonNode obj, String type) {
        for (JsonNode c : obj.path("status").path("conditions")) {
            if (c.path("type").asText().equals(type) && c.path("status").asText().equals("True")) return time(c.path("lastTransitionTime"));
        }
        return Optional.empty();
    }

    /** A failed Job has no completionTime: it ended when its Failed condition turned True. */
    private static Optional<Instant> failedAt(JsonNode job) { return trueSince(job, "Failed"); }

    /** The GPUs Kueue admitted the workload with: its pod sets' nvidia.com/gpu usage (0 when not admitted). */
    static int admittedGpus(JsonNode w) {
        int n = 0;
        for (JsonNode psa : w.path("status").path("admission").path("podSetAssignments")) {
            n += (int) QueueReport.count(psa.path("resourceUsage").path(KueueObjects.GPU).asText("0"));
        }
        return n;
    }

    /** The GPUs a Job's pods ask for: its containers' nvidia.com/gpu limits, times its parallelism. */
    static int templateGpus(JsonNode job) {
        int per = 0;
        for (JsonNode c : job.path("spec").path("template").path("spec").path("containers")) {
            per += (int) QueueReport.count(c.path("resources").path("limits").path(KueueObjects.GPU).asText("0"));
        }
        return per * Math.max(1, job.path("spec").path("parallelism").asInt(1));
    }

    static Optional<Instant> time(JsonNode n) {
        String s = n.asText("");
        if (s.isEmpty()) return Optional.empty();
        try {
            return Optional.of(Instant.parse(s));
        } catch (java.time.format.DateTimeParseException e) {
            return Optional.empty();
        }
    }

    // ------------------------------------------------------------------ output

    static String hours(double h) { return String.format(Locale.ROOT, "%.2f", h); }

    private static final String[] EIGHTHS = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
    /** The longest bar, in character cells. */
    static final int BAR_WIDTH = 40;

    /** A bar of {@code value} where {@code max} fills {@link #BAR_WIDTH} cells, in eighths of a cell. */
    static String bar(double value, double max) {
        if (max <= 0 || value <= 0) return "";
        long eighths = Math.max(1, Math.round(value / max * BAR_WIDTH * 8));
        return "█".repeat((int) (eighths / 8)) + EIGHTHS[(int) (eighths % 8)];
    }

    /** The report a lead can paste: the table, what the hours are, then a per-day bar chart per team. */
    public static String text(String cluster, Report r) {
        StringBuilder sb = new StringBuilder();
        sb.append("GPU-hours on ").append(cluster).append(", ").append(stamp(r.since())).append(" to ").append(stamp(r.until()))
            .append(" (UTC)\n\n");
        List<List<String>> cells = new ArrayList<>();
        boolean person = r.by() == By.PERSON;
        cells.add(person ? List.of("PERSON", "TEAM", "GPU-HOURS", "JOBS", "SHARE") : List.of("TEAM", "GPU-HOURS", "JOBS", "SHARE"));
        double total = r.total();
        int jobs = 0;
        for (Row row : r.rows()) {
            String share = total > 0 ? Math.round(row.gpuHours() * 100 / total) + "%" : "-";
            cells.add(person ? List.of(row.name(), row.team(), hours(row.gpuHours()), "" + row.jobs(), share)
                : List.of(row.name(), hours(row.gpuHours()), "" + row.jobs(), share));
            jobs += row.jobs();
        }
        cells.add(person ? List.of("total", "", hours(total), "" + jobs, "") : List.of("total", hours(total), "" + jobs, ""));
        int[] w = new int[cells.get(0).size()];
        for (List<String> c : cells) for (int i = 0; i < c.size(); i++) w[i] = Math.max(w[i], c.get(i).length());
        for (List<String> c : cells) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < c.size(); i++) {
                boolean number = i >= c.size() - 3;
                String f = "%" + (number ? "" : "-") + w[i] + "s";
                line.append(i == 0 ? "" : "  ").append(String.format(Locale.ROOT, f, c.get(i)));
            }
            sb.append(line.toString().stripTrailing()).append('\n');
        }
        sb.append("\nNote: ").append(NOT_MEASURED).append(".\n");
        double max = r.days().stream().flatMap(d -> d.hours().values().stream()).mapToDouble(Double::doubleValue).max().orElse(0);
        for (Days d : r.days()) {
            sb.append("\n").append(d.team()).append(": GPU-hours per day\n");
            for (var e : d.hours().entrySet()) {
                String b = bar(e.getValue(), max);
                sb.append("  ").append(e.getKey()).append("  ").append(b).append(b.isEmpty() ? "" : " ").append(hours(e.getValue())).append('\n');
            }
        }
        if (r.rows().isEmpty()) sb.append("\nNo queued job held GPUs in this window.\n");
        return Terminal.escape(sb.toString());
    }

    public static ObjectNode document(String cluster, Report r) {
        ObjectNode doc = Json.MAPPER.createObjectNode();
        doc.put("schema", SCHEMA);
        doc.put("cluster", cluster);
        doc.put("since", r.since().toString());
        doc.put("until", r.until().toString());
        doc.put("by", r.by().name().toLowerCase(Locale.ROOT));
        doc.put("measuredUtilisation", (String) null);
        doc.put("note", NOT_MEASURED);
        ArrayNode rows = doc.putArray("rows");
        for (Row row : r.rows()) {
            ObjectNode o = rows.addObject();
            if (r.by() == By.PERSON) o.put("person", row.name());
            o.put("team", row.team()).put("gpuHours", round(row.gpuHours())).put("jobs", row.jobs());
        }
        doc.put("totalGpuHours", round(r.total()));
        ArrayNode days = doc.putArray("days");
        for (Days d : r.days()) {
            ObjectNode o = days.addObject().put("team", d.team());
            ArrayNode list = o.putArray("gpuHours");
            d.hours().forEach((day, h) -> list.addObject().put("date", day.toString()).put("gpuHours", round(h)));
        }
        return doc;
    }

    /** One line per row: {@code team,gpu_hours,jobs} (or {@code person,team,gpu_hours,jobs}), RFC 4180 quoting. */
    public static String csv(Report r) {
        StringBuilder sb = new StringBuilder(r.by() == By.PERSON ? "person,team,gpu_hours,jobs\r\n" : "team,gpu_hours,jobs\r\n");
        for (Row row : r.rows()) {
            if (r.by() == By.PERSON) sb.append(csvField(row.name())).append(',');
            sb.append(csvField(row.team())).append(',').append(hours(row.gpuHours())).append(',').append(row.jobs()).append("\r\n");
        }
        return sb.toString();
    }

    static String csvField(String s) {
        String clean = Terminal.escape(s);
        // a field a spreadsheet would run as a formula is prefixed with a quote
        if (!clean.isEmpty() && "=+-@".indexOf(clean.charAt(0)) >= 0) clean = "'" + clean;
        return clean.matches("[^,\"\r\n]*") ? clean : "\"" + clean.replace("\"", "\"\"") + "\"";
    }

    /** GPU-hours to the micro-hour (3.6 ms): short test runs stay exact enough to check. */
    private static double round(double h) { return Math.round(h * 1_000_000) / 1_000_000.0; }

    private static String stamp(Instant t) {
        return t.atZone(ZoneOffset.UTC).toLocalDateTime().withNano(0).toString().replace('T', ' ');
    }
}
