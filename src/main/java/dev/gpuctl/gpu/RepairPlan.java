package dev.gpuctl.gpu;

import dev.gpuctl.kube.ClusterView;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code gpuctl repair}'s diagnosis of one GPU node and the remedies it calls for, least disruptive first: pure
 * functions over typed facts (what the node's nvidia-smi and kernel log said, what the master's API server says of the
 * node and its device plugin pod), so that a unit test feeds facts and checks the plan.
 *
 * <p>Over 300 lines as one thing: the diagnosis and its remedies are one decision table over one {@link Facts}
 * record, least disruptive first; its two CSV readers feed only that table.
 */
public final class RepairPlan {
    private RepairPlan() {}

    /** What a repair may do to a node, least disruptive first. */
    public enum Remedy {
        /**
         * NVIDIA's prevention made on the host: the /dev/char links of the driver's device nodes and the udev rule that
         * makes them at every boot ({@link DevChar}): a daemon-reload then takes no GPU from a container.
         */
        DEV_CHAR_LINKS("make the /dev/char links of the NVIDIA device nodes (" + DevChar.CREATE + ") and NVIDIA's udev rule "
            + DevChar.RULE_FILE + " (containers keep their GPUs across systemctl daemon-reload)"),
        /**
         * Delete the pods whose containers lost their GPUs (NVIDIA: the container must be deleted; started again, it has
         * them back): those a controller makes again (ReplicaSet, StatefulSet, DaemonSet); a Job's or a bare pod only with
         * {@code --force} (its deletion ends its run), else named.
         */
        RESTART_LOST_PODS("restart the pods that lost their GPUs (delete them: their controller starts them again with the GPUs;"
            + " a Job's or a bare pod only with --force)"),
        /** Delete the node's device plugin pod (its DaemonSet makes a new one): clears a sticky unhealthy mark. */
        RESTART_PLUGIN("restart the device plugin pod on the node (clears the plugin's sticky unhealthy mark)"),
        /** {@code systemctl restart nvidia-persistenced}: the unit is enabled but not running. */
        RESTART_PERSISTENCED("restart nvidia-persistenced (enabled but not running: the GPUs lose persistence mode)"),
        /** {@code nvidia-smi -r -i N} on each GPU with a hardware Xid, only while no process holds it. */
        RESET_GPU("reset the GPU(s) with a hardware Xid (nvidia-smi -r -i N), only while no process holds them"),
        /**
         * Unload the NVIDIA kernel modules and load them again (the driver package's new module after an upgrade without a
         * reboot), only while no process holds a GPU; nvidia-persistenced is stopped for it and started again.
         */
        RELOAD_MODULES("reload the NVIDIA kernel modules (modprobe -r nvidia_uvm nvidia_drm nvidia_modeset nvidia; modprobe nvidia),"
            + " only while no process holds a GPU; nvidia-persistenced stopped for it"),
        /** Reboot over ssh and wait for the host, its container runtime and kubelet. */
        REBOOT("reboot the host over ssh and wait for it, its container runtime and its kubelet");

        private final String what;

        Remedy(String what) { this.what = what; }

        public String what() { return what; }
    }

    /**
     * nvidia-persistenced as systemd sees it ({@code systemctl show -p LoadState -p UnitFileState -p ActiveState}).
     *
     * @param installed the unit exists; {@code enabled}: it starts at boot; {@code active}: it runs now
     */
    public record Persistenced(boolean installed, boolean enabled, boolean active) {
        /** No such unit (a host without it, or not asked). */
        public static final Persistenced ABSENT = new Persistenced(false, false, false);

        /** Enabled but not running: the GPUs lose persistence mode, and a restart is the remedy. */
        public boolean down() { return installed && enabled && !active; }

        /** From {@code systemctl show -p LoadState -p UnitFileState -p ActiveState nvidia-persistenced}'s KEY=VALUE lines. */
        public static Persistenced parse(String show) {
            Map<String, String> kv = new LinkedHashMap<>();
            for (String line : show.split("\\R")) {
                int eq = line.indexOf('=');
                if (eq > 0) kv.put(line.substring(0, eq).strip(), line.substring(eq + 1).strip());
            }
            boolean installed = "loaded".equals(kv.get("LoadState"));
            return new Persistenced(installed, installed && "enabled".equals(kv.get("UnitFileState")),
                installed && List.of("active", "activating", "reloading").contains(kv.getOrDefault("ActiveState", "")));
        }
    }

