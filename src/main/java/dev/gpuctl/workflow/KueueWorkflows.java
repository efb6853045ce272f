package dev.gpuctl.workflow;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.text.Json;
import dev.gpuctl.kube.QueueReport;
import dev.gpuctl.kube.UsageReport;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.steps.KueueRecordsStep;
import dev.gpuctl.steps.KueueRecordsStep.Record;
import dev.gpuctl.step.Phase;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@code gpuctl queue} and {@code gpuctl usage}: one read-only round on the master ({@link KueueRecordsStep}: the
 * Kueue records each report reads, kept by key), then the report built from them, or why there is none.
 */
public final class KueueWorkflows {
    static final String NEXT = "Are the teams' queues set up? gpuctl bootstrap installs Kueue when the inventory has teams:"
        + " (step kueue); gpuctl verify checks it";

    private KueueWorkflows() {}

    /**
     * What a report command gets: the report, or why there is none ({@code problem}: a record not read, in words) beside
     * the run's result (its log directory, the master not reached).
     */
    public record Outcome<T>(Runner.Result result, Optional<T> report, String problem) {}

    /** {@code gpuctl queue}: the teams' queues ({@code teams}; all when empty) as of {@code now}. */
    public static Workflow<Outcome<List<QueueReport.Team>>> queue(List<String> teams, Instant now) {
        return of("queue", "the teams' queues", List.of(Record.CLUSTER_QUEUES, Record.WORKLOADS),
            r -> QueueReport.of(r.get(Record.CLUSTER_QUEUES), r.get(Record.WORKLOADS), now, teams));
    }

    /** {@code gpuctl usage}: GPU-hours in {@code [since, now]}, per team or person. */
    public static Workflow<Outcome<UsageReport.Report>> usage(Instant since, Instant now, UsageReport.By by) {
        return of("usage", "GPU-hours per team and person", List.of(Record.WORKLOADS, Record.JOBS),
            r -> UsageReport.sum(UsageReport.runs(r.get(Record.WORKLOADS), r.get(Record.JOBS), now), since, now, by));
    }

    static <T> Workflow<Outcome<T>> of(String id, String title, List<Record> records, Function<Map<Record, JsonNode>, T> report) {
        List<Phase> phases = List.of(new Phase(id, title, List.of(new KueueRecordsStep(records)), true));
        return new Workflow<>() {
            @Override public List<Phase> first() { return phases; }
            @Override public Optional<List<Phase>> next(Runner.Result done) { return Optional.empty(); }
            @Override public Outcome<T> outcome(Runner.Result last, Facts learned) {
                Map<Record, JsonNode> read = new java.util.EnumMap<>(Record.class);
                try {
                    for (Record r : records) {
                        Optional<ExecResult> answer = learned.kept(r.key);
                        if (answer.isEmpty()) return new Outcome<>(last, Optional.empty(), "the master was not asked");
                        read.put(r, read(answer.get(), r));
                    }
                    return new Outcome<>(last, Optional.of(report.apply(read)), "");
                } catch (IllegalArgumentException e) {
                    return new Outcome<>(last, Optional.empty(), e.getMessage());
                }
            }
        };
    }

    /** A record's answer as its {@code -o json}-shaped list; one that failed or is not the asked fields is the exception's message. */
    static JsonNode read(ExecResult r, Record record) {
        if (!r.ok()) throw new IllegalArgumentException("`kubectl " + record.args + "` failed (exit " + r.exit() + "): " + r.tail(3).strip() + ". " + NEXT);
        try {
            return Json.MAPPER.readTree(record.query.json(r.stdout()));
        } catch (com.fasterxml.jackson.core.JsonProcessingException | IllegalArgumentException e) {
            throw new IllegalArgumentException("`kubectl " + record.args + "` printed what gpuctl cannot read: " + e.getMessage());
        }
    }
}
