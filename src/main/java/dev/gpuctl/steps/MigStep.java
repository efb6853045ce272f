package dev.gpuctl.steps;

import dev.gpuctl.hostconf.NvidiaMig;
import dev.gpuctl.hostconf.Mig;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
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

    static final String SUPPORT = NvidiaMig.MODES + " 2>&1; echo @@@; nvidia-smi mig -lgip 2>&1; true";
    static final String STATE = NvidiaMig.MODES + " 2>&1; echo @@@; nvidia-smi mig -lgi 2>&1; true";

    /** Preflight's question on a node that asks for MIG: its GPUs have MIG and offer the profiles. */
    public static Optional<Probe> preflight(HostContext ctx) {
        Optional<Mig> mig = mig(ctx);
        if (mig.isEmpty()) return Optional.empty();
        String host = ctx.node().name();
        return Optional.of(Probe.of("the GPUs support MIG and offer " + mig.get().profiles().stream().distinct().toList()
                    + " (nvidia-smi mig.mode.current, nvidia-smi mig -lgip)", SUPPORT, r -> {
                String[] parts = r.stdout().split("(?m)^@@@\\R", 2);
                return NvidiaMig.supportProblem(host, NvidiaMig.parseModes(parts[0]), parts.length > 1 ? parts[1] : "", mig.get());
            })
            .learning(r -> {
                String[] parts = r.stdout().split("(?m)^@@@\\R", 2);
                Map<String, Integer> totals = NvidiaMig.totals(NvidiaMig.parseProfiles(parts.length > 1 ? parts[1] : ""));
                if (totals.isEmpty()) return Map.of();
                return Map.of(totalsFact(ctx.node()), NvidiaMig.encode(totals),
                    layoutFact(ctx.node()), String.join(",", NvidiaMig.layout(mig.get(), totals)));
            }));
    }

    @Override public List<Probe> check(HostContext ctx) {
        Node n = ctx.node();
        return List.of(
            Probe.of("MIG mode enabled on every GPU (nvidia-smi mig.mode.current)", STATE, r -> modeProblem(n.name(), r)),
            Probe.of("each GPU cut into the GPU instances asked (" + mig(ctx).orElseThrow() + ", nvidia-smi mig -lgi)", STATE,
                    r -> Optional.empty())
                .judgedWithFacts((r, facts) -> {
                    Optional<String> mode = modeProblem(n.name(), r);
                    if (mode.isPresent()) return mode;
                    String[] parts = r.stdout().split("(?m)^@@@\\R", 2);
                    List<Integer> gpus = NvidiaMig.parseModes(parts[0]).stream().map(NvidiaMig.GpuMode::index).toList();
                    Optional<String> layout = facts.get(layoutFact(n));
                    if (layout.isEmpty()) return Optional.of("the instances to make are not known (preflight learns them from nvidia-smi mig -lgip)");
                    return NvidiaMig.layoutProblem(gpus, List.of(layout.get().split(",")),
                        NvidiaMig.parseInstances(parts.length > 1 ? parts[1] : ""));
                }));
    }

    static Optional<String> modeProblem(String host, ExecResult r) {
        String[] parts = r.stdout().split("(?m)^@@@\\R", 2);
        List<NvidiaMig.GpuMode> modes = NvidiaMig.parseModes(parts[0]);
        if (modes.isEmpty()) return Optional.of("nvidia-smi reported no GPU's MIG mode: " + Probe.oneLine(parts[0]));
        for (NvidiaMig.GpuMode g : modes) {
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
