package dev.gpuctl.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The plan at a glance: hosts × steps, which step runs on which host, before the details. Pure: from the {@link Plan}
 * alone (whether a host has GPUs comes from a predicate, the inventory's {@code gpu}).
 */
public final class PlanSummary {
    private PlanSummary() {}

    /** One host's row: its role, whether it has GPUs, and the ids of the steps it gets, in plan order. */
    public record Row(String name, String address, String role, boolean gpu, List<String> steps) {
        public Row { steps = List.copyOf(steps); }
    }

    /** Step ids in the order the plan first runs them (a step in two phases, such as nfs, once). */
    public static List<String> stepIds(Plan plan) {
        Set<String> ids = new LinkedHashSet<>();
        for (Plan.PhasePlan phase : plan.phases()) {
            for (Plan.HostPlan host : phase.hosts()) host.steps().forEach(s -> ids.add(s.id()));
        }
        return List.copyOf(ids);
    }

    /** One row per host the plan touches, in the order hosts first appear, each with its steps in plan order. */
    public static List<Row> rows(Plan plan, Predicate<String> gpu) {
        Map<String, Plan.HostPlan> first = new LinkedHashMap<>();
        Map<String, Set<String>> steps = new LinkedHashMap<>();
        for (Plan.PhasePlan phase : plan.phases()) {
            for (Plan.HostPlan host : phase.hosts()) {
                first.putIfAbsent(host.name(), host);
                Set<String> mine = steps.computeIfAbsent(host.name(), k -> new LinkedHashSet<>());
                host.steps().forEach(s -> mine.add(s.id()));
            }
        }
        List<Row> rows = new ArrayList<>();
        for (Plan.HostPlan h : first.values()) {
            rows.add(new Row(h.name(), h.address(), h.role(), gpu.test(h.name()), new ArrayList<>(steps.get(h.name()))));
        }
        return rows;
    }

    /**
     * The table: a header line, then HOST, ROLE, GPU and one column per step holding {@code x} where that host
     * gets the step and {@code -} where it does not. Columns are padded to their widest cell.
     */
    public static String render(Plan plan, Predicate<String> gpu) {
        List<Row> rows = rows(plan, gpu);
        List<String> ids = stepIds(plan);
        List<List<String>> table = new ArrayList<>();
        List<String> header = new ArrayList<>(List.of("HOST", "ROLE", "GPU"));
        header.addAll(ids);
        table.add(header);
        for (Row r : rows) {
            List<String> line = new ArrayList<>(List.of(r.name(), r.role(), r.gpu() ? "yes" : "no"));
            for (String id : ids) line.add(r.steps().contains(id) ? "x" : "-");
            table.add(line);
        }
        int[] width = new int[header.size()];
        for (List<String> line : table) {
            for (int i = 0; i < line.size(); i++) width[i] = Math.max(width[i], line.get(i).length());
        }
        StringBuilder sb = new StringBuilder("Summary: ").append(count(rows.size(), "host")).append(", ")
            .append(count(ids.size(), "step")).append(" (x: the step runs on that host; -: it does not)\n");
        for (List<String> line : table) {
            StringBuilder l = new StringBuilder("  ");
            for (int i = 0; i < line.size(); i++) {
                l.append(line.get(i));
                if (i < line.size() - 1) l.append(" ".repeat(width[i] - line.get(i).length() + 2));
            }
            sb.append(l.toString().stripTrailing()).append('\n');
        }
        return sb.toString();
    }

    /**
     * What each step changes, one line per step in plan order: its title, then the files it writes and edits (over
     * every host), what it copies here, and how many commands it may run; "checks only" for a step that changes nothing.
     * Each change is made only where the step's check finds the host wrong.
     */
    public static String changes(Plan plan) {
        Map<String, String> titles = new LinkedHashMap<>();
        Map<String, Set<String>> writes = new LinkedHashMap<>();
        Map<String, Set<String>> edits = new LinkedHashMap<>();
        Map<String, Set<String>> fetches = new LinkedHashMap<>();
        Map<String, Set<String>> rebuilds = new LinkedHashMap<>();
        Map<String, Set<String>> commands = new LinkedHashMap<>();
        for (Plan.PhasePlan phase : plan.phases()) {
            for (Plan.HostPlan host : phase.hosts()) {
                for (Plan.StepPlan step : host.steps()) {
                    titles.putIfAbsent(step.id(), step.title());
                    List<Map<String, String>> ops = new ArrayList<>(step.prepareOnMaster());
                    ops.addAll(step.apply());
                    for (Map<String, String> op : ops) {
                        switch (op.get("kind")) {
                            case "write" -> writes.computeIfAbsent(step.id(), k -> new LinkedHashSet<>()).add(op.get("path"));
                            case "edit" -> edits.computeIfAbsent(step.id(), k -> new LinkedHashSet<>()).add(op.get("path"));
                            case "fetch" -> (op.containsKey("rule") ? rebuilds : fetches)
                                .computeIfAbsent(step.id(), k -> new LinkedHashSet<>()).add(op.get("path"));
                            default -> commands.computeIfAbsent(step.id(), k -> new LinkedHashSet<>()).add(op.get("what"));
                        }
                    }
                }
            }
        }
        int width = titles.keySet().stream().mapToInt(String::length).max().orElse(0);
        StringBuilder sb = new StringBuilder("What changes (each only where the step's check finds the host wrong):\n");
        for (var e : titles.entrySet()) {
            String id = e.getKey();
            List<String> parts = new ArrayList<>();
            if (writes.containsKey(id)) parts.add("writes " + String.join(", ", writes.get(id)));
            if (edits.containsKey(id)) parts.add("edits " + String.join(", ", edits.get(id)));
            if (fetches.containsKey(id)) parts.add("copies " + String.join(", ", fetches.get(id)) + " here");
            if (rebuilds.containsKey(id)) parts.add("rebuilds " + String.join(", ", rebuilds.get(id)) + " here (never copied)");
            if (commands.containsKey(id)) parts.add("runs " + count(commands.get(id).size(), "command"));
            sb.append("  ").append(id).append(" ".repeat(width - id.length())).append("  ").append(e.getValue()).append(": ")
                .append(parts.isEmpty() ? "checks only" : String.join("; ", parts)).append('\n');
        }
        return sb.toString();
    }

    /** "1 host", "2 hosts", "0 hosts". */
    public static String count(long n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }
}