    /**
     * A node's last repair as its annotation {@link ClusterView#LAST_REPAIR_ANNOTATION} says ("TIME;proved|not-proved;remedies=A,B").
     *
     * @param at       when it began (ISO-8601 UTC, as written)
     * @param remedies the remedies it tried, by name (reboot, reset_gpu, ...), empty when none was needed
     */
    public record LastRepair(String at, boolean proved, List<String> remedies) {
        public LastRepair { remedies = List.copyOf(remedies); }

        /** The annotation's value read; empty when it is not in the form repair writes. */
        public static Optional<LastRepair> parse(String annotation) {
            String[] f = annotation.strip().split(";", -1);
            if (f.length != 3 || !f[0].matches("\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z") || !f[1].matches("proved|not-proved")
                || !f[2].startsWith("remedies=")) {
                return Optional.empty();
            }
            String r = f[2].substring("remedies=".length());
            return Optional.of(new LastRepair(f[0], f[1].equals("proved"), r.isEmpty() ? List.of() : List.of(r.split(","))));
        }
    }

    /** The plugin's view of a node: its allocatable nvidia.com/gpu and its device plugin pod (namespace/name), if any. */
    public record PluginView(int allocatable, Optional<String> pod, boolean cordoned) {}

    /**
     * Everything the diagnosis read about one node.
     *
     * @param recorded    the GPUs recorded at bootstrap (node annotation), empty when none was recorded
     * @param present     the GPUs nvidia-smi lists now (index, UUID, bus id)
     * @param smiProblem  why nvidia-smi listed nothing ("" when it answered)
     * @param driverProblem a driver/library mismatch, when there is one
     * @param holders     processes holding each GPU, by UUID ("PID NAME")
     * @param xids        the Xid lines in the kernel log since boot (since the last proved repair)
     * @param memory      uncorrectable ECC errors, pending or failed row remapping ({@link GpuMemory#memoryProblems})
     * @param replicas    the device plugin's replicas per GPU (1 unless shared)
     * @param persistenced nvidia-persistenced's unit
     * @param lostPods    the running GPU pods on the node whose nvidia-smi -L says they lost their GPUs
     * @param devChar     what is wrong with the /dev/char links or NVIDIA's udev rule on the host, when something is
     */
    public record Facts(String node, List<GpuHealth.Recorded> recorded, List<Xids.Gpu> present, String smiProblem,
                        Optional<String> driverProblem, Map<String, List<String>> holders, List<Xids.Xid> xids,
                        List<String> memory, PluginView plugin, int replicas, Persistenced persistenced,
                        List<DevChar.PodNvml> lostPods, Optional<String> devChar) {
        public Facts {
            lostPods = List.copyOf(lostPods);
            recorded = List.copyOf(recorded);
            present = List.copyOf(present);
            holders = Map.copyOf(holders);
            xids = List.copyOf(xids);
            memory = List.copyOf(memory);
        }

        /** Facts of a host without nvidia-persistenced. */
        public Facts(String node, List<GpuHealth.Recorded> recorded, List<Xids.Gpu> present, String smiProblem,
                     Optional<String> driverProblem, Map<String, List<String>> holders, List<Xids.Xid> xids,
                     List<String> memory, PluginView plugin, int replicas) {
            this(node, recorded, present, smiProblem, driverProblem, holders, xids, memory, plugin, replicas, Persistenced.ABSENT);
        }

        /** Facts without the /dev/char findings (none lost, the prevention not asked). */
        public Facts(String node, List<GpuHealth.Recorded> recorded, List<Xids.Gpu> present, String smiProblem,
                     Optional<String> driverProblem, Map<String, List<String>> holders, List<Xids.Xid> xids,
                     List<String> memory, PluginView plugin, int replicas, Persistenced persistenced) {
            this(node, recorded, present, smiProblem, driverProblem, holders, xids, memory, plugin, replicas, persistenced, List.of(), Optional.empty());
        }

        /** A driver/library mismatch: nvidia-smi answers nothing else, so what it would list is unknown, not missing. */
        public boolean mismatch() { return driverProblem.filter(p -> p.contains("mismatch")).isPresent(); }

        /** The recorded GPUs nvidia-smi no longer lists, by UUID. */
        public List<GpuHealth.Recorded> missing() {
            Set<String> now = new LinkedHashSet<>();
            present.forEach(g -> now.add(g.uuid()));
            return recorded.stream().filter(r -> !now.contains(r.uuid())).toList();
        }

        /** The hardware (and unlisted) Xids; application Xids are the jobs' own faults. */
        public List<Xids.Xid> hardwareXids() {
            return xids.stream().filter(x -> x.kind().cause() != Xids.Cause.APPLICATION).toList();
        }

        /** allocatable nvidia.com/gpu the node should advertise: the GPUs present × replicas. */
        public int wantAllocatable() { return present.size() * replicas; }
    }

