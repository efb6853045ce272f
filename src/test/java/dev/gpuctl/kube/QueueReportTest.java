package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.text.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** gpuctl queue's report from the ClusterQueues' and Workloads' fields as Kueue v1beta1 writes them (kueue.md §2). */
class QueueReportTest {
    static JsonNode json(String s) throws Exception { return Json.MAPPER.readTree(s.replace('\'', '"')); }

    static String cq(String name, int used, int borrowed) {
        return "{'metadata':{'name':'" + name + "'},'spec':{'cohort':'lab','resourceGroups':[{'coveredResources':['nvidia.com/gpu'],"
            + "'flavors':[{'name':'gpu','resources':[{'name':'nvidia.com/gpu','nominalQuota':2}]}]},{'coveredResources':['cpu','memory'],"
            + "'flavors':[{'name':'cpu-memory','resources':[{'name':'cpu','nominalQuota':'100k'},{'name':'memory','nominalQuota':'100Pi'}]}]}]},"
            + "'status':{'flavorsReservation':[{'name':'gpu','resources':[{'name':'nvidia.com/gpu','total':'" + used + "','borrowed':'"
            + borrowed + "'}]},{'name':'cpu-memory','resources':[{'name':'cpu','total':'0','borrowed':'0'},{'name':'memory','total':'0',"
            + "'borrowed':'0'}]}]}}";
    }

    static String wl(String ns, String job, String queue, String created, int priority, String reserved, String message) {
        return "{'metadata':{'namespace':'" + ns + "','name':'job-" + job + "-abcde','creationTimestamp':'" + created + "',"
            + "'ownerReferences':[{'kind':'Job','name':'" + job + "'}]},'spec':{'queueName':'" + queue + "','priority':" + priority + "},"
            + "'status':{'conditions':[{'type':'QuotaReserved','status':'" + reserved + "','reason':'x','message':'" + message.replace("'", "\\u0027") + "'}]"
            + (reserved.equals("True") ? ",'admission':{'clusterQueue':'" + queue + "'}" : "") + "}}";
    }

    static final String WAIT = "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu, 1 more needed";

    @Test void quotaUseBorrowingLendingAndThePendingInAdmissionOrder() throws Exception {
        JsonNode cqs = json("{'items':[" + cq("a", 3, 1) + "," + cq("b", 0, 0) + "]}");
        JsonNode wls = json("{'items':["
            + wl("team-a", "a1", "a", "2026-12-05T01:00:00Z", 0, "True", "Quota reserved in ClusterQueue a") + ","
            + wl("team-a", "a4", "a", "2026-12-05T01:00:30Z", 0, "False", WAIT) + ","
            + wl("team-a", "a5", "a", "2026-12-05T01:00:10Z", 0, "False", WAIT) + ","
            + wl("team-a", "urgent", "a", "2026-12-05T01:00:50Z", 10, "False", WAIT) + "]}");
        List<QueueReport.Team> teams = QueueReport.of(cqs, wls, Instant.parse("2026-12-05T01:02:00Z"), List.of());
        QueueReport.Team a = teams.get(0);
        assertEquals(List.of(2L, 3L, 1L, 0L), List.of(a.quota(), a.inUse(), a.borrowed(), a.lent()));
        QueueReport.Team b = teams.get(1);
        assertEquals(List.of(2L, 0L, 0L, 1L), List.of(b.quota(), b.inUse(), b.borrowed(), b.lent()), "b's idle GPU is what a borrows");
        assertEquals(List.of("urgent", "a5", "a4"), a.pending().stream().map(QueueReport.Pending::job).toList(),
            "higher priority first, then the older");
        assertEquals(Duration.ofSeconds(110), a.pending().get(1).waiting());
        assertEquals(WAIT, a.pending().get(1).reason());
        String table = QueueReport.table(teams);
        assertTrue(table.startsWith("TEAM  QUOTA  IN USE  BORROWED  LENT  RUNNING  PENDING\na     2      3       1         0     1        3\n"), table);
        assertTrue(table.contains("Pending in a, in admission order:\n  1. team-a/urgent  waiting 1m10s  " + WAIT), table);
        JsonNode doc = QueueReport.document("lab", teams, Instant.parse("2026-12-05T01:02:00Z"));
        assertEquals("gpuctl.queue/v1", doc.path("schema").asText());
        assertEquals(110, doc.path("teams").get(0).path("pending").get(1).path("waitingSeconds").asInt());
        assertEquals(1, QueueReport.of(cqs, wls, Instant.now(), List.of("b")).size());
    }

    @Test void eachQueuedJobsPlaceIsTheQueuesOrder() throws Exception {
        JsonNode cqs = json("{'items':[" + cq("a", 2, 0) + "]}");
        JsonNode wls = json("{'items':["
            + wl("team-a", "a1", "a", "2026-12-05T01:00:00Z", 0, "True", "Quota reserved in ClusterQueue a") + ","
            + wl("team-a", "a4", "a", "2026-12-05T01:00:30Z", 0, "False", WAIT) + ","
            + wl("team-a", "a5", "a", "2026-12-05T01:00:10Z", 0, "False", WAIT) + "]}");
        assertEquals(java.util.Map.of("team-a/a1", "Admitted", "team-a/a5", "Pending #1 in a", "team-a/a4", "Pending #2 in a"),
            QueueReport.jobPlaces(cqs, wls, Instant.parse("2026-12-05T01:02:00Z")));
    }

    @Test void finishedWorkloadsAreNeitherRunningNorPending() throws Exception {
        JsonNode cqs = json("{'items':[" + cq("a", 0, 0) + "]}");
        JsonNode wls = json("{'items':[{'metadata':{'namespace':'team-a','name':'w','creationTimestamp':'2026-12-05T01:00:00Z'},"
            + "'spec':{'queueName':'a'},'status':{'conditions':[{'type':'QuotaReserved','status':'True'},{'type':'Finished','status':'True'}],"
            + "'admission':{'clusterQueue':'a'}}}]}");
        QueueReport.Team a = QueueReport.of(cqs, wls, Instant.now(), List.of()).get(0);
        assertEquals(0, a.admitted());
        assertTrue(a.pending().isEmpty());
    }
}
