package dev.gpuctl.workload;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.gpuctl.hostconf.Json;
import dev.gpuctl.hostconf.KubeFields;
import dev.gpuctl.hostconf.QueueReport;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.hostconf.ShellWords;
import java.time.Instant;
import java.util.List;
import java.util.OptionalInt;

/**
 * {@code gpuctl job list|logs|delete}, all through kubectl on the master (its admin.conf: this machine needs no
 * kubeconfig). Reads only the fields it shows ({@link KubeFields#JOB_LIST}), never a pod's environment. Delete
 * removes only Jobs that gpuctl submitted (labelled managed-by gpuctl), with their pods (propagationPolicy
 * Background: the Job goes at once, the garbage collector removes its pods).
 */
public final class JobControl {
    static final String SELECTOR = "-l " + JobManifest.MANAGED_BY + "=gpuctl";
    static final String NEXT = "Is the cluster up? Check it with: gpuctl verify";
    static final String QUEUES_NEXT = "Are the teams' queues set up? gpuctl bootstrap installs Kueue when the inventory has teams:"
        + " (step kueue); gpuctl verify checks it";

    private JobControl() {}

    /** The cluster's gpuctl jobs (one namespace, or all when {@code namespace} is null). */
    public static List<JobList.Row> list(Remote master, String namespace) { return list(master, namespace, false); }

    /**
     * The cluster's gpuctl jobs; with {@code queued} (the inventory has teams), a waiting job's place in its team's
     * queue as Kueue orders it ({@link QueueReport#jobPlaces}).
     */
    public static List<JobList.Row> list(Remote master, String namespace, boolean queued) {
        String where = namespace == null ? "-A" : "-n " + ShellWords.quote(namespace);
        String jobs = GpuSurvey.fields(master, "get jobs " + where + " " + SELECTOR, KubeFields.JOB_LIST, NEXT);
        String pods = GpuSurvey.fields(master, "get pods " + where + " " + SELECTOR, KubeFields.PODS, NEXT);
        Instant now = Instant.now();
        List<JobList.Row> rows;
        try {
            rows = JobList.rows(jobs, pods, now);
        } catch (IllegalArgumentException e) {
            throw new WorkloadException(master.name() + ": " + e.getMessage() + ". " + NEXT);
        }
        if (!queued) return rows;
        // the queue order is the ClusterQueue's, over every namespace: the places are counted cluster-wide
        String cqs = GpuSurvey.fields(master, "get clusterqueues", KubeFields.CLUSTER_QUEUES, QUEUES_NEXT);
        String wls = GpuSurvey.fields(master, "get workloads -A", KubeFields.WORKLOADS, QUEUES_NEXT);
        try {
            return JobList.withPlaces(rows, QueueReport.jobPlaces(Json.MAPPER.readTree(cqs), Json.MAPPER.readTree(wls), now));
        } catch (JsonProcessingException | RuntimeException e) {
            throw new WorkloadException(master.name() + ": cannot read Kueue's queues: " + e.getMessage() + ". " + QUEUES_NEXT);
        }
    }

    /** The job NS/NAME whatever its labels; refused (exit 2) when the namespace has no such Job. */
    static JobList.Row existing(Remote master, String namespace, String name) {
        String jobs = GpuSurvey.fields(master, "get jobs -n " + ShellWords.quote(namespace), KubeFields.JOB_LIST, NEXT);
        String pods = GpuSurvey.fields(master, "get pods -n " + ShellWords.quote(namespace) + " -l job-name=" + ShellWords.quote(name), KubeFields.PODS, NEXT);
        return JobList.find(JobList.rows(jobs, pods, Instant.now()), namespace, name).orElseThrow(() -> WorkloadException.refused(
            "no job " + namespace + "/" + name + " in the cluster (gpuctl job list shows the jobs; a finished job with"
                + " ttlSecondsAfterFinished is deleted, its logs with it, once that time has passed)"));
    }

    /** The logs of the job's pod (the newest, as kubectl picks it), also of a finished job while its pod exists. */
    public static String logs(Remote master, String namespace, String name, OptionalInt tail) {
        existing(master, namespace, name);
        return GpuSurvey.kubectl(master, "-n " + ShellWords.quote(namespace) + " logs " + ShellWords.quote("job/" + name)
                + tail.stream().mapToObj(n -> " --tail=" + n).findFirst().orElse(""),
            "A pod that is still being created has no logs yet: see its state with gpuctl job list.");
    }

    /** Deletes a Job that gpuctl submitted, and its pods; returns kubectl's answer ("job.batch \"NAME\" deleted"). */
    public static String delete(Remote master, String namespace, String name) {
        JobList.Row job = existing(master, namespace, name);
        if (!job.managed()) {
            throw WorkloadException.refused("job " + namespace + "/" + name + " was not submitted by gpuctl (it has no label "
                + JobManifest.MANAGED_BY + "=gpuctl); gpuctl deletes only its own jobs: delete it with kubectl if it is yours");
        }
        return GpuSurvey.kubectl(master, "-n " + ShellWords.quote(namespace) + " delete job " + ShellWords.quote(name) + " --cascade=background", NEXT);
    }
}
