package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.gpu.DcgmDiag;
import dev.gpuctl.gpu.GpuHealth;
import dev.gpuctl.gpu.GpuMemory;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.gpu.Xids;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code gpuctl repair}'s proof (the node's GPUs by UUID, no new hardware Xid, memory within limits, allocatable back,
 * a smoke pod using every GPU) and its record (the node annotation {@value Repair#LAST_REPAIR}, the Xids answered, the
 * uncordon only when proved).
 */
public final class RepairProof {
    private RepairProof() {}

    static final Duration COME_BACK = Repair.COME_BACK;
    static final Duration SMOKE_WAIT = Repair.SMOKE_WAIT;
    static final String LAST_REPAIR = Repair.LAST_REPAIR;
    static final String SMOKE_IMAGE = Repair.SMOKE_IMAGE;

    /**
     * The proof: on the node, every GPU recorded at bootstrap listed by UUID and no hardware Xid since {@code since}
     * (the host's clock at the diagnosis); on the master, allocatable nvidia.com/gpu = {@code want}; then a smoke pod
     * pinned to the node, asking for every GPU, runs {@code nvidia-smi -L} and lists them.
     */
    public static List<Phase> prove(String node, String record, long since, int want) {
        return prove(node, record, since, want, true, false);
    }

    /**
     * The proof; {@code smoke}: the node was drained, so a smoke pod may ask for every GPU (a repair that held no job,
     * the /dev/char links and the restart of pods that lost their GPUs, proves the node by its running GPU pods'
     * own nvidia-smi -L instead: their GPUs are not free for a smoke pod).
     */
    public static List<Phase> prove(String node, String record, long since, int want, boolean smoke, boolean dcgmi) {
        // the host first: a GPU still missing fails the proof at once, without waiting for an allocatable that cannot come
        List<Step> cluster = new ArrayList<>(List.of(new ProveStep(node, record, since, want, true, false)));
        if (smoke) cluster.add(new SmokePodStep(node, want));
        return List.of(new Phase("prove-host", "prove " + node + "'s GPUs", List.of(new ProveStep(node, record, since, want, false, dcgmi)), false),
            new Phase("prove-cluster", "prove " + node + " in the cluster", cluster, false));
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
        private final boolean dcgmi;

        /**
         * @param onMaster the cluster's side (allocatable, on the master), else the host's (GPUs and Xids, on the node)
         * @param dcgmi    the host has DCGM's dcgmi: its quick test is part of the host's proof
         */
        ProveStep(String node, String record, long since, int want, boolean onMaster, boolean dcgmi) {
            this.dcgmi = dcgmi;
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
            if (onMaster) {
                return List.of(Repair.allocatable(node, want).waitingUpTo(COME_BACK),
                    RepairRemedies.LostPodsStep.probe(node).waitingUpTo(COME_BACK));
            }
            List<Probe> probes = new ArrayList<>();
            probes.add(Probe.of("every GPU recorded at bootstrap listed by nvidia-smi (by UUID)", Repair.GPUS,
                r -> GpuHealth.missingFromRecord(record, r.ok() ? recordForm(r.stdout()) : "", r.ok() ? "" : r.stdout())));
            probes.add(Probe.of("no uncorrectable ECC error, pending or failed row remapping", GpuHealthStep.MEMORY, r -> {
                List<String> p = GpuMemory.memoryProblems(r.stdout());
                return p.isEmpty() ? Optional.empty() : Optional.of(String.join("\n", p));
            }));
            probes.add(Probe.of("no hardware Xid since the repair began", xidsSince(since),
                r -> r.ok() ? newXids(r.stdout()) : Optional.of("exit " + r.exit() + ": " + r.tail(2))));
            if (dcgmi) probes.add(dcgm());
            return probes;
        }

        @Override public List<Op> apply(HostContext ctx) { return List.of(); }
    }

    /**
     * NVIDIA DCGM's quick test ({@code dcgmi diag -r 1}) where dcgmi is installed: no failed test; a host without it
     * passes, its line saying the test was skipped.
     */
    static Probe dcgm() {
        return Probe.of("NVIDIA DCGM's quick test passes (dcgmi diag -r 1 -j)", DcgmDiag.COMMAND, r -> DcgmDiag.problem(r.stdout()));
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
        String pod = ShellWords.quote(smokePod(node));
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
                Kube.kubectl("-n default delete pod " + ShellWords.quote(smokePod(node)) + " --ignore-not-found --wait=true >/dev/null") + " && printf '%s' "
                    + ShellWords.quote(smokeManifest(node, gpus)) + " | " + Kube.kubectl("apply -f -")));
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
            return Kube.kubectl("get node " + ShellWords.quote(node) + " -o 'jsonpath={.metadata.annotations." + LAST_REPAIR.replace(".", "\\.") + "}'");
        }

        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.equals("node " + node + " annotated " + LAST_REPAIR + "=" + value, current(node), value));
        }

        @Override public List<Op> apply(HostContext ctx) {
            return List.of(Op.Run.of("annotate node " + node + " " + LAST_REPAIR + " and remove the smoke pod",
                Kube.kubectl("annotate node " + ShellWords.quote(node) + " " + ShellWords.quote(LAST_REPAIR + "=" + value) + " --overwrite") + " && "
                    + Kube.kubectl("-n default delete pod " + ShellWords.quote(smokePod(node)) + " --ignore-not-found --wait=false")));
        }
    }
}
