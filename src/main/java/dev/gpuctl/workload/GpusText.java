package dev.gpuctl.workload;

import dev.gpuctl.workload.GpuUsage.NodeGpus;
import dev.gpuctl.workload.GpuUsage.PodGpus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Renders a {@link GpuUsage.Report}: the table {@code gpuctl gpus} prints, and its JSON document (gpuctl.gpus/v1). */
public final class GpusText {
    public static final String SCHEMA = "gpuctl.gpus/v1";

    private GpusText() {}

    /**
     * One line per GPU node (a second and further pod on lines of their own), a TOTAL line, then notes (a node
     * that could not be asked, one that did not join) and the pods waiting for GPUs.
     */
    public static String table(GpuUsage.Report report, Instant now) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"NODE", "GPU MODEL", "GPUS", "ALLOCATABLE", "ALLOCATED", "FREE", "PODS"});
        List<String> notes = new ArrayList<>();
        for (NodeGpus n : report.nodes()) {
            List<String> pods = n.pods().stream().map(p -> pod(p, now)).toList();
            String model = n.gpus().isEmpty() ? "?" : n.model();
            String count = n.gpus().isEmpty() ? "?" : String.valueOf(n.gpus().size());
            rows.add(new String[] {n.name(), model, count, String.valueOf(n.allocatable()), String.valueOf(n.allocated()),
                String.valueOf(n.free()), pods.isEmpty() ? "-" : pods.get(0)});
            for (String more : pods.subList(Math.min(1, pods.size()), pods.size())) {
                rows.add(new String[] {"", "", "", "", "", "", more});
            }
            if (!n.problem().isEmpty()) notes.add(n.problem().startsWith(n.name() + ":") ? n.problem() : n.name() + ": " + n.problem());
            if (!n.inCluster()) notes.add(n.name() + ": not a node of the cluster (not joined yet? gpuctl bootstrap joins it)");
        }
        rows.add(new String[] {"TOTAL", "", String.valueOf(report.gpus()), String.valueOf(report.allocatable()),
            String.valueOf(report.allocated()), String.valueOf(report.free()), ""});
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

    /** "default/train-x7k2p (job train, 2 GPUs, 3m12s)". */
    static String pod(PodGpus p, Instant now) {
        List<String> about = new ArrayList<>();
        if (!p.job().isEmpty()) about.add("job " + p.job());
        about.add(p.gpus() + (p.gpus() == 1 ? " GPU" : " GPUs"));
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
            m.put("pods", n.pods().stream().map(p -> pod(p, now, false)).toList());
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
        m.put("ageSeconds", p.age(now).map(java.time.Duration::getSeconds).orElse(null));
        if (waiting) m.put("reason", p.reason());
        return m;
    }
}
