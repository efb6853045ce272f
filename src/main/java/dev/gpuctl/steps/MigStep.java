package dev.gpuctl.steps;

import dev.gpuctl.gpu.Mig;
import dev.gpuctl.gpu.NvidiaMig;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * MIG on the GPU nodes whose {@code gpuSharing} asks for it: MIG mode on every GPU, and each GPU cut into the GPU
 * instances the inventory names (with their default compute instance), proven by asking nvidia-smi. Preflight
 * ({@link #preflight}) refuses, before anything changes, a node whose GPU model has no MIG or lacks the profile;
 * apply refuses to touch GPUs that processes use (drain the node first) and says when MIG mode waits for a reboot.
 * Already cut as asked: nothing runs. It never turns MIG off on a node that no longer asks for it.
 */
public final class MigStep implements Step {
    @Override public String id() { return "mig"; }
    @Override public String title() { return "MIG mode and GPU instances"; }
    @Override public boolean runsOn(HostContext ctx) { return mig(ctx).isPresent(); }

    static Optional<Mig> mig(HostContext ctx) { return ctx.inventory().sharing(ctx.node()).mig(); }

    /** Each profile's instance count on one of the node's GPUs, learned at preflight (nvidia-smi mig -lgip). */
    public static String totalsFact(Node n) { return "gpu." + n.name() + ".mig.profiles"; }

    /** The instances each GPU of the node must have, comma-separated, learned at preflight. */
    public static String layoutFact(Node n) { return "gpu." + n.name() + ".mig.layout"; }

    /** Each GPU's MIG mode, learned by the first probe of preflight and of the check (nvidia-smi mig.mode.current). */
    public static String modesFact(Node n) { return "gpu." + n.name() + ".mig.modes"; }

    static Facts.Key<NvidiaMig.Modes> modes(Node n) { return new Facts.Key<>(modesFact(n), NvidiaMig.Modes.class, NvidiaMig.Modes::parse); }

    static final String MODES = NvidiaMig.MODES + " 2>&1; true";
    static final String PROFILES = "nvidia-smi mig -lgip 2>&1; true";
    static final String INSTANCES = "nvidia-smi mig -lgi 2>&1; true";

    /** Asks each GPU's MIG mode and keeps it for the probes after it (judged by them). */
    static Probe modesProbe(Node n) {
        return Probe.of("each GPU's MIG mode (nvidia-smi mig.mode.current)", MODES, r -> Optional.empty())
            .learning(r -> Map.of(modesFact(n), r.stdout()));
    }

    /** Preflight's questions on a node that asks for MIG: its GPUs' modes, then whether they have MIG and offer the profiles. */
    public static List<Probe> preflight(HostContext ctx) {
        Optional<Mig> mig = mig(ctx);
        if (mig.isEmpty()) return List.of();
        Node n = ctx.node();
        return List.of(modesProbe(n), Probe.of("the GPUs support MIG and offer " + mig.get().profiles().stream().distinct().toList()
                    + " (nvidia-smi mig.mode.current, nvidia-smi mig -lgip)", PROFILES, r -> Optional.empty())
            .judgedWithFacts((r, facts) -> NvidiaMig.supportProblem(n.name(),
                facts.get(modes(n)).map(NvidiaMig.Modes::gpus).orElse(List.of()), r.stdout(), mig.get()))
            .learning(r -> {
                Map<String, Integer> totals = NvidiaMig.totals(NvidiaMig.parseProfiles(r.stdout()));
                if (totals.isEmpty()) return Map.of();
                return Map.of(totalsFact(n), NvidiaMig.encode(totals),
                    layoutFact(n), String.join(",", NvidiaMig.layout(mig.get(), totals)));
            }));
    }

    @Override public List<Probe> check(HostContext ctx) {
        Node n = ctx.node();
        return List.of(
            Probe.of("MIG mode enabled on every GPU (nvidia-smi mig.mode.current)", MODES, r -> modeProblem(n.name(), NvidiaMig.Modes.parse(r.stdout())))
                .learning(r -> Map.of(modesFact(n), r.stdout())),
            Probe.of("each GPU cut into the GPU instances asked (" + mig(ctx).orElseThrow() + ", nvidia-smi mig -lgi)", INSTANCES,
                    r -> Optional.empty())
                .judgedWithFacts((r, facts) -> {
                    Optional<NvidiaMig.Modes> modes = facts.get(modes(n));
                    if (modes.isEmpty()) return Optional.of("the GPUs' MIG modes are not known (nvidia-smi mig.mode.current gave no answer)");
                    Optional<String> mode = modeProblem(n.name(), modes.get());
                    if (mode.isPresent()) return mode;
                    Optional<String> layout = facts.get(layoutFact(n));
                    if (layout.isEmpty()) return Optional.of("the instances to make are not known (preflight learns them from nvidia-smi mig -lgip)");
                    return NvidiaMig.layoutProblem(modes.get().indexes(), List.of(layout.get().split(",")),
                        NvidiaMig.parseInstances(r.stdout()));
                }));
    }

    static Optional<String> modeProblem(String host, NvidiaMig.Modes modes) {
        if (modes.gpus().isEmpty()) return Optional.of("nvidia-smi reported no GPU's MIG mode: " + Probe.oneLine(modes.text()));
        for (NvidiaMig.GpuMode g : modes.gpus()) {
            if (g.enabled()) continue;
            return Optional.of("GPU " + g.index() + " (" + g.name() + ") has MIG mode " + g.current()
                + (g.pendingChange() ? ", " + g.pending() + " pending: it takes effect once the GPU is reset; reboot " + host
                    + " (gpuctl drain " + host + " first), then run gpuctl again" : ""));
        }
        return Optional.empty();
    }

    /**
     * The script that cuts the GPUs: refuse while processes use them, MIG mode on where it is off, refuse when it
     * stays pending (a reboot is needed), then each GPU's instances dropped and made anew from the layout preflight
     * learned.
     */
    static String script(Node n) {
        String host = n.name();
        String modes = NvidiaMig.MODES;
        return "set -e; "
            + "apps=$(nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader 2>&1) || { echo \"cannot list the"
            + " processes on the GPUs: $apps\" >&2; exit 1; }; "
            + "if [ -n \"$apps\" ]; then echo \"processes use the GPUs of " + host + " (pid, name: $apps); changing MIG would end"
            + " them: gpuctl drain " + host + ", then run gpuctl again, then gpuctl uncordon " + host + "\" >&2; exit 1; fi; "
            + "for i in $(" + modes + " | awk -F', ' '$3 != \"Enabled\" {print $1}'); do nvidia-smi -i \"$i\" -mig 1; done; "
            + "pending=$(" + modes + " | awk -F', ' '$3 != \"Enabled\" {printf \"GPU %s %s, pending %s; \", $1, $3, $4}'); "
            + "if [ -n \"$pending\" ]; then echo \"MIG mode is not on yet ($pending): the GPU could not be reset; reboot " + host
            + " (gpuctl drain " + host + " first), then run gpuctl again\" >&2; exit 1; fi; "
            + "for i in $(" + modes + " | cut -d, -f1); do "
            + "nvidia-smi mig -i \"$i\" -dci >/dev/null 2>&1 || true; nvidia-smi mig -i \"$i\" -dgi >/dev/null 2>&1 || true; "
            + "nvidia-smi mig -i \"$i\" -cgi {{" + layoutFact(n) + "}} -C; done";
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(Op.Run.of("MIG mode on and GPU instances " + mig(ctx).orElseThrow() + " (nvidia-smi -mig 1; nvidia-smi mig -cgi … -C)",
            script(ctx.node())));
    }
}
