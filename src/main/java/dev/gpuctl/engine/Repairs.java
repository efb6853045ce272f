package dev.gpuctl.engine;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.gpuctl.kube.ClusterView;
import dev.gpuctl.gpu.DevChar;
import dev.gpuctl.gpu.GpuHealth;
import dev.gpuctl.gpu.GpuMemory;
import dev.gpuctl.gpu.RepairPlan;
import dev.gpuctl.gpu.Xids;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.steps.NodePhases;
import dev.gpuctl.step.Phase;
import dev.gpuctl.steps.RebootRemedy;
import dev.gpuctl.steps.Repair;
import dev.gpuctl.steps.RepairProof;
import dev.gpuctl.steps.RepairRemedies;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * {@code gpuctl repair}'s parts on the engine: a read-only diagnosis round (no lock: nothing changed) whose answers
 * become {@link RepairPlan.Facts}; then, node by node, rounds of {@link Repair}'s phases given by the plan: the jobs
 * held safe and the remedies, the proof, the record (and the uncordon only when proved). The workflow
 * (workflow/RepairWorkflow) runs them as rounds of one session: one lock, one log directory, one connection per host
 * (made again after a reboot).
 */
public final class Repairs {
    private Repairs() {}

    /** A node's diagnosis: its facts, its plan, and what the later phases need (boot id, clock, record). */
    /** @param dcgmi the host has DCGM's dcgmi: the proof runs {@code dcgmi diag -r 1}, else says it was skipped */
    public record Diagnosis(RepairPlan.Facts facts, RepairPlan.Plan plan, String bootId, long clock, String record, boolean dcgmi) {
        public Diagnosis(RepairPlan.Facts facts, RepairPlan.Plan plan, String bootId, long clock, String record) {
            this(facts, plan, bootId, clock, record, false);
        }

        /** The proof's line about DCGM's quick test. */
        public String dcgmLine() {
            return facts.node() + ": dcgmi diag -r 1 " + (dcgmi ? "runs as part of the proof" : "skipped: DCGM (dcgmi) is not installed on the host");
        }
    }

    /**
     * The diagnosis of every node: the answers, or the hosts that could not be asked.
     *
     * @param unreachable host → why; {@code notConnected}: those to which no connection was made at all
     */
    public record Diagnoses(Map<String, Diagnosis> nodes, Map<String, String> unreachable, Set<String> notConnected, Path logDir) {}

    /** The diagnosis, read-only, on the master and the nodes: the first round of a repair's session. */
    public static List<Phase> diagnosePhases(List<String> nodes) {
        return List.of(Repair.diagnose(nodes));
    }

    /**
     * Each node's plan ({@code reboot}: a reboot asked for) from the diagnosis round {@code done} and what its probes kept
     * ({@code learned}); the hosts it could not ask, when there are any.
     */
    public static Diagnoses diagnoses(Inventory inv, List<String> nodes, boolean reboot, Runner.Result done, Facts learned) {
        Map<String, String> unreachable = new LinkedHashMap<>();
        Set<String> notConnected = new LinkedHashSet<>();
        done.failures().forEach(f -> {
            unreachable.put(f.host(), f.detail());
            if (f.unreachable()) notConnected.add(f.host());
        });
        if (done.failures().isEmpty()) done.preflightProblems().forEach(p -> unreachable.put(inv.master().name(), p));
        Map<String, Diagnosis> out = new LinkedHashMap<>();
        if (!unreachable.isEmpty()) return new Diagnoses(out, unreachable, notConnected, done.logDir());
        Optional<ExecResult> cluster = learned.kept(Repair.clusterKey());
        if (cluster.isEmpty() || !cluster.get().ok()) {
            unreachable.put(inv.master().name(), "kubectl on the master failed: " + cluster.map(r -> "exit " + r.exit() + ": " + r.tail(2)).orElse("no answer"));
            return new Diagnoses(out, unreachable, notConnected, done.logDir());
        }
        ClusterView view = ClusterView.parse(cluster.get().stdout());
        for (String n : nodes) {
            Node node = inv.node(n).orElseThrow();
            out.put(n, diagnosis(n, view, learned::kept, inv.sharing(node).replicas(), reboot));
        }
        return new Diagnoses(out, unreachable, notConnected, done.logDir());
    }

