package dev.gpuctl.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** A plan narrowed to some hosts (as {@code bootstrap --hosts} narrows a run); steps are narrowed when the plan is built. */
public final class PlanFilter {
    private PlanFilter() {}

    /** The plan with only the named hosts; a phase left with no host is dropped. An empty set keeps every host. */
    public static Plan hosts(Plan plan, Set<String> names) {
        if (names.isEmpty()) return plan;
        List<Plan.PhasePlan> phases = new ArrayList<>();
        for (Plan.PhasePlan phase : plan.phases()) {
            List<Plan.HostPlan> hosts = phase.hosts().stream().filter(h -> names.contains(h.name())).toList();
            if (!hosts.isEmpty()) phases.add(new Plan.PhasePlan(phase.id(), phase.title(), phase.readOnly(), hosts));
        }
        return new Plan(plan.cluster(), plan.summary(), plan.cidrConflicts(), phases);
    }
}
