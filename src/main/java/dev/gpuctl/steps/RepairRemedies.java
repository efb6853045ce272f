package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.gpu.DevChar;
import dev.gpuctl.gpu.GpuHealth;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * {@code gpuctl repair}'s remedies, least disruptive first, each a phase whose step checks before (is it due?), acts,
 * and proves its own effect by asking the host (or the cluster) again: the plugin's restart, nvidia-persistenced's
 * restart, a GPU reset, the driver modules' reload; the reboot is {@link RebootRemedy}. None kills a process: a remedy that needs the GPUs free
 * waits (bounded) for the holders to go, then stops naming them.
 */
public final class RepairRemedies {
    private RepairRemedies() {}

    /** How long a remedy's check waits for the node to come back (plugin re-registered, host rebooted). */
    static final Duration COME_BACK = Repair.COME_BACK;

    /** Restart the device plugin pod {@code pod} ("NAMESPACE/NAME") on {@code node}; proved by allocatable = {@code want}. */
    public static Phase restartPlugin(String node, Optional<String> pod, int want) {
        return new Phase("restart-plugin", "restart the device plugin on " + node, List.of(new PluginRestartStep(node, pod, want)), false);
    }

    static final class PluginRestartStep implements Step {
        private final String node;
        private final Optional<String> pod;
        private final int want;

        PluginRestartStep(String node, Optional<String> pod, int want) {
            this.node = node;
            this.pod = pod;
            this.want = want;
        }

        @Override public String id() { return "restart-plugin"; }
        @Override public String title() { return "restart the device plugin pod on " + node + pod.map(p -> " (" + p + ")").orElse(""); }
        @Override public boolean readsCluster() { return true; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

        @Override public List<Probe> check(HostContext ctx) { return List.of(Repair.allocatable(node, want)); }

        @Override public List<Op> apply(HostContext ctx) {
            if (pod.isEmpty()) return List.of();
            String[] nsName = pod.get().split("/", 2);
            return List.of(Op.Run.of("delete the device plugin pod " + pod.get() + " (its DaemonSet makes a new one)",
                Kube.kubectl("-n " + ShellWords.quote(nsName[0]) + " delete pod " + ShellWords.quote(nsName[1]) + " --ignore-not-found --wait=false")));
        }

        @Override public List<Probe> verify(HostContext ctx) { return List.of(Repair.allocatable(node, want).waitingUpTo(COME_BACK)); }
    }

    /** NVIDIA's /dev/char links and udev rule on {@code node} ({@link DevCharStep}'s own check, ops and proof). */
    public static Phase devCharLinks(String node) {
        return new Phase("dev-char-links", "make the /dev/char links and NVIDIA's udev rule on " + node, List.of(new DevCharLinksStep(node)), false);
    }

    static final class DevCharLinksStep implements Step {
        private final String node;

        DevCharLinksStep(String node) { this.node = node; }

        @Override public String id() { return "dev-char-links"; }
        @Override public String title() { return "the /dev/char links of the NVIDIA device nodes and NVIDIA's udev rule on " + node; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().name().equals(node); }
        @Override public List<Probe> check(HostContext ctx) { return List.of(DevCharStep.rule(), DevCharStep.links()); }
        @Override public List<Op> apply(HostContext ctx) { return DevCharStep.ops(); }
    }

    /**
     * Restart the pods on {@code node} that lost their GPUs: delete those a controller makes again; a Job's or a bare
     * pod only with {@code force} (else named, with the command); proved when no pod on the node has lost them.
     */
    public static Phase restartLostPods(String node, List<DevChar.PodNvml> lost, boolean force) {
        return new Phase("restart-lost-pods", "restart the pods on " + node + " that lost their GPUs", List.of(new LostPodsStep(node, lost, force)), false);
    }

