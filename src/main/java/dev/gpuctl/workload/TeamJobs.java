package dev.gpuctl.workload;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Team;
import java.util.Optional;

/**
 * A job submitted for a team: which team (asked, else the team the person is a member of), the job moved into the
 * team's namespace, and the refusal of a job Kueue could never admit (more GPUs than the team's quota and what it may
 * borrow) or no node could hold (more GPUs than a node has free of the other teams' quota) — before anything is
 * submitted. Pure: the inventory and the spec only.
 */
public final class TeamJobs {
    private TeamJobs() {}

    /**
     * The team a job goes to: {@code asked} when given (it must be a team of the inventory), else the team {@code person}
     * is a member of; empty when the inventory has no teams and none was asked.
     */
    public static Optional<Team> team(Inventory inv, Optional<String> asked, Optional<String> person) {
        if (asked.isPresent()) {
            return Optional.of(inv.team(asked.get()).orElseThrow(() -> WorkloadException.refused("--team " + asked.get()
                + ": no such team in " + inv.file().getFileName() + " (expected one of: "
                + (inv.teams().isEmpty() ? "none: the inventory has no teams:" : String.join(", ", inv.teams().stream().map(Team::name).toList()))
                + ")")));
        }
        if (inv.teams().isEmpty()) return Optional.empty();
        return Optional.of(person.flatMap(inv::teamOf).orElseThrow(() -> WorkloadException.refused("the inventory has teams, and "
            + person.map(p -> "'" + p + "' is a member of none").orElse("who submits is not known") + ": say which team's queue the job"
            + " goes to with --team (one of: " + String.join(", ", inv.teams().stream().map(Team::name).toList()) + ")")));
    }

    /** The spec in the team's namespace; a spec naming another namespace (not default) is refused. */
    public static JobSpec inTeam(JobSpec spec, Team team) {
        if (!spec.namespace().equals("default") && !spec.namespace().equals(team.namespace())) {
            throw WorkloadException.refused("namespace: " + spec.namespace() + ": team " + team.name() + "'s jobs run in namespace "
                + team.namespace() + ", where its queue is (remove namespace from the spec, or set it to " + team.namespace() + ")");
        }
        return new JobSpec(spec.name(), team.namespace(), spec.image(), spec.command(), spec.gpus(), spec.gpusAt(), spec.env(),
            spec.dataset(), spec.checkpoint(), spec.pod(), spec.gpuResource());
    }

    /**
     * Why Kueue could never admit the job in the team's queue, or empty: it asks for more GPUs than the team can ever get,
     * its nominal quota plus its borrowing limit, bounded by the cohort's capacity (every team's quota of the model
     * together: Kueue lends only nominal quota) and the cluster's GPUs of the model; taken over the GPU models the team
     * can use. Whether a node can hold the job is {@link #beyondNodes}'s question.
     */
    public static Optional<String> beyondQuota(JobSpec spec, Inventory inv, Team team) {
        if (!spec.gpuResource().equals(JobSpec.WHOLE_GPU)) return Optional.empty();
        TeamFit fit = TeamFit.of(inv);
        int most = 0;
        String at = "";
        String why = "";
        for (String model : inv.gpuModels()) {
            int cluster = fit.cluster(model);
            int cohort = inv.teams().stream().mapToInt(t -> t.quota(model)).sum();
            int quota = team.quota(model);
            int reach = fit.reach(model, team);
            if (reach > most || at.isEmpty()) {
                most = reach;
                at = model;
                String limit = team.borrowingLimit().isPresent() ? "its quota " + quota + " + borrowing limit " + team.borrowingLimit().getAsInt()
                    + " = " + (quota + team.borrowingLimit().getAsInt()) : "its quota " + quota + " and no borrowing limit";
                why = limit + "; the cohort's capacity (the teams' quotas together) is " + cohort + ", the cluster has " + cluster;
            }
        }
        if (spec.gpus() <= most) return Optional.empty();
        String model = at.equals(Team.DEFAULT_MODEL) || at.isEmpty() ? "" : " of model " + at;
        return Optional.of(spec.gpusAt() + ": gpus: " + spec.gpus() + " is more than team " + team.name() + " can ever get: "
            + most + " GPU" + (most == 1 ? "" : "s") + model + " (" + why + "), so Kueue would keep the job pending forever"
            + " (expected at most " + most + ", or a larger quota or borrowing for the team in the inventory)");
    }

    /**
     * Why no node could ever fit the job's pod in the team's queue ({@link TeamFit#unfit}: more GPUs than any node has
     * free of the other teams' quota), or empty; asked after {@link #beyondQuota}.
     */
    public static Optional<String> beyondNodes(JobSpec spec, Inventory inv, Team team) {
        return TeamFit.of(inv).unfit(spec, team);
    }

    /** The Job's manifest for the team's LocalQueue, with the submitting person when known. */
    public static String render(JobSpec inTeam, Team team, Optional<String> person) {
        return JobManifest.render(inTeam, team.name(), person.filter(p -> team.members().contains(p)));
    }
}
