package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.net.CidrCheck;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import dev.gpuctl.steps.Steps;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What bootstrap would do, built offline from the inventory by asking the same step objects the runner executes.
 * Nothing here opens a connection.
 */
public record Plan(String cluster, String summary, List<String> cidrConflicts, List<PhasePlan> phases) {

    public record PhasePlan(String id, String title, boolean readOnly, List<HostPlan> hosts) {}

    public record HostPlan(String name, String address, String role, List<StepPlan> steps) {}

    public record StepPlan(String id, String title, List<Map<String, String>> prepareOnMaster,
                           List<Map<String, String>> check, List<Map<String, String>> apply,
                           List<Map<String, String>> verify) {}

    /** The plan of a bootstrap: every phase and step, in order. */
    public static Plan of(Inventory inv) {
        return of(inv, Steps.oneNodeAtATime(Steps.phases(), inv));
    }

    /** The plan of a bootstrap narrowed to the steps named (none: every step; preflight always shows). */
    public static Plan of(Inventory inv, Set<String> only) {
        return of(inv, Steps.oneNodeAtATime(Steps.only(only), inv));
    }

    public static Plan of(Inventory inv, List<Phase> phases) {
        var c = inv.cluster();
        String summary = "kubernetes " + c.kubernetesVersion() + ", runtime " + c.runtime().key() + ", cni " + c.cni().key()
            + ", podCidr " + c.podCidr() + ", serviceCidr " + c.serviceCidr() + ", packages " + c.packages().key()
            + ", " + PlanSummary.count(inv.nodes().size(), "host") + " (" + inv.nodes().stream().filter(Node::gpu).count() + " with GPUs)";
        List<String> conflicts = CidrCheck.check(inv.staticRanges()).stream().map(CidrCheck.Conflict::message).toList();
        Path base = inv.file().toAbsolutePath().getParent();
        List<PhasePlan> out = new ArrayList<>();
        for (Phase phase : phases) {
            List<HostPlan> hosts = new ArrayList<>();
            for (Node node : inv.nodes()) {
                HostContext ctx = new HostContext(inv, node);
                List<StepPlan> steps = new ArrayList<>();
                for (Step step : phase.steps()) {
                    if (!step.runsOn(ctx)) continue;
                    steps.add(new StepPlan(step.id(), step.title(),
                        step.prepareOnMaster(new HostContext(inv, inv.master())).stream().map(o -> op(o, base)).toList(),
                        step.check(ctx).stream().map(Plan::probe).toList(),
                        step.apply(ctx).stream().map(o -> op(o, base)).toList(),
                        sameProbes(step.check(ctx), step.verify(ctx)) ? List.of()
                            : step.verify(ctx).stream().map(Plan::probe).toList()));
                }
                if (!steps.isEmpty()) hosts.add(new HostPlan(node.name(), node.address(), node.role().key(), steps));
            }
            if (!hosts.isEmpty()) out.add(new PhasePlan(phase.id(), phase.title(), phase.readOnly(), hosts));
        }
        return new Plan(c.name(), summary, conflicts, out);
    }

    private static boolean sameProbes(List<Probe> a, List<Probe> b) {
        if (a.size() != b.size()) return false;
        for (int i = 0; i < a.size(); i++) {
            if (!a.get(i).command().equals(b.get(i).command()) || !a.get(i).waitUpTo().equals(b.get(i).waitUpTo())) return false;
        }
        return true;
    }

    static Map<String, String> probe(Probe p) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("what", p.what());
        m.put("command", p.command());
        if (!p.waitUpTo().isZero()) m.put("waitUpTo", p.waitUpTo().toSeconds() + "s");
        if (p.atPhaseEnd()) m.put("waitedAt", "phase end");
        return m;
    }

    static Map<String, String> op(Op op, Path base) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("what", op.what());
        if (op instanceof Op.Run r) {
            m.put("kind", "run");
            m.put("command", r.command());
            if (r.unless() != null) m.put("skipWhen", r.unless());
            if (r.guard() != null) {
                m.put("skipWhenRight", r.guard().what());
                m.put("skipWhen", r.guard().command());
            }
            if (!r.onlyIfChanged().isEmpty()) m.put("onlyIfChanged", String.join(" ", r.onlyIfChanged()));
            if (r.journal() != null) m.put("journal", r.journal().what());
        } else if (op instanceof Op.Await a) {
            m.put("kind", "wait");
            m.put("until", a.until().what());
            m.put("command", a.until().command());
            m.put("waitUpTo", a.until().waitUpTo().toSeconds() + "s");
            if (a.orElse() != null) m.put("orElse", a.orElse());
        } else if (op instanceof Op.WriteFile w) {
            m.put("kind", "write");
            if (w.unless() != null) m.put("skipWhen", w.unless());
            m.put("path", w.path());
            m.put("mode", w.mode());
            m.put("owner", w.owner());
            if (w.objects() != null) {
                m.put("objects", w.objects());
                m.put("sha256", w.sha256());
            } else {
                m.put("content", w.content());
            }
        } else if (op instanceof Op.EditFile e) {
            m.put("kind", "edit");
            m.put("path", e.path());
            m.put("rule", e.rule());
            String onEmpty;
            try {
                onEmpty = e.edit().apply("");
            } catch (RuntimeException ex) {
                onEmpty = null;
            }
            if (onEmpty != null && !onEmpty.isEmpty()) m.put("contentWhenAbsent", onEmpty);
        } else if (op instanceof Op.Fetch f) {
            m.put("kind", "fetch");
            m.put("path", f.remotePath());
            Path to = f.localPath().toAbsolutePath();
            m.put("to", to.startsWith(base) ? base.relativize(to) + " (beside the inventory)" : to.toString());
        } else if (op instanceof Op.FetchKubeconfig k) {
            m.put("kind", "fetch");
            m.put("path", k.remotePath());
            Path to = k.localPath().toAbsolutePath();
            m.put("to", to.startsWith(base) ? base.relativize(to) + " (beside the inventory)" : to.toString());
            m.put("rule", Op.FetchKubeconfig.RULE);
        } else if (op instanceof Op.Send s) {
            m.put("kind", "send");
            Path from = s.localPath().toAbsolutePath();
            m.put("from", from.startsWith(base) ? base.relativize(from) + " (beside the inventory)" : from.toString());
            m.put("path", s.remotePath());
            m.put("mode", s.mode());
        } else if (op instanceof Op.Capture c) {
            m.put("kind", "capture");
            m.put("command", c.command());
            m.put("secret", String.valueOf(c.secret()));
        }
        return m;
    }
}