    /** What is wrong on {@code node} after the restart: pods that still lost their GPUs, each with what to do. */
    static Optional<String> stillLost(String answer, String node) {
        List<DevChar.PodNvml> lost = DevChar.lostOn(DevChar.parsePods(answer), node);
        if (lost.isEmpty()) return Optional.empty();
        return Optional.of(lost.size() + " pod(s) on " + node + " still without their GPUs: " + String.join(", ", lost.stream()
            .map(p -> p.pod() + (p.recreated() ? "" : " (" + (p.owner().equals("-") ? "a bare pod" : "a " + p.owner() + "'s pod")
                + ": not deleted without --force, as its deletion ends its run; delete it and start it again: kubectl delete pod -n "
                + p.pod().replace("/", " ") + ", or run the repair with --force)")).toList()));
    }

    static final class LostPodsStep implements Step {
        private final String node;
        private final List<DevChar.PodNvml> lost;
        private final boolean force;

        LostPodsStep(String node, List<DevChar.PodNvml> lost, boolean force) {
            this.node = node;
            this.lost = List.copyOf(lost);
            this.force = force;
        }

        @Override public String id() { return "restart-lost-pods"; }
        @Override public String title() { return "restart the pods on " + node + " that lost their GPUs: " + String.join(", ", lost.stream().map(DevChar.PodNvml::pod).toList()); }
        @Override public boolean readsCluster() { return true; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

        static Probe probe(String node) {
            return Probe.of("no running GPU pod on " + node + " without its GPUs (nvidia-smi -L in each)", GpuPodsNvmlStep.PODS,
                r -> stillLost(r.stdout(), node));
        }

        @Override public List<Probe> check(HostContext ctx) { return List.of(probe(node)); }

        @Override public List<Op> apply(HostContext ctx) {
            List<Op> ops = new java.util.ArrayList<>();
            for (DevChar.PodNvml p : lost) {
                if (!p.recreated() && !force) continue;
                String[] nsName = p.pod().split("/", 2);
                ops.add(Op.Run.of("delete pod " + p.pod() + " (" + (p.recreated() ? "its " + p.owner() + " starts it again" : "--force") + ")",
                    Kube.kubectl("-n " + ShellWords.quote(nsName[0]) + " delete pod " + ShellWords.quote(nsName[1]) + " --ignore-not-found --wait=true")));
            }
            return ops;
        }

        @Override public List<Probe> verify(HostContext ctx) { return List.of(probe(node).waitingUpTo(COME_BACK)); }
    }

    /** Reset each GPU of {@code indices} on {@code node}, each only while no process holds it (checked first). */
    public static Phase resetGpus(String node, List<Integer> indices) {
        return new Phase("reset-gpu", "reset GPU(s) " + indices + " on " + node, List.of(new GpuResetStep(node, indices)), false);
    }

    /** How long a reset waits for the GPU's last process to exit (an evicted pod's grace period is 30 s). */
    static final int RESET_TRIES = 30;

    /**
     * The shell that resets GPU {@code i} once no process holds it: the drain before it waited for the GPU jobs (or
     * evicted them), so a holder now is a process still exiting; asked every 2 s up to {@link #RESET_TRIES} times
     * (nvidia-smi's list of compute processes, then the driver's own refusal, "is currently in use by another
     * process"), then it fails naming the holders. Never kills anything.
     */
    static String resetCommand(int i) {
        return resetCommand(i, RESET_TRIES, 2);
    }

    static String resetCommand(int i, int tries, int pauseSeconds) {
        return "n=0; while :; do held=$(nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader -i " + i + " 2>/dev/null | grep . || true);"
            + " if [ -z \"$held\" ]; then out=$(nvidia-smi -r -i " + i + " 2>&1); rc=$?; printf '%s\\n' \"$out\";"
            + " case \"$out\" in *'in use by another process'*) held=\"the driver: $(printf '%s' \"$out\" | head -1)\";; *) exit $rc;; esac; fi;"
            + " n=$((n+1)); if [ $n -ge " + tries + " ]; then echo \"GPU " + i + " is still held ($held): not reset; find the process"
            + " (nvidia-smi, fuser -v /dev/nvidia*) and end it, or run the repair again with --reboot\" >&2; exit 1; fi; sleep " + pauseSeconds + "; done";
    }

