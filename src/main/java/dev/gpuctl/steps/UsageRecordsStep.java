package dev.gpuctl.steps;

import dev.gpuctl.hostconf.Kube;
import dev.gpuctl.hostconf.KubeFields;
import java.util.List;

/**
 * {@code gpuctl usage}, on the master: the cluster's records of who held GPUs when, asked read-only and kept by key for
 * the report ({@link dev.gpuctl.hostconf.UsageReport}): Kueue's Workloads (their Admitted and Finished conditions and
 * admission) and the Jobs (their queue and person labels, start and completion). Nothing is judged or changed here.
 */
public final class UsageRecordsStep implements Step {
    public static final String WORKLOADS_KEY = "usage.workloads";
    public static final String JOBS_KEY = "usage.jobs";
    public static final String WORKLOADS = Kube.kubectl("get workloads.kueue.x-k8s.io -A " + KubeFields.WORKLOADS.outputFlag());
    public static final String JOBS = Kube.kubectl("get jobs -A " + KubeFields.USAGE_JOBS.outputFlag());

    @Override public String id() { return "usage"; }
    @Override public String title() { return "the cluster's records of GPU use"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.keeping("Kueue's workloads", WORKLOADS, WORKLOADS_KEY), Probe.keeping("the cluster's jobs", JOBS, JOBS_KEY));
    }

    /** Nothing to apply: a report only asks. */
    @Override public List<Op> apply(HostContext ctx) { return List.of(); }
}
