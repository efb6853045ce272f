package dev.gpuctl.step;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Another step that has nothing to do where a condition holds (an upgrade's drain of nodes already at the target, its
 * backup once the control plane is there): each of its probes first runs the condition on the host and, when it exits
 * 0, counts as right without asking; otherwise the probe is the step's own. Its apply is the step's own, run only when
 * a probe was wrong, i.e. when the condition did not hold.
 */
public final class SkipAtTarget implements Step {
    static final String MARK = "gpuctl: nothing to do here: ";

    private final Step inner;
    private final String condition;
    private final String why;

    /** @param condition a read-only shell command; exit 0: nothing to do. @param why for people, e.g. "w1 at 1.35" */
    public SkipAtTarget(Step inner, String condition, String why) {
        this.inner = inner;
        this.condition = condition;
        this.why = why;
    }

    @Override public String id() { return inner.id(); }
    @Override public String title() { return inner.title() + " (nothing to do once " + why + ")"; }
    @Override public boolean runsOn(HostContext ctx) { return inner.runsOn(ctx); }
    @Override public boolean readsCluster() { return inner.readsCluster(); }
    @Override public String whileWaiting(String problem, Duration upTo) { return inner.whileWaiting(problem, upTo); }
    @Override public FailureKind failureKind() { return inner.failureKind(); }
    @Override public String fix(Probe probe, boolean failed, String host, String inventory) { return inner.fix(probe, failed, host, inventory); }
    @Override public List<Op> prepareOnMaster(HostContext masterCtx) { return inner.prepareOnMaster(masterCtx); }
    @Override public List<Op> apply(HostContext ctx) { return inner.apply(ctx); }
    @Override public List<Probe> check(HostContext ctx) { return inner.check(ctx).stream().map(this::guarded).toList(); }
    @Override public List<Probe> verify(HostContext ctx) { return inner.verify(ctx).stream().map(this::guarded).toList(); }

    /** The probe, answered "right" without running when the condition holds. */
    public Probe guarded(Probe p) {
        String cmd = "if { " + condition + "; } >/dev/null 2>&1; then echo '" + MARK + why.replace("'", "") + "'; exit 0; fi; " + p.command();
        return new Probe(p.what(), cmd,
            (r, facts) -> skipped(r.stdout()) ? Optional.empty() : p.judge().apply(r, facts),
            r -> skipped(r.stdout()) ? Map.of() : p.learn().apply(r),
            p.waitUpTo(), r -> !skipped(r.stdout()) && p.settling().test(r), null, p.atPhaseEnd());
    }

    static boolean skipped(String stdout) { return stdout.startsWith(MARK); }
}