    static final class GpuResetStep implements Step {
        private final String node;
        private final List<Integer> indices;

        GpuResetStep(String node, List<Integer> indices) {
            this.node = node;
            this.indices = List.copyOf(indices);
        }

        @Override public String id() { return "reset-gpu"; }
        @Override public String title() { return "reset GPU(s) " + indices + " (nvidia-smi -r), only while idle"; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().name().equals(node) && !indices.isEmpty(); }

        /** Asked before the reset: the reset is this repair's remedy, so it is due (the plan decided it). */
        @Override public List<Probe> check(HostContext ctx) {
            return indices.stream().map(i -> Probe.of("GPU " + i + " reset after its hardware Xid", "true",
                r -> Optional.of("GPU " + i + " had a hardware Xid: reset due"))).toList();
        }

        @Override public List<Op> apply(HostContext ctx) {
            return indices.stream().map(i -> (Op) Op.Run.of("reset GPU " + i + " (nvidia-smi -r -i " + i + ")", resetCommand(i))).toList();
        }

        @Override public List<Probe> verify(HostContext ctx) {
            return indices.stream().map(i -> Probe.succeeds("GPU " + i + " answers after the reset (nvidia-smi -i " + i + ")",
                "nvidia-smi -i " + i + " --query-gpu=uuid --format=csv,noheader")).toList();
        }
    }

    /** Restart nvidia-persistenced on {@code node} (enabled but not running); proved by it running and persistence mode on. */
    public static Phase restartPersistenced(String node) {
        return new Phase("restart-persistenced", "restart nvidia-persistenced on " + node, List.of(new PersistencedRestartStep(node)), false);
    }

    static final String PERSISTENCED_ACTIVE = "systemctl is-active nvidia-persistenced 2>&1; true";
    static final String PERSISTENCE_MODE = "nvidia-smi --query-gpu=index,persistence_mode --format=csv,noheader 2>&1";

    static final class PersistencedRestartStep implements Step {
        private final String node;

        PersistencedRestartStep(String node) { this.node = node; }

        @Override public String id() { return "restart-persistenced"; }
        @Override public String title() { return "restart nvidia-persistenced on " + node; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().name().equals(node); }

        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.equals("nvidia-persistenced running", PERSISTENCED_ACTIVE, "active"));
        }

        @Override public List<Op> apply(HostContext ctx) {
            return List.of(Op.Run.of("restart nvidia-persistenced", "systemctl restart nvidia-persistenced"));
        }

        @Override public List<Probe> verify(HostContext ctx) {
            return List.of(Probe.equals("nvidia-persistenced running", PERSISTENCED_ACTIVE, "active"),
                Probe.of("every GPU in persistence mode", PERSISTENCE_MODE, r -> GpuHealth.persistenceProblem(r.stdout(), true)));
        }
    }

    /** Reload the NVIDIA kernel modules on {@code node} (a driver/library mismatch), only while no process holds a GPU. */
    public static Phase reloadModules(String node) {
        return new Phase("reload-modules", "reload the NVIDIA kernel modules on " + node, List.of(new ModuleReloadStep(node)), false);
    }

    /** The driver as nvidia-smi sees it: a mismatch says so (exit 18), else the driver version of each GPU. */
    static final String DRIVER = "nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1";

    /** What is wrong with {@link #DRIVER}'s answer: the mismatch, or nvidia-smi failing. */
    static Optional<String> driverProblem(ExecResult r) {
        if (r.stdout().contains("version mismatch")) return Optional.of("nvidia-smi: " + Probe.oneLine(r.stdout()));
        return r.ok() ? Optional.empty() : Optional.of("nvidia-smi failed (exit " + r.exit() + "): " + r.tail(2));
    }

    /** The modules a reload removes, users first (nvidia_drm uses nvidia_modeset, every one uses nvidia). */
    static final List<String> UNLOAD_ORDER = List.of("nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia");
    /** ... and loads back, each after the one it uses. */
    static final List<String> LOAD_ORDER = List.of("nvidia", "nvidia_modeset", "nvidia_drm", "nvidia_uvm");