    /** The diagnosis's findings (for people) and the remedies chosen, in the order they run. */
    public record Plan(String node, List<String> findings, List<Remedy> remedies, List<Integer> resetGpus, String humanStep) {
        public Plan {
            findings = List.copyOf(findings);
            remedies = List.copyOf(remedies);
            resetGpus = List.copyOf(resetGpus);
        }

        /** Nothing found: the repair changes nothing. */
        public boolean healthy() { return findings.isEmpty() && remedies.isEmpty(); }

        /**
         * The jobs must be held safe first (cordon, wait for the GPU jobs, drain): a remedy changes the GPUs, the driver
         * or the plugin. The /dev/char links and the restart of pods that already lost their GPUs need no GPU free.
         */
        public boolean holdsJobs() {
            return remedies.stream().anyMatch(r -> r != Remedy.DEV_CHAR_LINKS && r != Remedy.RESTART_LOST_PODS);
        }
    }

    /** Xid 79: the GPU has fallen off the bus; only a reboot (or a human) brings it back. */
    static final int FALLEN_OFF_THE_BUS = 79;

    /** What a person must do when the remedies did not bring the node back. */
    public static final String HUMAN_STEP = "reseat the GPU(s) and check power and cooling; if they stay missing or fail again, have them"
        + " replaced (RMA); check the BIOS sees them (lspci)";

