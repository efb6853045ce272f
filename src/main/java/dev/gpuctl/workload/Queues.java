package dev.gpuctl.workload;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.gpuctl.hostconf.Json;
import dev.gpuctl.hostconf.KubeFields;
import dev.gpuctl.hostconf.QueueReport;
import dev.gpuctl.remote.Remote;
import java.time.Instant;
import java.util.List;

/** {@code gpuctl queue}: the teams' ClusterQueues and Workloads, read through kubectl on the master ({@link QueueReport}). */
public final class Queues {
    static final String NEXT = "Are the teams' queues set up? gpuctl bootstrap installs Kueue when the inventory has teams: (step kueue);"
        + " gpuctl verify checks it";

    private Queues() {}

    public static List<QueueReport.Team> report(Remote master, List<String> teams, Instant now) {
        String cqs = GpuSurvey.fields(master, "get clusterqueues", KubeFields.CLUSTER_QUEUES, NEXT);
        String wls = GpuSurvey.fields(master, "get workloads -A", KubeFields.WORKLOADS, NEXT);
        try {
            return QueueReport.of(Json.MAPPER.readTree(cqs), Json.MAPPER.readTree(wls), now, teams);
        } catch (JsonProcessingException | RuntimeException e) {
            throw new WorkloadException(master.name() + ": cannot read Kueue's queues: " + e.getMessage() + ". " + NEXT);
        }
    }
}
