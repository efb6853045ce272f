package dev.gpuctl.workload;

import dev.gpuctl.gpu.GpuRequests;
import dev.gpuctl.workload.GpuUsage.NodeGpus;
import dev.gpuctl.workload.GpuUsage.PodGpus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Renders a {@link GpuUsage.Report}: the table {@code gpuctl gpus} prints, and its JSON document (gpuctl.gpus/v1). */
public final class GpusText {
    public static final String SCHEMA = "gpuctl.gpus/v1";

    private GpusText() {}

    /**
     * One line per GPU node (a second and further pod on lines of their own), a TOTAL line, then notes (a node
     * that could not be asked, one that did not join) and the pods waiting for GPUs.
     */
    public static String table(GpuUsage.Report report, Instant now) { return table(report, now, Map.of()); }

    /**
     * The table with, when the inventory has teams ({@code teams}: a team's namespace to its name), a TEAM column: the
     * team whose queue admitted each pod (its ClusterQueue selects only the team's namespace), '-' for none.
     */
    public static String table(GpuUsage.Report report, Instant now, Map<String, String> teams) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"NODE", "GPU MODEL", "GPUS", "ALLOCATABLE", "ALLOCATED", "FREE", "PODS"});
        List<String> notes = new ArrayList<>();
        for (NodeGpus n : report.nodes()) {
            List<String> pods = n.pods().stream().map(p -> pod(p, now)).toList();
            String model = n.gpus().isEmpty() ? "?" : n.model();
            String count = n.gpus().isEmpty() ? "?" : String.valueOf(n.gpus().size());
            List<String> podTeams = n.pods().stream().map(p -> team(teams, p.namespace())).toList();
            rows.add(new String[] {n.name(), model, count, String.valueOf(n.allocatable()), String.valueOf(n.allocated()),
                String.valueOf(n.free()), pods.isEmpty() ? "-" : pods.get(0), podTeams.isEmpty() ? "-" : podTeams.get(0)});
            for (int i = 1; i < pods.size(); i++) {
                rows.add(new String[] {"", "", "", "", "", "", pods.get(i), podTeams.get(i)});
            }
            for (GpuUsage.MigDevices m : n.mig()) {
                rows.add(new String[] {"", "MIG " + m.profile(), "", String.valueOf(m.allocatable()), String.valueOf(m.allocated()),
                    String.valueOf(m.free()), "", ""});
            }
            if (!n.problem().isEmpty()) notes.add(n.problem().startsWith(n.name() + ":") ? n.problem() : n.name() + ": " + n.problem());
            if (!n.inCluster()) notes.add(n.name() + ": not a node of the cluster (not joined yet? gpuctl bootstrap joins it)");
        }
        rows.add(new String[] {"TOTAL", "", String.valueOf(report.gpus()), String.valueOf(report.allocatable()),
            String.valueOf(report.allocated()), String.valueOf(report.free()), "", ""});
        rows.set(0, new String[] {"NODE", "GPU MODEL", "GPUS", "ALLOCATABLE", "ALLOCATED", "FREE", "PODS", "TEAM"});
        if (teams.isEmpty()) rows.replaceAll(r -> java.util.Arrays.copyOf(r, 7));
        StringBuilder sb = new StringBuilder(columns(rows));
        if (!notes.isEmpty()) {
            sb.append('\n');
            notes.forEach(n -> sb.append(n).append('\n'));
        }
        if (!report.waiting().isEmpty()) {
            sb.append("\nwaiting for GPUs:\n");
            for (PodGpus p : report.waiting()) {
                sb.append("  ").append(pod(p, now));
                if (!p.reason().isEmpty()) sb.append(": ").append(p.reason());
                sb.append('\n');
            }
        }
        return sb.toString();
    }

    /**
     * The GPUs' use over the sampled window, one line per GPU: node, index, the pod(s) holding it, utilization.gpu
     * (mean and highest sample), memory used (the most in the window) of the total, and IDLE for a GPU a pod holds
     * without using it; then the nodes that could not be sampled, and how many GPUs are idle.
     */
    public static String activityTable(GpuActivity.Report report) { return activityTable(report, Map.of()); }

    /** The GPUs' use with, when the inventory has teams, each GPU's team (that of the pod holding it; '-' for none). */
    public static String activityTable(GpuActivity.Report report, Map<String, String> teams) {
        List<String[]> rows = new ArrayList<>();
        rows.add(teams.isEmpty() ? new String[] {"NODE", "GPU", "POD", "UTIL", "MAX", "MEMORY", ""}
            : new String[] {"NODE", "GPU", "POD", "TEAM", "UTIL", "MAX", "MEMORY", ""});
        List<String> notes = new ArrayList<>();
        for (GpuActivity.NodeUse n : report.nodes()) {
            for (GpuActivity.GpuUse g : n.gpus()) {
                String pods = g.pods().isEmpty() ? "-" : String.join(", ", g.pods().stream().map(GpuActivity.PodRef::toString).toList());
                String team = g.pods().isEmpty() ? "-"
                    : String.join(", ", g.pods().stream().map(p -> team(teams, p.namespace())).distinct().toList());
                rows.add(teams.isEmpty() ? new String[] {n.node(), String.valueOf(g.index()), pods, percent(g.utilMean()), percent(g.utilMax()),
                    memory(g.memoryUsedMib(), g.memoryTotalMib()), g.idle() ? "IDLE" : ""}
                    : new String[] {n.node(), String.valueOf(g.index()), pods, team, percent(g.utilMean()), percent(g.utilMax()),
                    memory(g.memoryUsedMib(), g.memoryTotalMib()), g.idle() ? "IDLE" : ""});
            }
            if (!n.problem().isEmpty()) notes.add(n.node() + ": GPUs not sampled: " + n.problem());
        }
        StringBuilder sb = new StringBuilder("GPU use over " + seconds(report.window()) + " (UTIL: mean utilization.gpu, MAX: highest"
            + " sample, MEMORY: most used; IDLE: held by a pod, no sample above " + GpuActivity.IDLE_MAX_UTIL + " %):\n");
        sb.append(columns(rows));
        notes.forEach(n -> sb.append(n).append('\n'));
        int idle = report.idle().size();
        if (idle > 0) {
            sb.append(idle).append(idle == 1 ? " GPU is" : " GPUs are").append(" held but idle: ")
                .append(String.join(", ", report.idle().stream().map(g -> g.node() + " GPU " + g.index() + " ("
                    + String.join(", ", g.pods().stream().map(GpuActivity.PodRef::toString).toList()) + ")").toList()))
                .append('\n');
        }
        return sb.toString();
    }

    /** The team of a pod in {@code namespace}: the team whose namespace it is, '-' for none. */
    static String team(Map<String, String> teams, String namespace) { return teams.getOrDefault(namespace, "-"); }

    static String percent(Integer p) { return p == null ? "N/A" : p + " %"; }

    static String memory(Long used, Long total) {
        return (used == null ? "?" : used) + " / " + (total == null ? "?" : total) + " MiB";
    }

    /** "3s", "2.5s". */
    public static String seconds(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + "s" : java.math.BigDecimal.valueOf(ms, 3).stripTrailingZeros().toPlainString() + "s";
    }

    /** The {@code sample} member of the JSON document; docs/gpus.md documents it. */
    static Map<String, Object> activityDocument(GpuActivity.Report report) { return activityDocument(report, Map.of()); }

    static Map<String, Object> activityDocument(GpuActivity.Report report, Map<String, String> teams) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("windowSeconds", report.window().toMillis() / 1000.0);
        m.put("idleMaxUtilizationPercent", GpuActivity.IDLE_MAX_UTIL);
        List<Object> gpus = new ArrayList<>();
        List<Object> errors = new ArrayList<>();
        for (GpuActivity.NodeUse n : report.nodes()) {
            for (GpuActivity.GpuUse g : n.gpus()) {
                Map<String, Object> o = new LinkedHashMap<>();
                o.put("node", g.node());
                o.put("index", g.index());
                o.put("uuid", g.uuid());
                o.put("pods", g.pods().stream().map(p -> {
                    Map<String, Object> pm = new LinkedHashMap<>();
                    pm.put("namespace", p.namespace());
                    pm.put("name", p.name());
                    return withTeam(pm, teams, p.namespace());
                }).toList());
                o.put("samples", g.samples());
                o.put("utilizationMeanPercent", g.utilMean());
                o.put("utilizationMaxPercent", g.utilMax());
                o.put("memoryUsedMiB", g.memoryUsedMib());
                o.put("memoryTotalMiB", g.memoryTotalMib());
                o.put("idle", g.idle());
                gpus.add(o);
            }
            if (!n.problem().isEmpty()) {
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("node", n.node());
                e.put("error", n.problem());
                errors.add(e);
            }
        }
        m.put("gpus", gpus);
        m.put("errors", errors);
        return m;
    }

    /** "default/train-x7k2p (job train, 2 GPUs, 3m12s)"; MIG devices as "2 MIG 1g.18gb". */
    static String pod(PodGpus p, Instant now) {
        List<String> about = new ArrayList<>();
        if (!p.job().isEmpty()) about.add("job " + p.job());
        if (p.gpus() > 0 || p.mig().isEmpty()) about.add(p.gpus() + (p.gpus() == 1 ? " GPU" : " GPUs"));
        p.mig().forEach((resource, n) -> about.add(n + " MIG " + resource.substring(GpuRequests.MIG_PREFIX.length())));
        if (!p.phase().equals("Running")) about.add(p.phase());
        p.age(now).ifPresent(a -> about.add(GpuUsage.age(a)));
        return p.namespace() + "/" + p.name() + " (" + String.join(", ", about) + ")";
    }

    /** Left-aligned columns two spaces apart; trailing blanks trimmed. */
    private static String columns(List<String[]> rows) {
        int[] width = new int[rows.get(0).length];
        for (String[] r : rows) for (int i = 0; i < r.length; i++) width[i] = Math.max(width[i], r[i].length());
        StringBuilder sb = new StringBuilder();
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                line.append(r[i]);
                if (i < r.length - 1) line.append(" ".repeat(width[i] - r[i].length() + 2));
            }
            sb.append(line.toString().stripTrailing()).append('\n');
        }
        return sb.toString();
    }

    /** The JSON document of {@code gpuctl gpus --json}; docs/gpus.md documents it. Fields are only ever added. */
    public static Map<String, Object> document(String cluster, GpuUsage.Report report, Instant now) {
        return document(cluster, report, Optional.empty(), now);
    }

    /** The document with, when the GPUs were sampled, their use ({@code sample}; null when not sampled). */
    public static Map<String, Object> document(String cluster, GpuUsage.Report report, Optional<GpuActivity.Report> activity,
                                               Instant now) {
        return document(cluster, report, activity, now, Map.of());
    }

    /** The document with each pod's and sampled GPU's {@code team} (null for none) when the inventory has teams. */
    public static Map<String, Object> document(String cluster, GpuUsage.Report report, Optional<GpuActivity.Report> activity,
                                               Instant now, Map<String, String> teams) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("schema", SCHEMA);
        doc.put("cluster", cluster);
        doc.put("time", now.toString());
        List<Object> nodes = new ArrayList<>();
        for (NodeGpus n : report.nodes()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", n.name());
            m.put("inCluster", n.inCluster());
            m.put("reachable", n.reachable());
            m.put("error", n.problem());
            m.put("model", n.gpus().isEmpty() ? null : n.model());
            m.put("gpus", n.gpus().isEmpty() ? null : n.gpus().size());
            m.put("allocatable", n.allocatable());
            m.put("allocated", n.allocated());
            m.put("free", n.free());
            m.put("pods", n.pods().stream().map(p -> withTeam(pod(p, now, false), teams, p.namespace())).toList());
            m.put("mig", n.mig().stream().map(GpusText::mig).toList());
            nodes.add(m);
        }
        doc.put("nodes", nodes);
        doc.put("waiting", report.waiting().stream().map(p -> pod(p, now, true)).toList());
        Map<String, Object> total = new LinkedHashMap<>();
        total.put("gpus", report.gpus());
        total.put("allocatable", report.allocatable());
        total.put("allocated", report.allocated());
        total.put("free", report.free());
        doc.put("total", total);
        doc.put("sample", activity.map(a -> activityDocument(a, teams)).orElse(null));
        return doc;
    }

    private static Map<String, Object> pod(PodGpus p, Instant now, boolean waiting) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("namespace", p.namespace());
        m.put("name", p.name());
        m.put("job", p.job().isEmpty() ? null : p.job());
        m.put("gpus", p.gpus());
        m.put("phase", p.phase());
        m.put("startTime", p.started().map(Instant::toString).orElse(null));
        m.put("ageSeconds", p.age(now).map(Duration::getSeconds).orElse(null));
        m.put("mig", p.mig());
        if (waiting) m.put("reason", p.reason());
        return m;
    }

    private static Map<String, Object> withTeam(Map<String, Object> m, Map<String, String> teams, String namespace) {
        if (!teams.isEmpty()) m.put("team", teams.get(namespace));
        return m;
    }

    private static Map<String, Object> mig(GpuUsage.MigDevices d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("resource", d.resource());
        m.put("allocatable", d.allocatable());
        m.put("allocated", d.allocated());
        m.put("free", d.free());
        return m;
    }
}