    /**
     * The remedies for a node's facts, least disruptive first, each escalating only as far as the facts need:
     * <ul>
     * <li>a missing GPU, an Xid 79, uncorrectable ECC errors or pending row remaps, or {@code reboot}: a reboot, which
     * also resets every GPU, reloads the driver and restarts the plugin: it is then the only remedy;</li>
     * <li>a driver/library mismatch (the package upgraded without a reboot): the modules reloaded (nvidia-smi answers
     * nothing else then: the GPUs' listing, memory and Xids wait for the proof), then the plugin restarted (it
     * crash-looped on the mismatch);</li>
     * <li>nvidia-persistenced enabled but not running: restarted (after the reload, when there is one);</li>
     * <li>a GPU with a hardware Xid: reset (the plugin's unhealthy mark stays until it restarts, so the plugin is
     * restarted after); allocatable nvidia.com/gpu short of the GPUs present: the plugin restarted.</li>
     * </ul>
     * The plugin's restart is the cheapest remedy and runs first, unless a remedy that changes the GPUs runs: then last.
     */
    public static Plan plan(Facts f, boolean reboot) {
        List<String> findings = new ArrayList<>();
        boolean mismatch = f.mismatch();
        // under a mismatch nvidia-smi lists nothing and reads no memory: those are unknown until the modules are reloaded
        List<GpuHealth.Recorded> missing = mismatch ? List.of() : f.missing();
        List<String> memory = mismatch ? List.of() : f.memory();
        if (f.recorded().isEmpty()) findings.add("no GPUs recorded at bootstrap (annotation " + ClusterView.GPU_RECORD_ANNOTATION + "): GPUs compared by count only");
        if (!missing.isEmpty()) {
            findings.add(missing.size() + " GPU(s) recorded at bootstrap missing from nvidia-smi: "
                + String.join(", ", missing.stream().map(r -> "GPU " + r.index() + " (" + r.uuid() + ")").toList())
                + (f.smiProblem().isBlank() ? "" : " (nvidia-smi: " + GpuHealth.oneLine(f.smiProblem()) + ")"));
        }
        f.driverProblem().ifPresent(p -> findings.add("driver: " + GpuHealth.oneLine(p)));
        memory.forEach(m -> findings.add("memory: " + GpuHealth.oneLine(m)));
        Map<Integer, List<Xids.Xid>> hardwareByCode = new LinkedHashMap<>();
        for (Xids.Xid x : f.hardwareXids()) hardwareByCode.computeIfAbsent(x.code(), k -> new ArrayList<>()).add(x);
        hardwareByCode.forEach((code, xs) -> findings.add("hardware Xid " + code + " (" + Xids.kind(code).name() + ") x" + xs.size()
            + " since boot on " + String.join(", ", xs.stream().map(x -> Xids.gpuName(x.pci(), f.present())).distinct().toList())));
        long app = f.xids().size() - f.hardwareXids().size();
        if (app > 0) findings.add(app + " application Xid(s) since boot (the jobs' own faults: no repair needed for them)");
        int want = mismatch ? f.recorded().size() * f.replicas() : f.wantAllocatable();
        boolean pluginShort = f.plugin().allocatable() < want;
        if (pluginShort) {
            findings.add("the device plugin advertises " + f.plugin().allocatable() + " nvidia.com/gpu, " + want
                + " expected for the " + (mismatch ? f.recorded().size() + " GPU(s) recorded" : f.present().size() + " GPU(s) present")
                + f.plugin().pod().map(p -> " (pod " + p + ")").orElse(" (no plugin pod on the node)"));
        }
        f.devChar().ifPresent(p -> findings.add("prevention missing: " + GpuHealth.oneLine(p)));
        if (!f.lostPods().isEmpty()) {
            findings.add(f.lostPods().size() + " running GPU pod(s) lost their GPUs (nvidia-smi -L in them: \"" + DevChar.LOST + "\"): "
                + String.join(", ", f.lostPods().stream().map(p -> p.pod() + " (" + (p.owner().equals("-") ? "bare pod" : p.owner()) + ")").toList())
                + "; a container gets them back only when started again");
        }
        boolean persistencedDown = f.persistenced().down();
        if (persistencedDown) findings.add("nvidia-persistenced is enabled but not running");
        f.holders().forEach((uuid, ps) -> {
            if (!ps.isEmpty()) findings.add("GPU " + uuid + " is held by " + String.join(", ", ps));
        });
        // an application Xid alone, or holders alone, need nothing: only hardware, missing GPUs, driver and plugin count
        // a pending row remap or an uncorrectable ECC error: a reboot resets every GPU and applies the remap
        boolean needsReboot = reboot || !missing.isEmpty() || !memory.isEmpty()
            || (f.driverProblem().isPresent() && !mismatch)
            || f.hardwareXids().stream().anyMatch(x -> x.code() == FALLEN_OFF_THE_BUS)
            || (f.present().isEmpty() && !f.recorded().isEmpty() && !mismatch);
        List<Remedy> remedies = new ArrayList<>();
        List<Integer> reset = new ArrayList<>();
        // the prevention first: cheap, needs no GPU free, and a reboot after it keeps the links (the rule runs at boot)
        boolean devChar = f.devChar().isPresent() || !f.lostPods().isEmpty();
        if (devChar) remedies.add(Remedy.DEV_CHAR_LINKS);
        if (needsReboot) {
            remedies.add(Remedy.REBOOT);
        } else if (mismatch) {
            // the reload starts a running persistenced again and leaves every GPU freshly initialised: no reset after it;
            // a persistenced that is down (it cannot start under the mismatch) is started once the new module is in
            remedies.add(Remedy.RELOAD_MODULES);
            if (persistencedDown) remedies.add(Remedy.RESTART_PERSISTENCED);
            remedies.add(Remedy.RESTART_PLUGIN);
        } else {
            for (Xids.Xid x : f.hardwareXids()) {
                Xids.gpuOf(x.pci(), f.present()).ifPresent(g -> {
                    if (!reset.contains(g.index())) reset.add(g.index());
                });
            }
            if (persistencedDown) remedies.add(Remedy.RESTART_PERSISTENCED);
            if (!reset.isEmpty()) remedies.add(Remedy.RESET_GPU);
            // the plugin's restart is the cheapest remedy: first, unless the GPUs change (then it must see them changed)
            if (pluginShort || !reset.isEmpty()) remedies.add(reset.isEmpty() ? (devChar ? 1 : 0) : remedies.size(), Remedy.RESTART_PLUGIN);
        }
        // a drain before the remedies already restarts the pods (or waits for their jobs): only without one
        boolean drains = remedies.stream().anyMatch(r -> r != Remedy.DEV_CHAR_LINKS);
        if (!f.lostPods().isEmpty() && !drains) remedies.add(Remedy.RESTART_LOST_PODS);
        boolean sick = needsReboot || mismatch || persistencedDown || !f.hardwareXids().isEmpty() || pluginShort || devChar;
        if (!sick) return new Plan(f.node(), List.of(), List.of(), List.of(), HUMAN_STEP);
        return new Plan(f.node(), findings, remedies, reset, HUMAN_STEP);
    }