    /** One node's diagnosis from the cluster's view and the node's answers (by {@link Repair}'s keys). */
    static Diagnosis diagnosis(String n, ClusterView view, Function<String, Optional<ExecResult>> answers, int replicas, boolean reboot) {
        String text = "";
        Optional<ClusterView.NodeState> state = view.node(n);
        String record = state.flatMap(ClusterView.NodeState::gpuRecord).orElse(text);
        ExecResult gpus = answers.apply(Repair.gpusKey(n)).orElse(new ExecResult(1, "", "not asked"));
        List<Xids.Gpu> present = gpus.ok() ? RepairPlan.parseGpus(gpus.stdout()) : List.of();
        String smiProblem = gpus.ok() ? "" : gpus.stdout() + gpus.stderr();
        ExecResult holders = answers.apply(Repair.holdersKey(n)).orElse(new ExecResult(0, "", ""));
        ExecResult xids = answers.apply(Repair.xidsKey(n)).orElse(new ExecResult(0, "", ""));
        String module = answers.apply(Repair.moduleKey(n)).map(ExecResult::stdout).orElse("");
        ExecResult driver = answers.apply(Repair.driverKey(n)).orElse(new ExecResult(0, "", ""));
        RepairPlan.Persistenced persistenced = answers.apply(Repair.persistencedKey(n)).map(r -> RepairPlan.Persistenced.parse(r.stdout()))
            .orElse(RepairPlan.Persistenced.ABSENT);
        Optional<String> driverProblem = GpuHealth.driverMismatch(driver.stdout(), driver.exit(), GpuHealth.KernelModule.parse(module))
            .filter(p -> p.contains("mismatch"));
        Optional<String> pluginPod = view.pods().stream().filter(p -> n.equals(p.node()) && p.name().contains("nvidia-device-plugin"))
            .map(p -> p.namespace() + "/" + p.name()).findFirst();
        int allocatable = state.map(s -> s.allocatable("nvidia.com/gpu")).filter(s -> s.matches("\\d{1,6}")).map(Integer::parseInt).orElse(0);
        List<DevChar.PodNvml> lostPods = answers.apply(Repair.podsNvmlKey()).filter(ExecResult::ok)
            .map(r -> DevChar.lostOn(DevChar.parsePods(r.stdout()), n)).orElse(List.of());
        RepairPlan.Facts facts = new RepairPlan.Facts(n, GpuHealth.parseRecord(record), present, smiProblem, driverProblem,
            holders.ok() ? RepairPlan.parseHolders(holders.stdout()) : Map.of(), xids.ok() ? Xids.parse(xids.stdout()) : List.of(),
            answers.apply(Repair.memoryKey(n)).map(r -> GpuMemory.memoryProblems(r.stdout())).orElse(List.of()),
            new RepairPlan.PluginView(allocatable, pluginPod, state.map(ClusterView.NodeState::unschedulable).orElse(false)), replicas, persistenced,
            lostPods, devCharProblem(answers.apply(Repair.devCharKey(n)), answers.apply(Repair.devCharRuleKey(n))));
        String bootId = answers.apply(Repair.bootIdKey(n)).map(r -> r.stdout().strip()).orElse("");
        long clock = answers.apply(Repair.clockKey(n)).map(r -> r.stdout().strip()).filter(s -> s.matches("\\d{1,12}")).map(Long::parseLong)
            .orElse(Instant.now().getEpochSecond());
        boolean dcgmi = answers.apply(Repair.dcgmiKey(n)).map(r -> r.ok() && !r.stdout().isBlank()).orElse(false);
        return new Diagnosis(facts, RepairPlan.plan(facts, reboot), bootId, clock, record, dcgmi);
    }

    /**
     * What is wrong with NVIDIA's prevention on the host: the rule file not NVIDIA's, device nodes without their link;
     * empty when both are right, or when the host was not asked (no answer).
     */
    static Optional<String> devCharProblem(Optional<ExecResult> listing, Optional<ExecResult> rule) {
        List<String> p = new ArrayList<>();
        rule.filter(r -> !r.stdout().equals(DevChar.RULE))
            .ifPresent(r -> p.add(DevChar.RULE_FILE + (r.stdout().isEmpty() ? " is missing" : " differs from NVIDIA's rule")));
        listing.flatMap(r -> DevChar.linksProblem(r.stdout())).ifPresent(p::add);
        return p.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", p));
    }

    /** The GPUs the proof wants: those recorded at bootstrap (else those present now). */
    static int gpusWanted(Diagnosis d) {
        return d.facts().recorded().isEmpty() ? d.facts().present().size() : d.facts().recorded().size();
    }

