package dev.gpuctl.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.KubeFields;
import dev.gpuctl.kube.UsageReport;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.steps.KueueRecordsStep.Record;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class KueueWorkflowsTest {
    static final Instant NOW = Instant.parse("2026-12-05T12:00:00Z");

    @Test void oneReadOnlyRoundOnTheMasterThenTheReportFromItsAnswers() {
        var wf = KueueWorkflows.usage(NOW.minusSeconds(86400), NOW, UsageReport.By.TEAM);
        assertEquals(1, wf.first().size());
        assertTrue(wf.first().get(0).readOnly());
        assertTrue(wf.next(null).isEmpty());
        Facts facts = new Facts();
        // kubectl's jsonpath output: one line per item, the query's fields separated by tabs
        facts.keep(Record.WORKLOADS.key, new ExecResult(0, String.join("\t", "team-a", "job-a1-x", "2026-12-05T08:00:00Z",
            "[{\"kind\":\"Job\",\"name\":\"a1\"}]", "a", "0",
            "[{\"type\":\"Admitted\",\"status\":\"True\",\"lastTransitionTime\":\"2026-12-05T08:00:00Z\"},"
                + "{\"type\":\"Finished\",\"status\":\"True\",\"lastTransitionTime\":\"2026-12-05T08:30:00Z\"}]",
            "{\"clusterQueue\":\"a\",\"podSetAssignments\":[{\"resourceUsage\":{\"nvidia.com/gpu\":\"2\"}}]}") + "\n", ""));
        assertEquals(8, KubeFields.WORKLOADS.paths().size());
        facts.keep(Record.JOBS.key, new ExecResult(0, String.join("\t", "team-a", "a1",
            "{\"kueue.x-k8s.io/queue-name\":\"a\",\"gpuctl.dev/person\":\"alice\"}", "1", "2026-12-05T08:00:01Z", "2026-12-05T08:30:00Z",
            "[]", "{\"limits\":{\"nvidia.com/gpu\":\"2\"}}") + "\n", ""));
        var o = wf.outcome(null, facts);
        assertEquals("", o.problem());
        assertEquals(1.0, o.report().orElseThrow().total(), 1e-9);
    }

    @Test void kueueNotInstalledIsSaid() {
        Facts facts = new Facts();
        facts.keep(Record.WORKLOADS.key, new ExecResult(1, "", "error: the server doesn't have a resource type \"workloads\""));
        facts.keep(Record.JOBS.key, new ExecResult(0, "", ""));
        var o = KueueWorkflows.usage(NOW.minusSeconds(60), NOW, UsageReport.By.TEAM).outcome(null, facts);
        assertTrue(o.report().isEmpty());
        assertTrue(o.problem().contains("`kubectl get workloads.kueue.x-k8s.io -A` failed (exit 1): error: the server doesn't have a resource type \"workloads\". Are the teams' queues"
            + " set up?"), o.problem());
    }

    @Test void queueReadsTheClusterQueuesAndWorkloads() {
        var wf = KueueWorkflows.queue(java.util.List.of(), NOW);
        Facts facts = new Facts();
        facts.keep(Record.CLUSTER_QUEUES.key, new ExecResult(0, "", ""));
        facts.keep(Record.WORKLOADS.key, new ExecResult(0, "", ""));
        var o = wf.outcome(null, facts);
        assertEquals(java.util.List.of(), o.report().orElseThrow());
        assertTrue(KueueWorkflows.queue(java.util.List.of(), NOW).outcome(null, new Facts()).report().isEmpty(), "not asked: no report");
    }
}
