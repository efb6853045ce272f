package dev.gpuctl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.KubeFields;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** gpuctl job list from the master's kubectl answers: status, GPUs, node and age of each job; pods matched by owner. */
class JobListTest {
    static final Instant NOW = Instant.parse("2025-03-01T12:00:00Z");

    /** kubectl's jsonpath lines for {@link KubeFields#JOB_LIST}, as the master prints them. */
    static final String JOBS = String.join("\n",
        "default\ttrain-a\t2025-03-01T11:00:00Z\t{\"app.kubernetes.io/managed-by\":\"gpuctl\"}\t1\t\t\t\t{\"limits\":{\"nvidia.com/gpu\":\"2\"}}",
        "vision\tdone\t2025-03-01T10:00:00Z\t{\"app.kubernetes.io/managed-by\":\"gpuctl\"}\t\t1\t\t"
            + "[{\"type\":\"SuccessCriteriaMet\",\"status\":\"True\"},{\"type\":\"Complete\",\"status\":\"True\"}]\t{\"limits\":{\"nvidia.com/gpu\":1}}",
        "default\tslow\t2025-03-01T11:59:30Z\t{\"app.kubernetes.io/managed-by\":\"gpuctl\"}\t\t\t1\t"
            + "[{\"type\":\"Failed\",\"status\":\"True\",\"reason\":\"DeadlineExceeded\"}]\t{\"limits\":{\"nvidia.com/gpu\":\"1\",\"cpu\":\"4\"}}",
        "default\twaiting\t2025-03-01T11:58:00Z\t{\"team\":\"x\"}\t1\t\t\t\t{\"limits\":{\"nvidia.com/gpu\":\"4\"}}", "");

    static final String PODS = String.join("\n",
        pod("default", "train-a-abcde", "2025-03-01T11:00:01Z", "train-a", "h2", "Running"),
        pod("vision", "done-xyz12", "2025-03-01T10:00:01Z", "done", "h1", "Succeeded"),
        pod("default", "slow-old11", "2025-03-01T11:59:31Z", "slow", "h1", "Failed"),
        pod("default", "waiting-p0000", "2025-03-01T11:58:01Z", "waiting", "", "Pending"),
        pod("vision", "train-a-other", "2025-03-01T11:00:01Z", "train-a", "h9", "Running"), "");

    static String pod(String ns, String name, String created, String job, String node, String phase) {
        return String.join("\t", ns, name, created, "[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"" + job + "\"}]",
            node, phase, "", "", "", "", "");
    }

    static List<JobList.Row> rows() {
        return JobList.rows(KubeFields.JOB_LIST.json(JOBS), KubeFields.PODS.json(PODS), NOW);
    }

    @Test void eachJobWithItsStateGpusNodeAndAgeOldestFirst() {
        assertEquals(List.of(
            new JobList.Row("vision", "done", "Complete", 1, "h1", "120m", true),
            new JobList.Row("default", "train-a", "Running", 2, "h2", "60m", true),
            new JobList.Row("default", "waiting", "Pending", 4, "", "2m", false),
            new JobList.Row("default", "slow", "Failed (DeadlineExceeded)", 1, "h1", "30s", true)), rows());
    }

    @Test void theTable() {
        assertEquals("""
            NAMESPACE  NAME     STATUS                     GPUS  NODE  AGE
            vision     done     Complete                   1     h1    120m
            default    train-a  Running                    2     h2    60m
            default    waiting  Pending                    4     -     2m
            default    slow     Failed (DeadlineExceeded)  1     h1    30s
            """, JobList.text(rows()));
        assertEquals("No gpuctl jobs in the cluster (gpuctl job submit SPEC starts one).\n", JobList.text(List.of()));
    }

    @Test void findIsByNamespaceAndName() {
        assertEquals("h2", JobList.find(rows(), "default", "train-a").orElseThrow().node());
        assertTrue(JobList.find(rows(), "vision", "train-a").isEmpty());
        assertFalse(JobList.find(rows(), "default", "waiting").orElseThrow().managed());
    }

    @Test void notAListIsAnError() {
        assertThrows(IllegalArgumentException.class, () -> JobList.rows("{}", "{\"items\":[]}", NOW));
        assertThrows(IllegalArgumentException.class, () -> JobList.rows("Error", "{\"items\":[]}", NOW));
    }

    @Test void aWaitingJobShowsItsPlaceInTheQueueARunningOneItsState() {
        List<JobList.Row> rows = List.of(new JobList.Row("team-a", "w", "Pending", 1, "", "1m", true),
            new JobList.Row("team-a", "r", "Running", 1, "h1", "2m", true), new JobList.Row("team-a", "s", "Pending", 1, "h1", "1m", true));
        List<JobList.Row> placed = JobList.withPlaces(rows, java.util.Map.of("team-a/w", "Pending #2 in a", "team-a/r", "Admitted",
            "team-a/s", "Admitted"));
        assertEquals(List.of("Pending #2 in a", "Running", "Admitted"), placed.stream().map(JobList.Row::status).toList());
    }
}