    /** The phases that hold the jobs safe and apply the plan's remedies, in order. */
    public static List<Phase> remedyPhases(Diagnosis d, Duration drainTimeout, boolean force) {
        String n = d.facts().node();
        List<Phase> phases = new ArrayList<>();
        if (d.plan().holdsJobs()) phases.add(NodePhases.drain(List.of(n), drainTimeout, force));
        for (RepairPlan.Remedy r : d.plan().remedies()) {
            switch (r) {
                case DEV_CHAR_LINKS -> phases.add(RepairRemedies.devCharLinks(n));
                case RESTART_LOST_PODS -> phases.add(RepairRemedies.restartLostPods(n, d.facts().lostPods(), force));
                case RESTART_PLUGIN -> phases.add(RepairRemedies.restartPlugin(n, d.facts().plugin().pod(), gpusWanted(d) * d.facts().replicas()));
                case RESTART_PERSISTENCED -> phases.add(RepairRemedies.restartPersistenced(n));
                case RESET_GPU -> phases.add(RepairRemedies.resetGpus(n, d.plan().resetGpus()));
                case RELOAD_MODULES -> phases.add(RepairRemedies.reloadModules(n));
                case REBOOT -> phases.addAll(RebootRemedy.reboot(n, d.bootId()));
            }
        }
        return phases;
    }

    /** The proof's phase. */
    public static List<Phase> proofPhases(Diagnosis d) {
        int want = gpusWanted(d);
        return RepairProof.prove(d.facts().node(), d.record(), d.clock(), want * d.facts().replicas(), d.plan().holdsJobs(), d.dcgmi());
    }

    /** The record of the repair on the node; the uncordon when it was proved. */
    public static List<Phase> recordPhases(Outcome o) {
        return RepairProof.record(o.node(), o.annotation(), o.proved(), o.answeredSince());
    }

    /** The node annotation a repair leaves: {@link Repair#LAST_REPAIR}. */
    public static final String LAST_REPAIR = Repair.LAST_REPAIR;

    /** How a repair of one node ended. */
    /** @param answeredSince the host's clock when the repair began (the Xids before it are answered once proved) */
    public record Outcome(String node, RepairPlan.Plan plan, boolean proved, List<String> stillWrong, Instant began, Duration took,
                          long answeredSince, String dcgm) {
        public Outcome {
            stillWrong = List.copyOf(stillWrong);
        }

        public Outcome(String node, RepairPlan.Plan plan, boolean proved, List<String> stillWrong, Instant began, Duration took, long answeredSince) {
            this(node, plan, proved, stillWrong, began, took, answeredSince, "not run");
        }

        /** The node annotation's value: when, proved or not, the remedies (letters, digits, ":,;=.-" only). */
        public String annotation() {
            return DateTimeFormatter.ISO_INSTANT.format(began.atOffset(ZoneOffset.UTC).toInstant().truncatedTo(java.time.temporal.ChronoUnit.SECONDS))
                + ";" + (proved ? "proved" : "not-proved") + ";remedies=" + String.join(",", plan.remedies().stream().map(r -> r.name().toLowerCase()).toList());
        }
    }

    /** The proof's failures, for people: what is still wrong. */
    public static List<String> stillWrong(Runner.Result r) {
        List<String> out = new ArrayList<>();
        r.failures().forEach(f -> out.add(f.describe().strip()));
        r.interrupted().forEach(w -> out.add("interrupted: " + w));
        return out;
    }

    /** The audit entry of one repair, as JSON. */
    public static String auditJson(Outcome o, String clusterName) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("cluster", clusterName);
        doc.put("node", o.node());
        doc.put("began", o.began().toString());
        doc.put("durationSeconds", o.took().toSeconds());
        doc.put("diagnosis", o.plan().findings());
        doc.put("remedies", o.plan().remedies().stream().map(r -> Map.of("remedy", r.name().toLowerCase(), "what", r.what())).toList());
        if (!o.plan().resetGpus().isEmpty()) doc.put("resetGpus", o.plan().resetGpus());
        Map<String, Object> proof = new LinkedHashMap<>();
        proof.put("proved", o.proved());
        proof.put("stillWrong", o.stillWrong());
        if (!o.proved()) proof.put("humanStep", o.plan().humanStep());
        proof.put("dcgmDiag", o.dcgm());
        doc.put("proof", proof);
        try {
            return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(doc) + "\n";
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes the audit entry in {@code .gpuctl/CLUSTER/repairs/} (directory 0700, file 0600); returns its path. */
    public static Path writeAudit(Inventory inv, Outcome o) throws IOException {
        Path dir = inv.stateDir().resolve(inv.cluster().name()).resolve("repairs");
        String stamp = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").format(o.began().atOffset(ZoneOffset.UTC));
        Path file = dir.resolve(stamp + "-" + o.node() + ".json");
        StateDir.writePrivate(file, auditJson(o, inv.cluster().name()).getBytes(StandardCharsets.UTF_8));
        return file;
    }
}
