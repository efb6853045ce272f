package dev.gpuctl.workload;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.gpuctl.text.Json;
import dev.gpuctl.kube.KubeFields;
import dev.gpuctl.kube.QueueReport;
import dev.gpuctl.text.ShellWords;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;

/**
 * {@code gpuctl job list|logs|delete}, all through kubectl on the master (its admin.conf: this machine needs no
 * kubeconfig), asked on the engine by the job workflows: here, the commands each asks and how their answers are read.
 * Reads only the fields it shows ({@link KubeFields#JOB_LIST}), never a pod's environment. Delete removes only Jobs that
 * gpuctl submitted (labelled managed-by gpuctl), with their pods (propagationPolicy Background: the Job goes at once,
 * the garbage collector removes its pods).
 */
public final class JobControl {
    static final String SELECTOR = "-l " + JobManifest.MANAGED_BY + "=gpuctl";
    public static final String NEXT = "Is the cluster up? Check it with: gpuctl verify";
    static final String QUEUES_NEXT = "Are the teams' queues set up? gpuctl bootstrap installs Kueue when the inventory has teams:"
        + " (step kueue); gpuctl verify checks it";

    private JobControl() {}

    private static String where(String namespace) { return namespace == null ? "-A" : "-n " + ShellWords.quote(namespace); }

    /** What {@link #list} reads: the jobs and their pods; with {@code queued}, Kueue's ClusterQueues and workloads too. */
    public static List<String> listAsks(String namespace, boolean queued) {
        List<String> asks = new ArrayList<>(List.of(MasterAnswers.command("get jobs " + where(namespace) + " " + SELECTOR, KubeFields.JOB_LIST),
            MasterAnswers.command("get pods " + where(namespace) + " " + SELECTOR, KubeFields.PODS)));
        if (queued) {
            asks.add(MasterAnswers.command("get clusterqueues", KubeFields.CLUSTER_QUEUES));
            asks.add(MasterAnswers.command("get workloads -A", KubeFields.WORKLOADS));
        }
        return asks;
    }

    /**
     * The cluster's gpuctl jobs (one namespace, or all when {@code namespace} is null); with {@code queued} (the
     * inventory has teams), a waiting job's place in its team's queue as Kueue orders it ({@link QueueReport#jobPlaces}).
     */
    public static List<JobList.Row> list(MasterAnswers master, String namespace, boolean queued) {
        String where = where(namespace);
        String jobs = master.fields("get jobs " + where + " " + SELECTOR, KubeFields.JOB_LIST, NEXT);
        String pods = master.fields("get pods " + where + " " + SELECTOR, KubeFields.PODS, NEXT);
        Instant now = Instant.now();
        List<JobList.Row> rows;
        try {
            rows = JobList.rows(jobs, pods, now);
        } catch (IllegalArgumentException e) {
            throw new WorkloadException(master.host() + ": " + e.getMessage() + ". " + NEXT);
        }
        if (!queued) return rows;
        // the queue order is the ClusterQueue's, over every namespace: the places are counted cluster-wide
        String cqs = master.fields("get clusterqueues", KubeFields.CLUSTER_QUEUES, QUEUES_NEXT);
        String wls = master.fields("get workloads -A", KubeFields.WORKLOADS, QUEUES_NEXT);
        try {
            return JobList.withPlaces(rows, QueueReport.jobPlaces(Json.MAPPER.readTree(cqs), Json.MAPPER.readTree(wls), now));
        } catch (JsonProcessingException | RuntimeException e) {
            throw new WorkloadException(master.host() + ": cannot read Kueue's queues: " + e.getMessage() + ". " + QUEUES_NEXT);
        }
    }

    /** What {@link #existing} reads: the namespace's jobs, the job's pods. */
    public static List<String> existingAsks(String namespace, String name) {
        return List.of(MasterAnswers.command("get jobs -n " + ShellWords.quote(namespace), KubeFields.JOB_LIST),
            MasterAnswers.command("get pods -n " + ShellWords.quote(namespace) + " -l job-name=" + ShellWords.quote(name), KubeFields.PODS));
    }

    /** The job NS/NAME whatever its labels; refused (exit 2) when the namespace has no such Job. */
    static JobList.Row existing(MasterAnswers master, String namespace, String name) {
        String jobs = master.fields("get jobs -n " + ShellWords.quote(namespace), KubeFields.JOB_LIST, NEXT);
        String pods = master.fields("get pods -n " + ShellWords.quote(namespace) + " -l job-name=" + ShellWords.quote(name), KubeFields.PODS, NEXT);
        return JobList.find(JobList.rows(jobs, pods, Instant.now()), namespace, name).orElseThrow(() -> WorkloadException.refused(
            "no job " + namespace + "/" + name + " in the cluster (gpuctl job list shows the jobs; a finished job with"
                + " ttlSecondsAfterFinished is deleted, its logs with it, once that time has passed)"));
    }

    private static String logsArgs(String namespace, String name, OptionalInt tail) {
        return "-n " + ShellWords.quote(namespace) + " logs " + ShellWords.quote("job/" + name)
            + tail.stream().mapToObj(n -> " --tail=" + n).findFirst().orElse("");
    }

    /** What {@link #logs} reads: the job (it must exist), then its pod's logs. */
    public static List<String> logsAsks(String namespace, String name, OptionalInt tail) {
        List<String> asks = new ArrayList<>(existingAsks(namespace, name));
        asks.add(MasterAnswers.command(logsArgs(namespace, name, tail)));
        return asks;
    }

    /** The logs of the job's pod (the newest, as kubectl picks it), also of a finished job while its pod exists. */
    public static String logs(MasterAnswers master, String namespace, String name, OptionalInt tail) {
        existing(master, namespace, name);
        return master.kubectl(logsArgs(namespace, name, tail),
            "A pod that is still being created has no logs yet: see its state with gpuctl job list.");
    }

    /** The command that deletes the job and its pods (propagationPolicy Background). */
    public static String deleteCommand(String namespace, String name) {
        return MasterAnswers.command("-n " + ShellWords.quote(namespace) + " delete job " + ShellWords.quote(name) + " --cascade=background");
    }

    /**
     * The job to delete: it exists and gpuctl submitted it; refused (exit 2) otherwise, before anything is deleted.
     * Asks {@link #existingAsks}.
     */
    public static JobList.Row deletable(MasterAnswers master, String namespace, String name) {
        JobList.Row job = existing(master, namespace, name);
        if (!job.managed()) {
            throw WorkloadException.refused("job " + namespace + "/" + name + " was not submitted by gpuctl (it has no label "
                + JobManifest.MANAGED_BY + "=gpuctl); gpuctl deletes only its own jobs: delete it with kubectl if it is yours");
        }
        return job;
    }
}
