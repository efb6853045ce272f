package dev.gpuctl.steps;

import dev.gpuctl.hostconf.GpuHealth;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The GPUs' health on each GPU node, read-only (what drifts after day 1): the loaded kernel module against the NVML
 * library (no "Driver/library version mismatch"), every GPU recorded at bootstrap still listed by
 * {@code nvidia-smi -L}, no uncorrectable ECC error / pending row remapping or page retirement / failed remapping,
 * no Xid error in the kernel log since boot, and persistence mode where the inventory asks. Each failure says its
 * cause and its fix (reboot, reload the module, drain and RMA). Its only change is to record, once, the GPUs
 * {@code nvidia-smi -L} lists at bootstrap. The default runtime (step runtime), the device plugin pod and
 * allocatable nvidia.com/gpu (step gpu) are checked by their own steps.
 */
public final class GpuHealthStep implements Step {
    public static final String ID = "gpu-health";
    /** nvidia-smi -L as it was when gpuctl first bootstrapped the node. */
    static final String RECORD = "/var/lib/gpuctl/gpus-at-bootstrap";

    @Override public String id() { return ID; }
    @Override public String title() { return "GPU health: driver, GPUs present, memory errors, Xid"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.gpu(); }

    static final String DRIVER = "out=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1); rc=$?;"
        + " printf '%s\\n@@@ %s\\n' \"$out\" \"$rc\"; cat /proc/driver/nvidia/version 2>/dev/null; true";
    static final String LISTS = "cat " + RECORD + " 2>/dev/null; echo @@@; nvidia-smi -L 2>&1; true";
    static final String MEMORY = "nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER 2>&1; true";
    /** The kernel's messages since boot (the journal's kernel transport, which no local user can write), else dmesg. */
    static final String XID = "if out=$(journalctl -k -b -q --no-pager 2>&1); then :; elif out=$(dmesg 2>&1); then :;"
        + " else echo \"cannot read the kernel log: $out\" >&2; exit 1; fi; printf '%s\\n' \"$out\" | grep -F 'NVRM: Xid' || true";
    static final String PERSISTENCE = "nvidia-smi --query-gpu=index,persistence_mode --format=csv,noheader 2>&1; true";

    @Override public List<Probe> check(HostContext ctx) {
        List<Probe> probes = new ArrayList<>();
        probes.add(Probe.of("NVIDIA kernel module and NVML library at the same version (nvidia-smi, /proc/driver/nvidia/version)", DRIVER, r -> {
            String[] parts = r.stdout().split("(?m)^@@@ ", 2);
            if (parts.length < 2) return Optional.of("cannot ask nvidia-smi: " + r.tail(2));
            int nl = parts[1].indexOf('\n');
            int exit;
            try {
                exit = Integer.parseInt((nl < 0 ? parts[1] : parts[1].substring(0, nl)).strip());
            } catch (NumberFormatException e) {
                return Optional.of("cannot ask nvidia-smi: " + r.tail(2));
            }
            return GpuHealth.driverMismatch(parts[0], exit, nl < 0 ? "" : parts[1].substring(nl + 1));
        }));
        probes.add(Probe.of("every GPU recorded at bootstrap listed by nvidia-smi -L (" + RECORD + ")", LISTS, r -> {
            String[] parts = r.stdout().split("(?m)^@@@\\R", 2);
            return GpuHealth.missingGpus(parts[0], parts.length > 1 ? parts[1] : "");
        }));
        probes.add(Probe.of("no uncorrectable ECC error, pending row remapping or page retirement (nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER)",
            MEMORY, r -> {
                List<String> p = GpuHealth.memoryProblems(r.stdout());
                return p.isEmpty() ? Optional.empty() : Optional.of(String.join("\n", p));
            }));
        probes.add(Probe.of("no Xid error in the kernel log since boot (journalctl -k -b)", XID, r -> r.ok()
            ? GpuHealth.xidProblem(r.stdout()) : Optional.of("exit " + r.exit() + ": " + r.tail(2))));
        ctx.cluster().gpuDriver().persistenceMode().ifPresent(on -> probes.add(Probe.of(
            "persistence mode " + (on ? "on" : "off") + " on every GPU (cluster.gpuDriver.persistenceMode)", PERSISTENCE,
            r -> GpuHealth.persistenceProblem(r.stdout(), on))));
        return probes;
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(Op.Run.of("record the GPUs nvidia-smi -L lists (" + RECORD + ", once)",
                "mkdir -p -m 0755 /var/lib/gpuctl && " + HostWrite.replaceWithOutput(RECORD, "nvidia-smi -L", "0644"))
            .unless("test -s " + RECORD).journalling(Sh.journalWrite(RECORD)));
    }
}
