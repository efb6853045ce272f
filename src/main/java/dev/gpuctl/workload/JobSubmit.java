package dev.gpuctl.workload;

import dev.gpuctl.kube.KubeFields;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.text.ShellWords;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code gpuctl job submit}: checks the job against the cluster (a node must offer its GPUs, the name must be free),
 * then uploads the rendered Job to the master and applies it there (the job workflow's session asks and changes;
 * here, what it asks, how the answers are judged, and the commands). Nothing is uploaded or applied when a check fails.
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

    /** Nothing was applied: what a failed check or mkdir says next. */
    public static final String NOT_APPLIED = "Nothing was applied. Is the cluster up? Check it with: gpuctl verify";

    /** What {@link #check} reads: the nodes' allocatable GPUs, the namespace's jobs. */
    public static List<String> checkAsks(JobSpec spec) {
        return List.of(MasterAnswers.command("get nodes", KubeFields.NODES), MasterAnswers.command("get jobs -n " + spec.namespace(), KubeFields.JOBS));
    }

    /** The job checked against the cluster: a node offers its GPUs, its name is free; refused (exit 2) otherwise. */
    public static void check(JobSpec spec, MasterAnswers master) {
        String nodes = master.fields("get nodes", KubeFields.NODES, NOT_APPLIED);
        Map<String, Integer> gpus = new LinkedHashMap<>();
        GpuUsage.allocatable(nodes, spec.gpuResource()).forEach(gpus::put);
        unfit(spec, gpus, spec.gpuResource() + " allocatable in the cluster now").ifPresent(m -> {
            throw WorkloadException.refused(m);
        });
        String jobs = master.fields("get jobs -n " + spec.namespace(), KubeFields.JOBS, NOT_APPLIED);
        GpuUsage.jobStatus(jobs, spec.name()).ifPresent(state -> {
            throw WorkloadException.refused("job " + spec.namespace() + "/" + spec.name() + " already exists (" + state
                + "); a Job's pods cannot be changed: delete it first (kubectl -n " + spec.namespace() + " delete job "
                + spec.name() + ") or choose another name");
        });
    }

    /** The directory for the manifests, made on the master before the upload. */
    public static final String MKDIR = "mkdir -p -m 0700 " + ShellWords.quote(Kube.DIR) + " " + ShellWords.quote(DIR);

    /** The command that applies the uploaded manifest ("job.batch/NAME created"). */
    public static String applyCommand(JobSpec spec) { return MasterAnswers.command("apply -f " + ShellWords.quote(path(spec))); }

    /** What a failed apply says next. */
    public static String applyNext(JobSpec spec, String host) { return "The job's manifest is " + path(spec) + " on " + host + "."; }
}
