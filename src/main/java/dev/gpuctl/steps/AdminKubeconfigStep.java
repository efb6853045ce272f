package dev.gpuctl.steps;

import dev.gpuctl.kube.Kube;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;

/**
 * The master's admin.conf, read for {@code gpuctl kubeconfig}: read-only, its whole answer kept under {@link #KEY} and
 * never written to the master's log (it holds the admin's client key). The command rebuilds it; nothing is judged here.
 */
public final class AdminKubeconfigStep implements Step {
    /** Where the answer of {@code cat admin.conf} is kept ({@link Facts#kept}). */
    public static final String KEY = "kubeconfig.admin";

    @Override public String id() { return "admin-kubeconfig"; }
    @Override public String title() { return "the master's admin.conf"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.keepingSecret("the master's admin.conf", "cat " + Kube.ADMIN_CONF, KEY));
    }

    @Override public List<Op> apply(HostContext ctx) { return List.of(); }
}
