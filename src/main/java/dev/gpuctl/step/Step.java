package dev.gpuctl.step;

import java.time.Duration;
import java.util.List;

/**
 * One small piece of the bootstrap, in three parts (docs/design.md, "Steps are data"):
 * <ul>
 *   <li>{@link #check}: read-only probes; all right means nothing to do;</li>
 *   <li>{@link #apply}: idempotent ops that make it right;</li>
 *   <li>{@link #verify}: probes that prove it, after apply and in {@code gpuctl verify} after a reboot.</li>
 * </ul>
 * Steps only describe work; the runner executes it and the plan renders it, from the same objects.
 */
public interface Step {
    /** The name used by {@code --only} and in output: "swap". */
    String id();

    /** For people: "swap off, now and at boot". */
    String title();

    /** Whether this step has work on that host at all. */
    boolean runsOn(HostContext ctx);

    List<Probe> check(HostContext ctx);

    List<Op> apply(HostContext ctx);

    default List<Probe> verify(HostContext ctx) { return check(ctx); }

    /**
     * True when this step's proof reads the cluster through the master (kubectl): it depends on every host (a
     * stopped kubelet, a lost default runtime), so its fix is the whole ordered run, and a check that failed for good
     * on any host ends verify's waiting for it.
     */
    default boolean readsCluster() { return false; }

    /**
     * The progress line shown when a verify starts waiting for a wrong probe of this step (a drain waiting for a GPU
     * Job, say), given its problem and how long it will wait; null (the default): the wait is only logged.
     */
    default String whileWaiting(String problem, Duration upTo) { return null; }

    /**
     * The warning one of this step's probes carries on a host when it passed (verify shows it as WARN and exits 5): a
     * certificate expiring soon, a job's own Xid; "" (the default): none. Read from what the probes learned.
     */
    default String warning(Probe probe, Facts facts, String host) { return ""; }

    /**
     * What one of this step's probes found on a host, for people, shown under the check whether it passed or failed
     * (the etcd member, the quorum, the VIP's holder); "" (the default): nothing beyond ok or its problem.
     */
    default String detail(Probe probe, Facts facts, String host) { return ""; }

    /**
     * What makes a check of this step right, for verify's report: shown when the check failed, or passed with a
     * {@link #warning}. By default the bootstrap run that applies this step: on this host, or (a step that reads the
     * cluster, {@link #readsCluster}) the whole ordered run.
     *
     * @param probe     the check
     * @param failed    true when it failed; false when it passed with a warning
     * @param host      where it was asked
     * @param inventory the inventory file, as the commands name it
     */
    default String fix(Probe probe, boolean failed, String host, String inventory) {
        return readsCluster() ? "gpuctl bootstrap " + inventory : "gpuctl bootstrap --only " + id() + " --hosts " + host + " " + inventory;
    }

    /** What a failed proof of this step means ({@link FailureKind#BROKEN} unless the step says otherwise). */
    default FailureKind failureKind() { return FailureKind.BROKEN; }

    /** Ops run once on the master before this step applies on any host (e.g. create a join token). */
    default List<Op> prepareOnMaster(HostContext masterCtx) { return List.of(); }
}
