package dev.gpuctl.workflow;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.hostconf.Json;
import dev.gpuctl.hostconf.KubeFields;
import dev.gpuctl.hostconf.UsageReport;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.steps.Facts;
import dev.gpuctl.steps.Phase;
import dev.gpuctl.steps.UsageRecordsStep;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * {@code gpuctl usage}: one read-only round on the master ({@link UsageRecordsStep}: Kueue's Workloads and the Jobs,
 * kept by key), then the report summed from them ({@link UsageReport}) for the window {@code [since, now]}.
 */
public final class UsageWorkflow implements Workflow<UsageWorkflow.Outcome> {
    static final String NEXT = "Are the teams' queues set up? gpuctl bootstrap installs Kueue when the inventory has teams:"
        + " (step kueue); gpuctl verify checks it";

    private final Instant since;
    private final Instant now;
    private final UsageReport.By by;

    public UsageWorkflow(Instant since, Instant now, UsageReport.By by) {
        this.since = since;
        this.now = now;
        this.by = by;
    }

    /**
     * What the command reports: the report, or why there is none ({@code problem}: a record not read, in words) beside
     * the run's result (its log directory, the master not reached).
     */
    public record Outcome(Runner.Result result, Optional<UsageReport.Report> report, String problem) {}

    @Override public List<Phase> first() {
        return List.of(new Phase("usage", "GPU-hours per team and person", List.of(new UsageRecordsStep()), true));
    }

    @Override public Optional<List<Phase>> next(Runner.Result done) { return Optional.empty(); }

    @Override public Outcome outcome(Runner.Result last, Facts learned) {
        Optional<ExecResult> workloads = learned.kept(UsageRecordsStep.WORKLOADS_KEY);
        Optional<ExecResult> jobs = learned.kept(UsageRecordsStep.JOBS_KEY);
        if (workloads.isEmpty() || jobs.isEmpty()) return new Outcome(last, Optional.empty(), "the master was not asked");
        try {
            return new Outcome(last, Optional.of(report(workloads.get(), jobs.get(), since, now, by)), "");
        } catch (IllegalArgumentException e) {
            return new Outcome(last, Optional.empty(), e.getMessage());
        }
    }

    /** The report from the master's two answers; an answer that failed or is not the asked fields is the exception's message. */
    static UsageReport.Report report(ExecResult workloads, ExecResult jobs, Instant since, Instant now, UsageReport.By by) {
        var w = read(workloads, UsageRecordsStep.WORKLOADS, KubeFields.WORKLOADS);
        var j = read(jobs, UsageRecordsStep.JOBS, KubeFields.USAGE_JOBS);
        return UsageReport.sum(UsageReport.runs(w, j, now), since, now, by);
    }

    private static com.fasterxml.jackson.databind.JsonNode read(ExecResult r, String command, KubeFields.Query query) {
        if (!r.ok()) {
            throw new IllegalArgumentException("`" + command.substring(0, command.indexOf(" -o ")) + "` failed (exit " + r.exit() + "): "
                + r.tail(3).strip() + ". " + NEXT);
        }
        try {
            return Json.MAPPER.readTree(query.json(r.stdout()));
        } catch (com.fasterxml.jackson.core.JsonProcessingException | IllegalArgumentException e) {
            throw new IllegalArgumentException("`" + command.substring(0, command.indexOf(" -o ")) + "` printed what gpuctl cannot read: "
                + e.getMessage());
        }
    }
}
