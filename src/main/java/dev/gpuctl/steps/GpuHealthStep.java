package dev.gpuctl.steps;

import dev.gpuctl.gpu.GpuHealth;
import dev.gpuctl.gpu.GpuMemory;
import dev.gpuctl.gpu.Xids;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The GPUs' health on each GPU node, read-only (what drifts after day 1): the loaded kernel module against the NVML
 * library (no "Driver/library version mismatch"), every GPU recorded at bootstrap still listed by
 * {@code nvidia-smi} (checked on the master against the node's annotation: {@link GpuRecordStep}), no uncorrectable ECC error / pending row remapping or page retirement / failed remapping,
 * no hardware or driver Xid in the kernel log since boot (an application-caused Xid, the job's own fault, is a
 * warning naming its process: {@link dev.gpuctl.gpu.Xids}), and persistence mode where the inventory asks. Each failure says its
 * cause and its fix (reboot, reload the module, drain and RMA). It changes nothing. The default runtime (step runtime), the device plugin pod and
 * allocatable nvidia.com/gpu (step gpu) are checked by their own steps.
 */
public final class GpuHealthStep implements Step {
    public static final String ID = "gpu-health";

    @Override public String id() { return ID; }
    @Override public String fix(Probe probe, boolean failed, String host, String inventory) { return gpuFix(probe, failed, host, inventory); }

    /** A GPU's health is changed by no bootstrap step: a warning's fix is the problem's own. */
    static final String GPU_FIX = "the fix named in the problem (gpuctl does not change a GPU's health)";

    /**
     * The fix of a GPU check (this step's, {@link GpuRecordStep}'s): failed, {@code gpuctl repair} on the node it names
     * does what the problem names (hold its jobs, restart the plugin, reset the GPU, reboot) and proves it, or leaves the
     * node cordoned naming the human step; passed with a warning, the problem's own.
     */
    static String gpuFix(Probe probe, boolean failed, String host, String inventory) {
        if (!failed) return GPU_FIX;
        return "the fix named in the problem, or: gpuctl repair -i " + inventory + " " + gpuNode(probe.what(), host)
            + " (holds its jobs safe, fixes, proves it; a GPU it cannot bring back is left cordoned for a person)";
    }

    /** The node a gpu-record check names ("node N: ..."), else {@code host}. */
    static String gpuNode(String what, String host) {
        return what.startsWith("node ") && what.indexOf(':') > 5 ? what.substring(5, what.indexOf(':')) : host;
    }
    @Override public String title() { return "GPU health: driver, GPUs present, memory errors, Xid"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.gpu(); }

    /** The loaded kernel module's version (empty when none is loaded), learned by the first probe. */
    static final String MODULE = "cat /proc/driver/nvidia/version 2>/dev/null; true";
    /** The NVML library's answer alone (its exit status counts): what repair keeps for its diagnosis. */
    static final String DRIVER = "nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1";
    /**
     * The fact of the NVML library's answer about the driver (exit status and driver_version lines,
     * {@link GpuHealth.DriverAnswer}), learned from preflight's one {@code nvidia-smi --query-gpu} (which asks
     * driver_version among its fields): no second nvidia-smi is started for it.
     */
    static String driverAnswerFact(HostContext ctx) { return "gpu." + ctx.node().name() + ".nvmlDriver"; }

    static Facts.Key<GpuHealth.DriverAnswer> driverAnswer(HostContext ctx) {
        return new Facts.Key<>(driverAnswerFact(ctx), GpuHealth.DriverAnswer.class, GpuHealth.DriverAnswer::parse);
    }

    static String moduleFact(HostContext ctx) { return "gpu." + ctx.node().name() + ".kernelModule"; }

    static Facts.Key<GpuHealth.KernelModule> module(HostContext ctx) {
        return new Facts.Key<>(moduleFact(ctx), GpuHealth.KernelModule.class, GpuHealth.KernelModule::parse);
    }
    static final String MEMORY = "nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER 2>&1; true";
    /**
     * Where a proved {@code gpuctl repair} leaves the host's clock (seconds since the epoch) when it began: the Xids
     * logged before it are answered (root's file; no other user can write there).
     */
    public static final String ANSWERED = "/var/lib/gpuctl/xids-answered-since";

    /**
     * The kernel's messages since boot (the journal's kernel transport, which no local user can write), from the
     * {@link #ANSWERED} time of a proved repair when there is one; else dmesg.
     */
    static final String XID = "if out=$(journalctl -k -b -q --no-pager --since \"@$(grep -xE '[0-9]{1,12}' " + ANSWERED + " 2>/dev/null || echo 0)\" 2>&1);"
        + " then :; elif out=$(dmesg 2>&1); then :;"
        + " else echo \"cannot read the kernel log: $out\" >&2; exit 1; fi; printf '%s\\n' \"$out\" | grep -F 'NVRM: Xid' || true";
    static final String PERSISTENCE = "nvidia-smi --query-gpu=index,persistence_mode --format=csv,noheader 2>&1; true";

    @Override public List<Probe> check(HostContext ctx) {
        List<Probe> probes = new ArrayList<>();
        probes.add(Probe.of("the loaded NVIDIA kernel module's version (/proc/driver/nvidia/version)", MODULE, r -> Optional.empty())
            .learning(r -> Map.of(moduleFact(ctx), r.stdout())));
        // the same command as the probe before (asked once in a batch); nvidia-smi's side is preflight's answer
        probes.add(Probe.of("NVIDIA kernel module and NVML library at the same version (nvidia-smi, /proc/driver/nvidia/version)", MODULE,
                r -> Optional.empty())
            .judgedWithFacts((r, facts) -> facts.get(driverAnswer(ctx))
                .map(smi -> GpuHealth.driverMismatch(smi.output(), smi.exit(), GpuHealth.KernelModule.parse(r.stdout())))
                .orElse(Optional.of("nvidia-smi on " + ctx.node().name() + " was not asked (see its preflight)"))));
        probes.add(Probe.of("no uncorrectable ECC error, pending row remapping or page retirement (nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER)",
            MEMORY, r -> {
                List<String> p = GpuMemory.memoryProblems(r.stdout());
                return p.isEmpty() ? Optional.empty() : Optional.of(String.join("\n", p));
            }));
        probes.add(Probe.of(XID_WHAT, XID, r -> Optional.empty())
            .learning(r -> Map.of(xidFact(ctx), r.ok() ? r.stdout() : ""))
            .judgedWithFacts((r, facts) -> r.ok() ? GpuHealth.xidProblem(r.stdout(), gpus(facts, ctx))
                : Optional.of("exit " + r.exit() + ": " + r.tail(2))));
        ctx.cluster().gpuDriver().persistenceMode().ifPresent(on -> probes.add(Probe.of(
            "persistence mode " + (on ? "on" : "off") + " on every GPU (cluster.gpuDriver.persistenceMode)", PERSISTENCE,
            r -> GpuHealth.persistenceProblem(r.stdout(), on))));
        return probes;
    }

    @Override public List<Op> apply(HostContext ctx) { return List.of(); }

    /** What the Xid check proves: no hardware or driver Xid (an application's Xid is a warning, {@link #warning}). */
    static final String XID_WHAT = "no hardware or driver Xid error in the kernel log since boot (journalctl -k -b)";

    /** The Xid lines the check read on a host, kept for its warning. */
    static String xidFact(HostContext ctx) { return "gpu." + ctx.node().name() + ".xids"; }

    /** The host's GPUs (index, UUID, PCI bus id) preflight's nvidia-smi listed; empty when unknown. */
    static List<Xids.Gpu> gpus(Facts facts, HostContext ctx) {
        return facts.get(PreflightStep.gpuBusFact(ctx.node())).map(Xids::parseGpus).orElse(List.of());
    }

    /**
     * The Xid check's warning on a host: the application-caused Xids in its kernel log (the jobs' own faults, each
     * with its GPU and process), "" when none; every other check of this step warns of nothing.
     */
    @Override public String warning(Probe probe, Facts facts, String host) {
        if (!probe.what().equals(XID_WHAT)) return "";
        String log = facts.get("gpu." + host + ".xids").orElse("");
        return GpuHealth.xidWarning(log, facts.get(PreflightStep.gpuBusFact(host)).map(Xids::parseGpus).orElse(List.of()));
    }
}
