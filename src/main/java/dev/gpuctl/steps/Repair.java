package dev.gpuctl.steps;

import dev.gpuctl.hostconf.ClusterView;
import dev.gpuctl.hostconf.GpuHealth;
import dev.gpuctl.hostconf.Kube;
import dev.gpuctl.hostconf.Xids;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code gpuctl repair}'s phases for the one engine, one node at a time: the read-only diagnosis ({@link #diagnose}),
 * the jobs held safe (drain's own phase, {@link NodePhases#drain}), each remedy with its own check ({@link #restartPlugin},
 * {@link #resetGpus}, {@link #reboot}), the proof ({@link #prove}) and the record ({@link #record}). What each read is
 * kept by key ({@link Probe#keeping}) for the engine to build the diagnosis from.
 */
public final class Repair {
    private Repair() {}

    /** How long a remedy's check waits for the node to come back (plugin re-registered, host rebooted). */
    public static final Duration COME_BACK = Duration.ofMinutes(5);
    /** How long the smoke pod may take. */
    public static final Duration SMOKE_WAIT = Duration.ofMinutes(2);
    /** The smoke pod's image (NVIDIA's CUDA base image: nvidia-smi comes from the driver the runtime injects). */
    public static final String SMOKE_IMAGE = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04";
    /** The node annotation holding the last repair's outcome. */
    public static final String LAST_REPAIR = "gpuctl.dev/last-repair";

    // ---- keys of the diagnosis's answers

    public static String clusterKey() { return "repair.cluster"; }
    public static String bootIdKey(String node) { return "repair." + node + ".bootId"; }
    public static String gpusKey(String node) { return "repair." + node + ".gpus"; }
    public static String holdersKey(String node) { return "repair." + node + ".holders"; }
    public static String xidsKey(String node) { return "repair." + node + ".xids"; }
    public static String moduleKey(String node) { return "repair." + node + ".module"; }
    public static String driverKey(String node) { return "repair." + node + ".driver"; }
    public static String clockKey(String node) { return "repair." + node + ".clock"; }
    public static String memoryKey(String node) { return "repair." + node + ".memory"; }

    /** The GPUs, one "INDEX, UUID, BUS" line each. */
    public static final String GPUS = "nvidia-smi --query-gpu=index,uuid,pci.bus_id --format=csv,noheader 2>&1";
    /** The processes holding each GPU, one "UUID, PID, NAME" line each. */
    public static final String HOLDERS = "nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name --format=csv,noheader 2>&1";
    /** The host's clock, seconds since the epoch: what "since the repair began" means on the host. */
    public static final String CLOCK = "date +%s";
    /** The host's boot id (a reboot makes a new one; the kubelet reports it as the node's nodeInfo.bootID). */
    public static final String BOOT_ID = "cat /proc/sys/kernel/random/boot_id";

    /** The diagnosis: read-only, on the master (the cluster's view) and on each node. */
    public static Phase diagnose(List<String> nodes) {
        return new Phase("diagnose", "diagnose " + String.join(", ", nodes), List.of(new DiagnoseStep(nodes)), false);
    }

    static final class DiagnoseStep implements Step {
        private final List<String> nodes;

        DiagnoseStep(List<String> nodes) { this.nodes = List.copyOf(nodes); }

        @Override public String id() { return "diagnose"; }
        @Override public String title() { return "diagnose the GPUs of " + String.join(", ", nodes); }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster() || nodes.contains(ctx.node().name()); }

        @Override public List<Probe> check(HostContext ctx) {
            List<Probe> probes = new ArrayList<>();
            if (ctx.node().isMaster()) probes.add(Probe.keeping("the cluster's nodes and pods", ClusterView.COMMAND, clusterKey()));
            String n = ctx.node().name();
            if (nodes.contains(n)) {
                probes.add(Probe.keeping("the host's clock", CLOCK, clockKey(n)));
                probes.add(Probe.keeping("the host's boot id", BOOT_ID, bootIdKey(n)));
                probes.add(Probe.keeping("the GPUs nvidia-smi lists", GPUS, gpusKey(n)));
                probes.add(Probe.keeping("the processes holding each GPU", HOLDERS, holdersKey(n)));
                probes.add(Probe.keeping("the Xids in the kernel log since boot", GpuHealthStep.XID, xidsKey(n)));
                probes.add(Probe.keeping("the loaded kernel module's version", GpuHealthStep.MODULE, moduleKey(n)));
                probes.add(Probe.keeping("the NVML library's driver version", GpuHealthStep.DRIVER, driverKey(n)));
                probes.add(Probe.keeping("the GPUs' ECC errors and row remapping", GpuHealthStep.MEMORY, memoryKey(n)));
            }
            return probes;
        }

        @Override public List<Op> apply(HostContext ctx) { return List.of(); }
    }

    /** Restart the device plugin pod {@code pod} ("NAMESPACE/NAME") on {@code node}; proved by allocatable = {@code want}. */
    public static Phase restartPlugin(String node, Optional<String> pod, int want) {
        return new Phase("restart-plugin", "restart the device plugin on " + node, List.of(new PluginRestartStep(node, pod, want)), false);
    }

    /** The probe a remedy and the proof share: allocatable nvidia.com/gpu of {@code node} is {@code want}. */
    static Probe allocatable(String node, int want) {
        return ClusterProbes.cluster("node " + node + " allocatable nvidia.com/gpu = " + want, view -> {
            var n = view.node(node);
            if (n.isEmpty()) return Optional.of("node " + node + " not found (kubectl get nodes)");
            String have = n.get().allocatable("nvidia.com/gpu");
            return have.equals(String.valueOf(want)) ? Optional.empty()
                : Optional.of("allocatable nvidia.com/gpu is " + have + ", " + want + " expected; " + GpuStep.pluginPod(view, node));
        });
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

        @Override public List<Probe> check(HostContext ctx) { return List.of(allocatable(node, want)); }

        @Override public List<Op> apply(HostContext ctx) {
            if (pod.isEmpty()) return List.of();
            String[] nsName = pod.get().split("/", 2);
            return List.of(Op.Run.of("delete the device plugin pod " + pod.get() + " (its DaemonSet makes a new one)",
                Kube.kubectl("-n " + Sh.quote(nsName[0]) + " delete pod " + Sh.quote(nsName[1]) + " --ignore-not-found --wait=false")));
        }

        @Override public List<Probe> verify(HostContext ctx) { return List.of(allocatable(node, want).waitingUpTo(COME_BACK)); }
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

    /**
     * Reboot {@code node} (it was on boot {@code bootId}) and wait, on the master, for its kubelet to report a new boot
     * and Ready (the runtime up: the kubelet is not Ready without it).
     */
    public static List<Phase> reboot(String node, String bootId) {
        return List.of(new Phase("reboot", "reboot " + node, List.of(new RebootStep(node, bootId)), false),
            new Phase("node-back", "wait for " + node + " to come back", List.of(new NodeBackStep(node, bootId)), false));
    }

    /** The boot id the node's kubelet reports, then its Ready condition's status. */
    static String nodeBoot(String node) {
        return Kube.kubectl("get node " + Sh.quote(node) + " -o 'jsonpath={.status.nodeInfo.bootID} {.status.conditions[?(@.type==\"Ready\")].status}'");
    }

    static final class RebootStep implements Step {
        private final String node;
        private final String bootId;

        RebootStep(String node, String bootId) {
            this.node = node;
            this.bootId = bootId;
        }

        @Override public String id() { return "reboot"; }
        @Override public String title() { return "reboot " + node; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().name().equals(node); }

        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.of("rebooted since the diagnosis (boot id other than " + bootId + ")", BOOT_ID,
                r -> r.ok() && !r.stdout().strip().isEmpty() && !r.stdout().strip().equals(bootId) ? Optional.empty()
                    : Optional.of("still on boot " + bootId)));
        }

        /** The reboot starts 2 s later, so that this command returns over ssh first. */
        @Override public List<Op> apply(HostContext ctx) {
            return List.of(Op.Run.of("reboot " + node + " (in 2 s)", "systemd-run --on-active=2 --timer-property=AccuracySec=100ms /bin/systemctl reboot"));
        }

        /** Proved from the master ({@link NodeBackStep}): the host is going down now. */
        @Override public List<Probe> verify(HostContext ctx) { return List.of(); }
    }

    static final class NodeBackStep implements Step {
        private final String node;
        private final String bootId;

        NodeBackStep(String node, String bootId) {
            this.node = node;
            this.bootId = bootId;
        }

        @Override public String id() { return "node-back"; }
        @Override public String title() { return node + " back: a new boot, its kubelet Ready"; }
        @Override public boolean readsCluster() { return true; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

        static Optional<String> problem(String answer, String node, String bootId) {
            String[] f = answer.strip().split("\\s+");
            if (f.length < 2 || f[0].isEmpty() || f[0].equals(bootId)) return Optional.of(node + " has not come back from its reboot yet (boot " + (f.length > 0 ? f[0] : "?") + ")");
            if (!f[1].equals("True")) return Optional.of(node + " rebooted (boot " + f[0] + ") but is not Ready (" + f[1] + ")");
            return Optional.empty();
        }

        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.of(node + " rebooted and Ready", nodeBoot(node), r -> r.ok() ? problem(r.stdout(), node, bootId)
                : Optional.of("kubectl failed (exit " + r.exit() + "): " + r.tail(2))).waitingUpTo(COME_BACK));
        }

        @Override public List<Op> apply(HostContext ctx) { return List.of(); }

        @Override public String whileWaiting(String problem, Duration upTo) { return "waiting up to " + upTo.toSeconds() + "s: " + problem; }
    }

    /**
     * The proof: on the node, every GPU recorded at bootstrap listed by UUID and no hardware Xid since {@code since}
     * (the host's clock at the diagnosis); on the master, allocatable nvidia.com/gpu = {@code want}; then a smoke pod
     * pinned to the node, asking for every GPU, runs {@code nvidia-smi -L} and lists them.
     */
    public static List<Phase> prove(String node, String record, long since, int want) {
        // the host first: a GPU still missing fails the proof at once, without waiting for an allocatable that cannot come
        return List.of(new Phase("prove-host", "prove " + node + "'s GPUs", List.of(new ProveStep(node, record, since, want, false)), false),
            new Phase("prove-cluster", "prove " + node + " in the cluster", List.of(new ProveStep(node, record, since, want, true),
                new SmokePodStep(node, want)), false));
    }

    /** The Xid lines the kernel logged since {@code since} (seconds since the epoch). */
    static String xidsSince(long since) {
        return "if out=$(journalctl -k -q --no-pager --since @" + since + " 2>&1); then :; else echo \"cannot read the kernel log: $out\" >&2; exit 1; fi;"
            + " printf '%s\\n' \"$out\" | grep -F 'NVRM: Xid' || true";
    }

    /** What is wrong with the Xids logged since the repair began: each hardware one. */
    static Optional<String> newXids(String log) {
        List<Xids.Xid> hw = Xids.parse(log).stream().filter(x -> x.kind().cause() != Xids.Cause.APPLICATION).toList();
        if (hw.isEmpty()) return Optional.empty();
        return Optional.of(hw.size() + " hardware Xid(s) since the repair began: " + String.join("; ",
            hw.stream().map(x -> "Xid " + x.code() + " (" + x.kind().name() + ") on " + x.pci()).toList()));
    }

    /** "INDEX:UUID,..." from {@link #GPUS}' answer (the record's form). */
    static String recordForm(String gpusAnswer) {
        List<String> parts = new ArrayList<>();
        for (String line : gpusAnswer.split("\\R")) {
            String[] f = line.split(",");
            if (f.length >= 2 && f[0].strip().matches("\\d{1,4}") && f[1].strip().startsWith("GPU-")) parts.add(f[0].strip() + ":" + f[1].strip());
        }
        return String.join(",", parts);
    }

    static final class ProveStep implements Step {
        private final String node;
        private final String record;
        private final long since;
        private final int want;
        private final boolean onMaster;

        /** @param onMaster the cluster's side (allocatable, on the master), else the host's (GPUs and Xids, on the node) */
        ProveStep(String node, String record, long since, int want, boolean onMaster) {
            this.node = node;
            this.record = record;
            this.since = since;
            this.want = want;
            this.onMaster = onMaster;
        }

        @Override public String id() { return "prove"; }
        @Override public String title() {
            return onMaster ? node + ": allocatable nvidia.com/gpu back to " + want : node + ": every recorded GPU listed, no new hardware Xid";
        }
        @Override public boolean readsCluster() { return onMaster; }
        @Override public boolean runsOn(HostContext ctx) { return onMaster ? ctx.node().isMaster() : ctx.node().name().equals(node); }

        @Override public List<Probe> check(HostContext ctx) {
            if (onMaster) return List.of(allocatable(node, want).waitingUpTo(COME_BACK));
            List<Probe> probes = new ArrayList<>();
            probes.add(Probe.of("every GPU recorded at bootstrap listed by nvidia-smi (by UUID)", GPUS,
                r -> GpuHealth.missingFromRecord(record, r.ok() ? recordForm(r.stdout()) : "", r.ok() ? "" : r.stdout())));
            probes.add(Probe.of("no uncorrectable ECC error, pending or failed row remapping", GpuHealthStep.MEMORY, r -> {
                List<String> p = GpuHealth.memoryProblems(r.stdout());
                return p.isEmpty() ? Optional.empty() : Optional.of(String.join("\n", p));
            }));
            probes.add(Probe.of("no hardware Xid since the repair began", xidsSince(since),
                r -> r.ok() ? newXids(r.stdout()) : Optional.of("exit " + r.exit() + ": " + r.tail(2))));
            return probes;
        }

        @Override public List<Op> apply(HostContext ctx) { return List.of(); }
    }

    /** The smoke pod's name on {@code node}. */
    public static String smokePod(String node) { return "gpuctl-smoke-" + node; }

    /** The smoke pod: pinned to the node (nodeName: no scheduler, cordon or not), every GPU, {@code nvidia-smi -L}. */
    static String smokeManifest(String node, int gpus) {
        return "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" + smokePod(node) + "\",\"namespace\":\"default\","
            + "\"labels\":{\"app.kubernetes.io/managed-by\":\"gpuctl\",\"gpuctl.dev/smoke\":\"" + node + "\"}},"
            + "\"spec\":{\"nodeName\":\"" + node + "\",\"restartPolicy\":\"Never\",\"tolerations\":[{\"operator\":\"Exists\"}],"
            + "\"containers\":[{\"name\":\"smoke\",\"image\":\"" + SMOKE_IMAGE + "\",\"command\":[\"nvidia-smi\",\"-L\"],"
            + "\"resources\":{\"limits\":{\"nvidia.com/gpu\":" + gpus + "}}}]}}";
    }

    /** The smoke pod's phase, then its log. */
    static String smokeAnswer(String node) {
        String pod = Sh.quote(smokePod(node));
        return "p=$(" + Kube.kubectl("-n default get pod " + pod + " -o 'jsonpath={.status.phase}'") + ") || exit 1; echo \"$p\";"
            + " case \"$p\" in Succeeded|Failed) " + Kube.kubectl("-n default logs " + pod) + " 2>&1 || true;; esac";
    }

    /** What is wrong with the smoke pod's answer ({@link #smokeAnswer}): not Succeeded, or fewer GPUs listed than it asked for. */
    static Optional<String> smokeProblem(String answer, String node, int gpus) {
        String[] lines = answer.strip().split("\\R", 2);
        String phase = lines[0].strip();
        String log = lines.length > 1 ? lines[1] : "";
        if (!phase.equals("Succeeded")) {
            return Optional.of("smoke pod default/" + smokePod(node) + " is " + (phase.isEmpty() ? "not started" : phase)
                + (log.isBlank() ? "" : ": " + Probe.oneLine(log)));
        }
        long listed = log.lines().filter(l -> l.startsWith("GPU ")).count();
        if (listed < gpus) return Optional.of("smoke pod's nvidia-smi -L listed " + listed + " GPU(s), " + gpus + " asked for");
        return Optional.empty();
    }

    static final class SmokePodStep implements Step {
        private final String node;
        private final int gpus;

        SmokePodStep(String node, int gpus) {
            this.node = node;
            this.gpus = gpus;
        }

        @Override public String id() { return "smoke-pod"; }
        @Override public String title() { return "smoke pod on " + node + ": nvidia-smi -L with every GPU (" + gpus + ")"; }
        @Override public boolean readsCluster() { return true; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

        /** Before: always due (a pod from an earlier repair proves nothing now). */
        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.of("a smoke pod run for this repair", "true", r -> Optional.of("not run yet")));
        }

        @Override public List<Op> apply(HostContext ctx) {
            return List.of(Op.Run.of("run the smoke pod default/" + smokePod(node),
                Kube.kubectl("-n default delete pod " + Sh.quote(smokePod(node)) + " --ignore-not-found --wait=true >/dev/null") + " && printf '%s' "
                    + Sh.quote(smokeManifest(node, gpus)) + " | " + Kube.kubectl("apply -f -")));
        }

        @Override public List<Probe> verify(HostContext ctx) {
            return List.of(Probe.of("smoke pod default/" + smokePod(node) + " Succeeded, nvidia-smi -L listing " + gpus + " GPU(s)", smokeAnswer(node),
                r -> r.ok() ? smokeProblem(r.stdout(), node, gpus) : Optional.of("kubectl failed (exit " + r.exit() + "): " + r.tail(2)))
                .waitingUpTo(SMOKE_WAIT));
        }
    }

    /**
     * The record on the node ({@value #LAST_REPAIR} = {@code value}: letters, digits and ":,;=.-" only) and the smoke
     * pod removed; when {@code proved}, the Xids logged before {@code answeredSince} (the host's clock when the repair
     * began) marked answered on the host ({@link GpuHealthStep#ANSWERED}: verify and the next diagnosis skip them), then
     * the node uncordoned.
     */
    public static List<Phase> record(String node, String value, boolean proved, long answeredSince) {
        List<Phase> phases = new ArrayList<>();
        phases.add(new Phase("record", "record the repair of " + node, proved && answeredSince >= 0
            ? List.of(new RecordStep(node, value), new AnsweredStep(node, answeredSince)) : List.of(new RecordStep(node, value)), false));
        if (proved) phases.add(NodePhases.uncordon(List.of(node)));
        return phases;
    }

    static final class AnsweredStep implements Step {
        private final String node;
        private final long since;

        AnsweredStep(String node, long since) {
            this.node = node;
            this.since = since;
        }

        @Override public String id() { return "xids-answered"; }
        @Override public String title() { return node + ": the Xids before the repair answered (" + GpuHealthStep.ANSWERED + ")"; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().name().equals(node); }

        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.equals("the Xids before " + since + " answered", "cat " + GpuHealthStep.ANSWERED + " 2>/dev/null; true", String.valueOf(since)));
        }

        @Override public List<Op> apply(HostContext ctx) {
            return List.of(Op.Run.of("mark the Xids before " + since + " answered", "install -d -m 0755 /var/lib/gpuctl && printf '%s\\n' " + since
                + " > " + GpuHealthStep.ANSWERED + ".tmp && chmod 0644 " + GpuHealthStep.ANSWERED + ".tmp && mv -f " + GpuHealthStep.ANSWERED + ".tmp "
                + GpuHealthStep.ANSWERED));
        }
    }

    static final class RecordStep implements Step {
        private final String node;
        private final String value;

        RecordStep(String node, String value) {
            if (!value.matches("[A-Za-z0-9:,;=._+-]*")) throw new IllegalArgumentException("not an annotation value: " + value);
            this.node = node;
            this.value = value;
        }

        @Override public String id() { return "record"; }
        @Override public String title() { return "annotation " + LAST_REPAIR + " on " + node; }
        @Override public boolean readsCluster() { return true; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

        static String current(String node) {
            return Kube.kubectl("get node " + Sh.quote(node) + " -o 'jsonpath={.metadata.annotations." + LAST_REPAIR.replace(".", "\\.") + "}'");
        }

        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.equals("node " + node + " annotated " + LAST_REPAIR + "=" + value, current(node), value));
        }

        @Override public List<Op> apply(HostContext ctx) {
            return List.of(Op.Run.of("annotate node " + node + " " + LAST_REPAIR + " and remove the smoke pod",
                Kube.kubectl("annotate node " + Sh.quote(node) + " " + Sh.quote(LAST_REPAIR + "=" + value) + " --overwrite") + " && "
                    + Kube.kubectl("-n default delete pod " + Sh.quote(smokePod(node)) + " --ignore-not-found --wait=false")));
        }
    }
}
