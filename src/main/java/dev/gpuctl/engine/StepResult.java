package dev.gpuctl.engine;

import java.util.List;

/**
 * What one step came to on one host: a value that the engine files, prints and sums up; failures travel as this,
 * never as an exception from one step to the next.
 */
sealed interface StepResult {
    /** The summary kind, as {@link Runner.Result#outcomes()} reports it. */
    Runner.Outcome outcome();

    /** Already right: nothing was done. */
    record Ok() implements StepResult {
        @Override public Runner.Outcome outcome() { return Runner.Outcome.OK; }
    }

    /** Made right, and its verify proved it. */
    record Changed() implements StepResult {
        @Override public Runner.Outcome outcome() { return Runner.Outcome.CHANGED; }
    }

    /** A dry run skipped the apply: what would change, one entry per wrong check. */
    record WouldChange(List<String> problems) implements StepResult {
        public WouldChange { problems = List.copyOf(problems); }

        @Override public Runner.Outcome outcome() { return Runner.Outcome.WOULD_CHANGE; }
    }

    /** Failed: host, step, command, exit status, stderr tail and log, in {@code failure}. */
    record Failed(StepFailure failure) implements StepResult {
        @Override public Runner.Outcome outcome() { return Runner.Outcome.FAILED; }
    }

    /**
     * Asked in a verify run: each of the step's probes as a row of the report, in order. A wrong answer makes it
     * FAILED in the summary; nothing was changed either way.
     */
    record Checked(List<VerifyReport.Check> checks) implements StepResult {
        public Checked { checks = List.copyOf(checks); }

        @Override public Runner.Outcome outcome() {
            return checks.stream().allMatch(VerifyReport.Check::ok) ? Runner.Outcome.OK : Runner.Outcome.FAILED;
        }
    }

    /** Cut short by a stop request (Ctrl-C): a place to resume from, not a failure of the host. */
    record Interrupted() implements StepResult {
        @Override public Runner.Outcome outcome() { return Runner.Outcome.INTERRUPTED; }
    }
}
