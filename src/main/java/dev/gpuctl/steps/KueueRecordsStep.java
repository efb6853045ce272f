package dev.gpuctl.steps;

import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.KubeFields;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;

/**
 * {@code gpuctl queue} and {@code gpuctl usage}, on the master: the cluster's Kueue records, asked read-only and kept by
 * key for the report ({@link dev.gpuctl.kube.QueueReport}, {@link dev.gpuctl.kube.UsageReport}): the
 * ClusterQueues, Kueue's Workloads (their conditions and admission) and the Jobs (their queue and person labels, start
 * and completion). Each asks only the fields its report reads ({@link KubeFields}). Nothing is judged or changed here.
 */
public record KueueRecordsStep(List<Record> records) implements Step {
    public KueueRecordsStep { records = List.copyOf(records); }

    /** One list the step asks for: the key its answer is kept under, the command, the fields asked. */
    public enum Record {
        CLUSTER_QUEUES("kueue.clusterqueues", "get clusterqueues.kueue.x-k8s.io", KubeFields.CLUSTER_QUEUES, "Kueue's ClusterQueues"),
        WORKLOADS("kueue.workloads", "get workloads.kueue.x-k8s.io -A", KubeFields.WORKLOADS, "Kueue's workloads"),
        JOBS("kueue.jobs", "get jobs -A", KubeFields.USAGE_JOBS, "the cluster's jobs");

        public final String key;
        /** kubectl's arguments, for messages. */
        public final String args;
        public final KubeFields.Query query;
        final String what;

        Record(String key, String args, KubeFields.Query query, String what) {
            this.key = key;
            this.args = args;
            this.query = query;
            this.what = what;
        }

        public String command() { return Kube.kubectl(args + " " + query.outputFlag()); }
    }

    @Override public String id() { return "kueue-records"; }
    @Override public String title() { return "the cluster's Kueue records"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

    @Override public List<Probe> check(HostContext ctx) {
        return records.stream().map(r -> Probe.keeping(r.what, r.command(), r.key)).toList();
    }

    /** Nothing to apply: a report only asks. */
    @Override public List<Op> apply(HostContext ctx) { return List.of(); }
}
