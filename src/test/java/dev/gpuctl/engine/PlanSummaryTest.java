package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PlanSummaryTest {
    static Plan.StepPlan step(String id) { return new Plan.StepPlan(id, id, List.of(), List.of(), List.of(), List.of()); }

    static final Plan PLAN = new Plan("c", "s", List.of(), List.of(
        new Plan.PhasePlan("preflight", "p", true, List.of(
            new Plan.HostPlan("m", "10.0.0.1", "master", List.of(step("preflight"))),
            new Plan.HostPlan("w", "10.0.0.2", "worker", List.of(step("preflight"))))),
        new Plan.PhasePlan("nfs-server", "n", false, List.of(new Plan.HostPlan("m", "10.0.0.1", "master", List.of(step("nfs"))))),
        new Plan.PhasePlan("join", "j", false, List.of(new Plan.HostPlan("w", "10.0.0.2", "worker", List.of(step("join"))))),
        new Plan.PhasePlan("nfs-clients", "n", false, List.of(new Plan.HostPlan("w", "10.0.0.2", "worker", List.of(step("nfs")))))));

    @Test void aStepInTwoPhasesIsOneColumnAndEachHostGetsItsOwnSteps() {
        assertEquals(List.of("preflight", "nfs", "join"), PlanSummary.stepIds(PLAN));
        assertEquals("""
            Summary: 2 hosts, 3 steps (x: the step runs on that host; -: it does not)
              HOST  ROLE    GPU  preflight  nfs  join
              m     master  no   x          x    -
              w     worker  yes  x          x    x
            """, PlanSummary.render(PLAN, Map.of("m", false, "w", true)::get));
    }

    @Test void filteringByHostDropsEmptyPhases() {
        Plan onlyM = PlanFilter.hosts(PLAN, Set.of("m"));
        assertEquals(List.of("preflight", "nfs-server"), onlyM.phases().stream().map(Plan.PhasePlan::id).toList());
        assertEquals(List.of(new PlanSummary.Row("m", "10.0.0.1", "master", false, List.of("preflight", "nfs"))),
            PlanSummary.rows(onlyM, n -> false));
        assertEquals(PLAN, PlanFilter.hosts(PLAN, Set.of()));
    }

    @Test void countsSayOneWithoutAnS() {
        assertEquals("1 host", PlanSummary.count(1, "host"));
        assertEquals("0 steps", PlanSummary.count(0, "step"));
        assertEquals("2 hosts", PlanSummary.count(2, "host"));
    }
}
