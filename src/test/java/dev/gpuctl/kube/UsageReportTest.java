package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.text.Json;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class UsageReportTest {
    static final Instant NOW = Instant.parse("2026-12-05T12:00:00Z");

    static JsonNode json(String s) throws Exception { return Json.MAPPER.readTree(s); }

    static String workload(String ns, String job, String cq, int gpus, String admitted, String finished) {
        String conds = "{\"type\":\"QuotaReserved\",\"status\":\"True\",\"lastTransitionTime\":\"" + admitted + "\"},"
            + "{\"type\":\"Admitted\",\"status\":\"" + (admitted.isEmpty() ? "False" : "True") + "\",\"lastTransitionTime\":\"" + admitted + "\"}"
            + (finished.isEmpty() ? "" : ",{\"type\":\"Finished\",\"status\":\"True\",\"reason\":\"Succeeded\",\"lastTransitionTime\":\"" + finished + "\"}");
        return "{\"metadata\":{\"namespace\":\"" + ns + "\",\"name\":\"job-" + job + "-1\",\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"" + job + "\"}]},"
            + "\"spec\":{\"queueName\":\"" + cq + "\"},\"status\":{\"conditions\":[" + conds + "]"
            + (admitted.isEmpty() ? "" : ",\"admission\":{\"clusterQueue\":\"" + cq + "\",\"podSetAssignments\":[{\"name\":\"main\",\"flavors\":{\"nvidia.com/gpu\":\"gpu\"},\"resourceUsage\":{\"nvidia.com/gpu\":\"" + gpus + "\"},\"count\":1}]}")
            + "}}";
    }

    static String job(String ns, String name, String queue, String person, int gpus, String start, String end) {
        return "{\"metadata\":{\"namespace\":\"" + ns + "\",\"name\":\"" + name + "\",\"labels\":{"
            + (queue.isEmpty() ? "" : "\"kueue.x-k8s.io/queue-name\":\"" + queue + "\"" + (person.isEmpty() ? "" : ","))
            + (person.isEmpty() ? "" : "\"gpuctl.dev/person\":\"" + person + "\"") + "}},"
            + "\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"" + gpus + "\"}}}]}}},"
            + "\"status\":{" + (start.isEmpty() ? "" : "\"startTime\":\"" + start + "\"") + (end.isEmpty() ? "" : ",\"completionTime\":\"" + end + "\"") + "}}";
    }

    static JsonNode list(String... items) throws Exception { return json("{\"items\":[" + String.join(",", items) + "]}"); }

    @Test void aFinishedJobCountsItsGpusTimesTheTimeKueueHeldThem() throws Exception {
        List<UsageReport.Run> runs = UsageReport.runs(
            list(workload("team-a", "a1", "a", 2, "2026-12-05T08:00:00Z", "2026-12-05T09:30:00Z")),
            list(job("team-a", "a1", "a", "alice", 2, "2026-12-05T08:00:05Z", "2026-12-05T09:30:00Z")), NOW);
        assertEquals(List.of(new UsageReport.Run("team-a", "a1", "a", "alice", 2, Instant.parse("2026-12-05T08:00:00Z"),
            Optional.of(Instant.parse("2026-12-05T09:30:00Z")), "workload")), runs);
        UsageReport.Report r = UsageReport.sum(runs, NOW.minusSeconds(86400), NOW, UsageReport.By.TEAM);
        assertEquals(List.of(new UsageReport.Row("a", "a", 3.0, 1)), r.rows());
    }

    @Test void aRunningJobCountsUpToNow() throws Exception {
        List<UsageReport.Run> runs = UsageReport.runs(list(workload("team-b", "b1", "b", 1, "2026-12-05T10:00:00Z", "")),
            list(job("team-b", "b1", "b", "bob", 1, "2026-12-05T10:00:00Z", "")), NOW);
        UsageReport.Report r = UsageReport.sum(runs, NOW.minusSeconds(86400), NOW, UsageReport.By.PERSON);
        assertEquals(List.of(new UsageReport.Row("bob", "b", 2.0, 1)), r.rows());
    }

    @Test void theWindowCutsARunThatStartedBeforeIt() throws Exception {
        // 4 GPUs from 2026-12-01 00:00 to 12-05 06:00; a window of the last 12 h counts 06:00 - 00:00 = 6 h of it
        List<UsageReport.Run> runs = UsageReport.runs(list(workload("team-a", "big", "a", 4, "2026-12-01T00:00:00Z", "2026-12-05T06:00:00Z")),
            list(job("team-a", "big", "a", "", 4, "", "")), NOW);
        UsageReport.Report r = UsageReport.sum(runs, NOW.minusSeconds(12 * 3600), NOW, UsageReport.By.TEAM);
        assertEquals(24.0, r.rows().get(0).gpuHours(), 1e-9);
        UsageReport.Report person = UsageReport.sum(runs, NOW.minusSeconds(12 * 3600), NOW, UsageReport.By.PERSON);
        assertEquals(UsageReport.UNKNOWN_PERSON, person.rows().get(0).name());
        // a window after the run: nothing
        assertTrue(UsageReport.sum(runs, Instant.parse("2026-12-05T07:00:00Z"), NOW, UsageReport.By.TEAM).rows().isEmpty());
    }

    @Test void hoursAreSplitIntoUtcDays() throws Exception {
        List<UsageReport.Run> runs = UsageReport.runs(list(workload("team-a", "x", "a", 2, "2026-12-03T22:00:00Z", "2026-12-04T03:00:00Z")),
            list(job("team-a", "x", "a", "alice", 2, "", "")), NOW);
        UsageReport.Report r = UsageReport.sum(runs, Instant.parse("2026-12-03T00:00:00Z"), NOW, UsageReport.By.TEAM);
        var days = r.days().get(0).hours();
        assertEquals(4.0, days.get(LocalDate.parse("2026-12-03")), 1e-9);
        assertEquals(6.0, days.get(LocalDate.parse("2026-12-04")), 1e-9);
        assertEquals(0.0, days.get(LocalDate.parse("2026-12-05")), 1e-9);
        assertEquals(3, days.size());
    }

    @Test void aPendingOrPreemptedJobAndAJobOutsideTheQueuesHaveNoRun() throws Exception {
        List<UsageReport.Run> runs = UsageReport.runs(list(workload("team-a", "waits", "a", 1, "", "")),
            list(job("team-a", "waits", "a", "alice", 1, "", ""), job("default", "plain", "", "", 1, "2026-12-05T10:00:00Z", "")), NOW);
        assertEquals(List.of(), runs);
    }

    @Test void withoutItsWorkloadTheJobsTimesAndTemplateCount() throws Exception {
        List<UsageReport.Run> runs = UsageReport.runs(list(),
            list(job("team-b", "old", "b", "bob", 3, "2026-12-05T09:00:00Z", "2026-12-05T10:00:00Z")), NOW);
        assertEquals("job", runs.get(0).source());
        assertEquals(3.0, UsageReport.sum(runs, NOW.minusSeconds(86400), NOW, UsageReport.By.TEAM).total(), 1e-9);
    }

    @Test void theTextHasTheTableTheNoteAndABarPerDay() throws Exception {
        List<UsageReport.Run> runs = UsageReport.runs(
            list(workload("team-a", "a1", "a", 2, "2026-12-05T08:00:00Z", "2026-12-05T10:00:00Z"),
                workload("team-b", "b1", "b", 1, "2026-12-05T10:00:00Z", "2026-12-05T11:00:00Z")),
            list(job("team-a", "a1", "a", "alice", 2, "", ""), job("team-b", "b1", "b", "bob", 1, "", "")), NOW);
        UsageReport.Report r = UsageReport.sum(runs, Instant.parse("2026-12-04T12:00:00Z"), NOW, UsageReport.By.TEAM);
        String text = UsageReport.text("lab", r);
        assertTrue(text.startsWith("GPU-hours on lab, 2026-12-04 12:00 to 2026-12-05 12:00 (UTC)\n\n"
            + "TEAM   GPU-HOURS  JOBS  SHARE\n"
            + "a           4.00     1    80%\n"
            + "b           1.00     1    20%\n"
            + "total       5.00     2\n"), text);
        assertTrue(text.contains("measured utilisation is not kept in the cluster"), text);
        assertTrue(text.contains("a: GPU-hours per day\n  2026-12-04  0.00\n  2026-12-05  " + "█".repeat(40) + " 4.00\n"), text);
        assertTrue(text.contains("b: GPU-hours per day\n  2026-12-04  0.00\n  2026-12-05  " + "█".repeat(10) + " 1.00\n"), text);
        assertEquals("team,gpu_hours,jobs\r\na,4.00,1\r\nb,1.00,1\r\n", UsageReport.csv(r));
        JsonNode doc = UsageReport.document("lab", r);
        assertEquals("gpuctl.usage/v1", doc.path("schema").asText());
        assertTrue(doc.path("measuredUtilisation").isNull());
        assertEquals(5.0, doc.path("totalGpuHours").asDouble(), 1e-9);
    }

    @Test void barsUseEighthBlocks() {
        assertEquals("████▌", UsageReport.bar(4.5, 40));
        assertEquals("▏", UsageReport.bar(0.01, 40));
        assertEquals("", UsageReport.bar(0, 40));
    }

    @Test void csvFieldsAreQuotedAndFormulasDefused() {
        assertEquals("\"a,b\"", UsageReport.csvField("a,b"));
        assertEquals("'=cmd", UsageReport.csvField("=cmd"));
    }
}
