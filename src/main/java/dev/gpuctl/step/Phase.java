package dev.gpuctl.step;

import java.util.List;

/**
 * Steps that run together: within a phase every host runs its steps in order, hosts in parallel;
 * a phase starts when the one before has finished on every host.
 */
public record Phase(String id, String title, List<Step> steps, boolean readOnly) {
    public Phase { steps = List.copyOf(steps); }
}
