package dev.gpuctl.workload;

import dev.gpuctl.hostconf.KubeFields;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.hostconf.Kube;
import dev.gpuctl.hostconf.ShellWords;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * {@code gpuctl job submit}: checks the job against the cluster (a node must offer its GPUs, the name must be free),
 * then uploads the rendered Job to the master and applies it there. Nothing is uploaded or applied when a check fails.
 */
public final class JobSubmit {
    /** Where submitted Jobs are kept on the master (0700 directory, 0600 files). */
    public static final String DIR = Kube.DIR + "/jobs";

    private JobSubmit() {}

    /** The remote path of a job's manifest. */
    public static String path(JobSpec spec) { return DIR + "/" + spec.namespace() + "." + spec.name() + ".yaml"; }

    /**
     * Why the job can never be scheduled, or empty when a node has enough GPUs.
     *
     * @param gpusPerNode each node's GPU count
     * @param source      where the counts come from, for the message ("the cluster", "gpuctl gpus at ...")
     */
    public static Optional<String> unfit(JobSpec spec, Map<String, Integer> gpusPerNode, String source) {
        Optional<Map.Entry<String, Integer>> largest = gpusPerNode.entrySet().stream().filter(e -> e.getValue() > 0)
            .max(Map.Entry.comparingByValue());
        boolean mig = !spec.gpuResource().equals(JobSpec.WHOLE_GPU);
        if (largest.isEmpty()) {
            return Optional.of(spec.gpusAt() + ": gpus: no node offers " + spec.gpuResource() + " (" + source
                + (mig ? "); MIG devices of a profile are offered by nodes with gpuSharing.mig strategy mixed and that profile" : "")
                + "; check the GPU nodes with gpuctl verify");
        }
        if (spec.gpus() <= largest.get().getValue()) return Optional.empty();
        int most = largest.get().getValue();
        String unit = mig ? " " + spec.gpuResource() : most == 1 ? " GPU" : " GPUs";
        return Optional.of(spec.gpusAt() + ": gpus: " + spec.gpus() + " is more than any node has: the largest, "
            + largest.get().getKey() + ", has " + most + unit + " (" + source
            + "); a pod runs on one node, so the job would wait forever (expected at most " + most + ")");
    }

    /** Checks, uploads and applies; returns kubectl apply's output ("job.batch/NAME created"). */
    public static String submit(JobSpec spec, String manifest, Remote master) {
        String next = "Nothing was applied. Is the cluster up? Check it with: gpuctl verify";
        String nodes = GpuSurvey.fields(master, "get nodes", KubeFields.NODES, next);
        Map<String, Integer> gpus = new LinkedHashMap<>();
        GpuUsage.allocatable(nodes, spec.gpuResource()).forEach(gpus::put);
        unfit(spec, gpus, spec.gpuResource() + " allocatable in the cluster now").ifPresent(m -> {
            throw WorkloadException.refused(m);
        });
        String jobs = GpuSurvey.fields(master, "get jobs -n " + spec.namespace(), KubeFields.JOBS, next);
        GpuUsage.jobStatus(jobs, spec.name()).ifPresent(state -> {
            throw WorkloadException.refused("job " + spec.namespace() + "/" + spec.name() + " already exists (" + state
                + "); a Job's pods cannot be changed: delete it first (kubectl -n " + spec.namespace() + " delete job "
                + spec.name() + ") or choose another name");
        });
        String mkdir = "mkdir -p -m 0700 " + ShellWords.quote(Kube.DIR) + " " + ShellWords.quote(DIR);
        ExecResult made = master.exec(mkdir, GpuSurvey.TIMEOUT);
        if (!made.ok()) throw WorkloadException.failed(master.name(), mkdir, made, next);
        master.upload(manifest.getBytes(StandardCharsets.UTF_8), path(spec), "0600", "root:root");
        return GpuSurvey.kubectl(master, "apply -f " + ShellWords.quote(path(spec)),
            "The job's manifest is " + path(spec) + " on " + master.name() + ".");
    }
}
