package dev.gpuctl.workload;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.Team;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The per-node fit rule of a team's job (docs/design.md, "A team's job must fit one node"): a job's pod needs all its
 * GPUs on one node, and Kueue admits on quota alone, so gpuctl refuses a job whose pod asks for more GPUs than any
 * node has <em>free of the other teams' quota</em>. For node n of GPU model M that is
 * {@code min(gpus(n), cluster(M) - others(M))}: the others' nominal quota of M is theirs (Kueue never preempts a
 * workload within its queue's nominal quota to admit another queue's), and what of it cannot sit on the other nodes
 * of M sits on n. Pure: typed facts in, a refusal out.
 *
 * @param gpus  per GPU model, each GPU node's GPUs as quotas count them (its count × its sharing replicas), in
 *              inventory order
 * @param teams every team with its quota per model and its borrowing limit
 */
public record TeamFit(Map<String, Map<String, Integer>> gpus, List<Team> teams) {
    public TeamFit {
        Map<String, Map<String, Integer>> copy = new TreeMap<>();
        gpus.forEach((model, nodes) -> copy.put(model, java.util.Collections.unmodifiableMap(new LinkedHashMap<>(nodes))));
        gpus = java.util.Collections.unmodifiableMap(copy);
        teams = List.copyOf(teams);
    }

    /** The facts of {@code inv}: its GPU nodes' GPUs per model and its teams. */
    public static TeamFit of(Inventory inv) {
        Map<String, Map<String, Integer>> gpus = new TreeMap<>();
        for (Node n : inv.nodes()) {
            if (!n.gpu()) continue;
            gpus.computeIfAbsent(Inventory.gpuModel(n), m -> new LinkedHashMap<>()).put(n.name(), n.gpus() * inv.sharing(n).replicas());
        }
        return new TeamFit(gpus, inv.teams());
    }

    /** The cluster's GPUs of {@code model}. */
    public int cluster(String model) {
        return gpus.getOrDefault(model, Map.of()).values().stream().mapToInt(Integer::intValue).sum();
    }

    /** The nominal quota of {@code model} of every team but {@code team}. */
    public int others(String model, Team team) {
        return teams.stream().filter(t -> !t.name().equals(team.name())).mapToInt(t -> t.quota(model)).sum();
    }

    /**
     * The most GPUs of {@code model} team can ever hold at once as Kueue counts quota: its nominal quota plus its
     * borrowing limit (no limit: unbounded), bounded by the cohort's capacity (the teams' quotas together: only nominal
     * quota is lent) and the cluster's GPUs of the model.
     */
    public int reach(String model, Team team) {
        int cohort = teams.stream().mapToInt(t -> t.quota(model)).sum();
        long own = team.borrowingLimit().isPresent() ? (long) team.quota(model) + team.borrowingLimit().getAsInt() : Long.MAX_VALUE;
        return (int) Math.min(own, Math.min(cohort, cluster(model)));
    }

    /** GPUs of {@code model} on {@code node} free of the other teams' quota: min(node, cluster − others), at least 0. */
    public int free(String model, String node, Team team) {
        int on = gpus.getOrDefault(model, Map.of()).getOrDefault(node, 0);
        return Math.max(0, Math.min(on, cluster(model) - others(model, team)));
    }

    /**
     * Why no node could ever fit the job's pod in the team's queue, or empty. Only models whose quota the job fits
     * ({@link #reach} at least its GPUs: Kueue assigns no other flavor) count; each is judged by its node with the
     * most GPUs free of the other teams' quota. Whole GPUs only (MIG devices are no team quota).
     */
    public Optional<String> unfit(JobSpec spec, Team team) {
        if (!spec.gpuResource().equals(JobSpec.WHOLE_GPU)) return Optional.empty();
        List<String> why = new ArrayList<>();
        int best = 0;
        for (Map.Entry<String, Map<String, Integer>> m : gpus.entrySet()) {
            String model = m.getKey();
            if (reach(model, team) < spec.gpus()) continue;
            String largest = "";
            int largestGpus = 0;
            String roomiest = "";
            int room = -1;
            for (Map.Entry<String, Integer> n : m.getValue().entrySet()) {
                if (n.getValue() > largestGpus) {
                    largest = n.getKey();
                    largestGpus = n.getValue();
                }
                int f = free(model, n.getKey(), team);
                if (f > room) {
                    roomiest = n.getKey();
                    room = f;
                }
            }
            if (room >= spec.gpus()) return Optional.empty();
            best = Math.max(best, room);
            String of = model.equals(Team.DEFAULT_MODEL) ? "" : " of model " + model;
            int others = others(model, team);
            why.add("the largest node" + of + ", " + largest + ", has " + gpus(largestGpus) + "; the other teams' quota" + of + " ("
                + quotas(model, team) + ") is " + others + " of the cluster's " + cluster(model) + ", which leaves "
                + (cluster(model) - others) + " for team " + team.name() + ", so " + roomiest + " has at most " + gpus(room)
                + " free of the other teams' quota");
        }
        if (why.isEmpty()) return Optional.empty(); // beyond every model's quota: TeamJobs.beyondQuota says why
        return Optional.of(spec.gpusAt() + ": gpus: " + spec.gpus() + " is more than any node has free of the other teams' quota: "
            + String.join("; ", why) + ". A pod runs on one node and Kueue admits on quota alone, so the job would run only while"
            + " the other teams leave their own GPUs idle (and be preempted when they take them back), else wait with its quota held"
            + " (expected at most " + best + ", or split the work into jobs of at most " + best + " GPU" + (best == 1 ? "" : "s")
            + ", or give team " + team.name() + " more of the quota in the inventory)");
    }

    private String quotas(String model, Team team) {
        List<String> out = new ArrayList<>();
        for (Team t : teams) if (!t.name().equals(team.name()) && t.quota(model) > 0) out.add(t.name() + ": " + t.quota(model));
        return out.isEmpty() ? "none" : String.join(", ", out);
    }

    private static String gpus(int n) { return n + " GPU" + (n == 1 ? "" : "s"); }
}