    /**
     * The shell that reloads the NVIDIA modules: nvidia-persistenced stopped when it runs (it holds every GPU); then,
     * asked every 2 s up to {@link #RESET_TRIES} times, the processes with a /dev/nvidia* file open (the drain before it
     * waited for the GPU jobs, so a holder now is one still exiting, or a host daemon: DCGM, a monitoring agent);
     * then {@code modprobe -r} of the loaded ones among {@link #UNLOAD_ORDER} (the kernel refuses a module in use:
     * its message is shown) and {@code modprobe} of the same again, {@code nvidia} always; persistenced started again.
     * A refusal starts persistenced again and fails naming the holders. Never kills anything.
     */
    static String reloadCommand() {
        return reloadCommand(RESET_TRIES, 2, "/dev/nvidia*");
    }

    /** @param devices the glob of the GPUs' device files whose holders are waited for */
    static String reloadCommand(int tries, int pauseSeconds, String devices) {
        String unload = String.join(" ", UNLOAD_ORDER);
        String load = String.join(" ", LOAD_ORDER);
        String next = "end the processes holding the GPUs, or run the repair again with --reboot";
        return "loaded=$(lsmod | awk 'NR>1 {print $1}'); has() { printf '%s\\n' \"$loaded\" | grep -qx \"$1\"; };"
            + " pd=0; if systemctl is-active --quiet nvidia-persistenced 2>/dev/null; then pd=1; systemctl stop nvidia-persistenced || exit 1; fi;"
            + " back() { if [ $pd = 1 ]; then systemctl start nvidia-persistenced; fi; };"
            + " n=0; while :; do held=$(find /proc/[0-9]*/fd -maxdepth 1 -lname '" + devices + "' 2>/dev/null | cut -d/ -f3 | sort -un"
            + " | while read -r p; do echo \"$p $(cat /proc/$p/comm 2>/dev/null)\"; done | paste -sd, -);"
            + " [ -z \"$held\" ] && break; n=$((n+1)); if [ $n -ge " + tries + " ]; then back; echo \"the GPUs are still held by: $held:"
            + " the NVIDIA modules not reloaded; " + next + "\" >&2; exit 1; fi; sleep " + pauseSeconds + "; done;"
            + " rm=''; for m in " + unload + "; do if has $m; then rm=\"$rm $m\"; fi; done;"
            + " if [ -n \"$rm\" ]; then echo \"modprobe -r$rm\"; if ! out=$(modprobe -r$rm 2>&1); then back;"
            + " echo \"modprobe -r$rm refused: $out; the NVIDIA modules not reloaded (fuser -v /dev/nvidia* names the holders); " + next + "\" >&2; exit 1; fi; fi;"
            + " for m in " + load + "; do if [ $m = nvidia ] || has $m; then echo \"modprobe $m\"; modprobe $m || { back; exit 1; }; fi; done;"
            + " if [ $pd = 1 ]; then systemctl start nvidia-persistenced || exit 1; echo 'nvidia-persistenced started again'; fi";
    }

    static final class ModuleReloadStep implements Step {
        private final String node;

        ModuleReloadStep(String node) { this.node = node; }

        @Override public String id() { return "reload-modules"; }
        @Override public String title() { return "reload the NVIDIA kernel modules on " + node + ", only while no process holds a GPU"; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().name().equals(node); }

        /** Due while nvidia-smi reports the mismatch: a second repair, or one after a reboot, finds nothing to reload. */
        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.of("the loaded module and the NVML library agree (nvidia-smi answers)", DRIVER, RepairRemedies::driverProblem));
        }

        @Override public List<Op> apply(HostContext ctx) {
            return List.of(Op.Run.of("reload the NVIDIA kernel modules (" + String.join(" ", UNLOAD_ORDER) + ")", reloadCommand()));
        }

        @Override public List<Probe> verify(HostContext ctx) {
            return List.of(Probe.of("the new module loaded: nvidia-smi answers without a mismatch", DRIVER, RepairRemedies::driverProblem));
        }
    }
}