    /** The diagnosis and the plan, for people, before anything changes. */
    public static String text(Plan p) {
        StringBuilder sb = new StringBuilder("repair " + p.node() + ":\n");
        if (p.healthy()) return sb.append("  diagnosis: healthy (every recorded GPU present, no hardware Xid, plugin count right): nothing to repair\n").toString();
        sb.append("  diagnosis:\n");
        p.findings().forEach(s -> sb.append("    - ").append(s).append('\n'));
        sb.append("  plan:\n");
        int n = 1;
        if (p.holdsJobs()) sb.append("    ").append(n++).append(". hold the jobs safe: cordon ").append(p.node()).append(", wait for its GPU jobs, drain it\n");
        for (Remedy r : p.remedies()) {
            sb.append("    ").append(n++).append(". ").append(r.what());
            if (r == Remedy.RESET_GPU) sb.append(": GPU ").append(String.join(", ", p.resetGpus().stream().map(String::valueOf).toList()));
            sb.append('\n');
        }
        sb.append("    ").append(n++).append(". prove it: every recorded GPU listed by UUID, no new hardware Xid, no uncorrectable ECC error or"
            + " pending row remap, allocatable nvidia.com/gpu back, every running GPU pod's nvidia-smi -L answers, "
            + (p.holdsJobs() ? "a smoke pod asking for every GPU runs nvidia-smi -L, " : "")
            + "dcgmi diag -r 1 where DCGM is installed\n");
        sb.append("    ").append(n).append(". uncordon ").append(p.node()).append(" only when proved; otherwise it stays cordoned\n");
        return sb.toString();
    }

    /** The holders of each GPU from {@code nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name --format=csv,noheader}. */
    public static Map<String, List<String>> parseHolders(String csv) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (String line : csv.split("\\R")) {
            String[] f = line.split(",", 3);
            if (f.length < 2 || !f[0].strip().startsWith("GPU-")) continue;
            out.computeIfAbsent(f[0].strip(), k -> new ArrayList<>()).add((f[1].strip() + " " + (f.length > 2 ? f[2].strip() : "")).strip());
        }
        return out;
    }

    /** The GPUs from {@code nvidia-smi --query-gpu=index,uuid,pci.bus_id --format=csv,noheader}; lines that are not are skipped. */
    public static List<Xids.Gpu> parseGpus(String csv) {
        List<Xids.Gpu> out = new ArrayList<>();
        for (String line : csv.split("\\R")) {
            String[] f = line.split(",");
            if (f.length == 3 && f[0].strip().matches("\\d{1,4}") && f[1].strip().startsWith("GPU-")) {
                out.add(new Xids.Gpu(Integer.parseInt(f[0].strip()), f[1].strip(), f[2].strip()));
            }
        }
        return out;
    }
}
