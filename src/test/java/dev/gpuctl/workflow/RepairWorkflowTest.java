package dev.gpuctl.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.engine.Repairs;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StepFailure;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Phase;
import dev.gpuctl.steps.Repair;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** repair's rounds over scripted results: diagnosis, then each node's remedies, proof and record, in one session. */
class RepairWorkflowTest {
    @TempDir Path dir;
    final List<String> said = new ArrayList<>();
    final Facts learned = new Facts();

    Inventory inventory() {
        String y = "cluster: { name: t, kubernetesVersion: \"1.35\" }\nssh:\n  user: root\n  identityFile: " + dir.resolve("key")
            + "\n  knownHosts: " + dir.resolve("known_hosts") + "\nnodes:\n"
            + "  - { name: m, address: 10.0.0.1, role: master }\n  - { name: w1, address: 10.0.0.2, role: worker, gpu: true }\n";
        return InventoryLoader.parse("inventory.yaml", y, dir, Map.of());
    }

    RepairWorkflow workflow(boolean dryRun) {
        RepairWorkflow w = new RepairWorkflow(inventory(), List.of("w1"), true, dryRun, Duration.ofMinutes(1), false, new RepairWorkflow.Listener() {
            @Override public void diagnosed(Repairs.Diagnoses d) { said.add("diagnosed " + d.nodes().keySet()); }
            @Override public void healthy(String node) { said.add("healthy " + node); }
            @Override public void repaired(Repairs.Outcome o) { said.add("repaired " + o.node() + (o.proved() ? " proved" : " not proved")); }
        });
        w.learning(learned);
        return w;
    }

    Runner.Result ok() { return new Runner.Result(false, List.of(), List.of(), Map.of(), dir); }

    Runner.Result failed(String step, boolean unreachable) {
        return new Runner.Result(false, List.of(new StepFailure("w1", step, "verify after apply", "", -1, "still wrong", "w1.log", unreachable)),
            List.of(), Map.of(), dir);
    }

    /** The diagnosis' answers: the master's view of the cluster (empty: no node knows w1); --reboot asked for. */
    void diagnosed() { learned.keep(Repair.clusterKey(), new ExecResult(0, "", "")); }

    static List<String> ids(Optional<List<Phase>> round) { return round.orElseThrow().stream().map(Phase::id).toList(); }

    @Test void aHostTheDiagnosisCouldNotReachEndsTheSessionBeforeAnyChange() {
        RepairWorkflow w = workflow(false);
        assertEquals(List.of("diagnose"), w.first().stream().map(Phase::id).toList());
        assertTrue(w.first().get(0).readOnly(), "the diagnosis changes nothing, so it takes no lock");
        Runner.Result refused = new Runner.Result(true, List.of(new StepFailure("w1", "diagnose", "cannot reach the host", "", -1,
            "w1: connection refused", "w1.log", true)), List.of("w1: cannot reach"), Map.of(), dir);
        RepairWorkflow.Report r = w.outcome(refused, learned);
        assertEquals(RepairWorkflow.Stage.DIAGNOSE, r.stage());
        assertEquals(Map.of("w1", "w1: connection refused"), r.diagnoses().orElseThrow().unreachable());
        assertEquals(List.of("w1"), List.copyOf(r.diagnoses().orElseThrow().notConnected()));
        assertEquals(List.of(), said);
    }

    @Test void aMasterWhoseKubectlFailsIsNamedAndNothingIsPlanned() {
        RepairWorkflow w = workflow(false);
        learned.keep(Repair.clusterKey(), new ExecResult(1, "", "connection refused"));
        assertTrue(w.next(ok()).isEmpty());
        RepairWorkflow.Report r = w.outcome(ok(), learned);
        assertEquals(RepairWorkflow.Stage.DIAGNOSE, r.stage());
        assertTrue(r.diagnoses().orElseThrow().unreachable().get("m").startsWith("kubectl on the master failed: exit 1"), r.toString());
        assertEquals(List.of(), said);
    }

    @Test void aDryRunEndsAfterTheDiagnosisWithThePlansSaid() {
        RepairWorkflow w = workflow(true);
        diagnosed();
        assertTrue(w.next(ok()).isEmpty());
        assertEquals(RepairWorkflow.Stage.DONE, w.outcome(ok(), learned).stage());
        assertEquals(List.of("diagnosed [w1]"), said);
    }

    @Test void theRemediesThenTheProofThenTheRecordAreRoundsOfOneSession() {
        RepairWorkflow w = workflow(false);
        diagnosed();
        List<String> remedies = ids(w.next(ok()));
        assertEquals("drain", remedies.get(0), "the jobs are held safe first: " + remedies);
        assertTrue(remedies.contains("reboot") && remedies.contains("node-back"), "--reboot: " + remedies);
        assertEquals(List.of("prove-host", "prove-cluster"), ids(w.next(ok())));
        assertEquals("record", ids(w.next(failed("prove", false))).get(0));
        RepairWorkflow.Report mid = w.outcome(ok(), learned);
        assertEquals(RepairWorkflow.Stage.RECORD, mid.stage());
        assertFalse(mid.outcome().orElseThrow().proved());
        assertEquals(1, mid.outcome().orElseThrow().stillWrong().size());
        assertTrue(mid.outcome().orElseThrow().stillWrong().get(0).contains("still wrong"), mid.toString());
        assertTrue(w.next(ok()).isEmpty(), "w1 was the only node");
        RepairWorkflow.Report end = w.outcome(ok(), learned);
        assertEquals(RepairWorkflow.Stage.DONE, end.stage());
        assertEquals(List.of("diagnosed [w1]", "repaired w1 not proved"), said);
        assertEquals(1, end.outcomes().size());
    }

    @Test void aDrainThatCouldNotHoldTheJobsEndsTheSessionThereWithNothingRecorded() {
        RepairWorkflow w = workflow(false);
        diagnosed();
        w.next(ok());
        assertTrue(w.next(failed("gpu-jobs", false)).isEmpty());
        RepairWorkflow.Report r = w.outcome(failed("gpu-jobs", false), learned);
        assertEquals(RepairWorkflow.Stage.REMEDY, r.stage());
        assertEquals("w1", r.node().orElseThrow().facts().node());
        assertTrue(r.outcome().isEmpty() && r.outcomes().isEmpty());
        assertEquals(List.of("diagnosed [w1]"), said);
    }

    @Test void aRemedyThatFailedIsRecordedNotProvedWithoutAProof() {
        RepairWorkflow w = workflow(false);
        diagnosed();
        w.next(ok());
        assertEquals("record", ids(w.next(failed("reboot", false))).get(0), "no proof after a remedy that failed");
        RepairWorkflow.Report r = w.outcome(ok(), learned);
        assertEquals(RepairWorkflow.Stage.RECORD, r.stage());
        assertFalse(r.outcome().orElseThrow().proved());
        assertTrue(w.next(failed("record", false)).isEmpty(), "a record that failed ends the session");
        assertEquals(List.of("diagnosed [w1]"), said, "its audit is the command's to write");
    }
}
