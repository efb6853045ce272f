package dev.gpuctl.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StepFailure;
import dev.gpuctl.kube.KubeVersion;
import dev.gpuctl.kube.UpgradePolicy;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.step.FailureKind;
import dev.gpuctl.step.Phase;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The upgrade's rounds, judged round by round: which round follows which result. */
class UpgradeWorkflowTest {
    @TempDir Path dir;
    Inventory inv;
    final StringWriter progress = new StringWriter();
    UpgradeWorkflow upgrade;

    @BeforeEach void cluster() throws IOException {
        inv = TestInventory.of(dir, "w1", "w2");
        upgrade = new UpgradeWorkflow(inv, new UpgradePolicy.Options(KubeVersion.parse("1.35.1").orElseThrow(), 1, Duration.ofSeconds(15), false),
            dir.resolve("backup.tar.gz"), new PrintWriter(progress, true));
    }

    static Runner.Result ok() {
        return new Runner.Result(false, List.of(), List.of(), Map.of(), Path.of("logs"));
    }

    static Runner.Result failed(String step, FailureKind kind, String detail) {
        return new Runner.Result(false, List.of(new StepFailure("m", step, "verify after apply", "", -1, detail, "m.log", false, kind)),
            List.of(), Map.of(), Path.of("logs"));
    }

    static List<String> ids(Optional<List<Phase>> round) {
        return round.orElseThrow().stream().map(Phase::id).toList();
    }

    @Test void preflightAndBackupThenTheMasterThenOneRoundPerBatch() {
        assertEquals(List.of("preflight", "backup"), upgrade.first().stream().map(Phase::id).toList());
        assertEquals(List.of("control-plane", "drain", "master-node"), ids(upgrade.next(ok())));
        Optional<List<Phase>> b1 = upgrade.next(ok());
        assertEquals(List.of("drain", "workers", "back"), ids(b1));
        assertTrue(b1.orElseThrow().get(0).title().startsWith("batch 1/2 (w1)"), b1.orElseThrow().get(0).title());
        // the batch's drain says what its wait for GPU jobs means, through every wrapper (skipped at the target)
        assertEquals(List.of(FailureKind.BROKEN, FailureKind.GPU_JOBS_RUNNING, FailureKind.BROKEN),
            b1.orElseThrow().get(0).steps().stream().map(dev.gpuctl.step.Step::failureKind).toList());
        assertTrue(upgrade.next(ok()).orElseThrow().get(0).title().startsWith("batch 2/2 (w2)"));
        assertEquals(Optional.empty(), upgrade.next(ok()), "the last batch ends the session");
    }

    @Test void aBatchLeftBusyByAGpuJobIsUncordonedAndTheNextBatchGoesOn() {
        upgrade.next(ok());
        upgrade.next(ok()); // batch 1 (w1)
        Optional<List<Phase>> after = upgrade.next(failed("gpu-jobs", FailureKind.GPU_JOBS_RUNNING, "w1: still runs default/train-42 on 1 GPU"));
        assertEquals(List.of("uncordon"), ids(after));
        assertTrue(progress.toString().contains("leaving w1 for now: a GPU job still runs there; uncordoning it"), progress::toString);
        assertTrue(upgrade.next(ok()).orElseThrow().get(0).title().startsWith("batch 2/2 (w2)"));
        assertEquals(Optional.empty(), upgrade.next(ok()));
        UpgradeWorkflow.Outcome o = upgrade.outcome(ok(), new dev.gpuctl.step.Facts());
        assertEquals(List.of("w1: still runs default/train-42 on 1 GPU"), o.left());
    }

    @Test void anyOtherFailureEndsTheUpgradeWhateverTheStepIsCalled() {
        upgrade.next(ok());
        upgrade.next(ok());
        assertEquals(Optional.empty(), upgrade.next(failed("gpu-jobs", FailureKind.BROKEN, "kubectl failed (exit 1)")),
            "a failure is told apart by its kind, not by its step's name");
        assertEquals(List.of(), upgrade.outcome(ok(), new dev.gpuctl.step.Facts()).left());
    }

    @Test void aFailedControlPlaneEndsTheUpgradeBeforeAnyBatch() {
        upgrade.next(ok());
        assertEquals(Optional.empty(), upgrade.next(failed("control-plane", FailureKind.BROKEN, "kubeadm upgrade apply failed")));
    }

    /** The hosts a round's phase works on. */
    static List<String> hosts(Inventory inv, Phase phase) {
        return inv.nodes().stream().filter(n -> phase.steps().stream().anyMatch(st -> st.runsOn(new dev.gpuctl.step.HostContext(inv, n))))
            .map(dev.gpuctl.inventory.Node::name).toList();
    }

    @Test void severalMastersApplyOnTheFirstThenUpgradeNodeOnEachOtherOneRoundEachThenTheWorkers() throws IOException {
        Inventory ha = TestInventory.ha(dir, "w1");
        UpgradeWorkflow up = new UpgradeWorkflow(ha, new UpgradePolicy.Options(KubeVersion.parse("1.35").orElseThrow(), 1,
            Duration.ofSeconds(15), false), dir.resolve("b.tar.gz"), new PrintWriter(progress, true));
        List<Phase> prepare = up.first();
        assertEquals(List.of("m1"), hosts(ha, prepare.get(1)), "the backup on the first master only");
        List<Phase> first = up.next(ok()).orElseThrow();
        assertEquals(List.of("api-servers-ready", "control-plane", "drain", "master-node"), first.stream().map(Phase::id).toList());
        assertTrue(first.get(0).readOnly());
        assertEquals(List.of("m1"), hosts(ha, first.get(0)), "m1 asks the others' API servers before it goes down");
        assertEquals(List.of("m1"), hosts(ha, first.get(1)), "kubeadm upgrade apply on the first master only");
        assertTrue(first.get(1).steps().stream().anyMatch(st -> st.title().contains("kubeadm upgrade apply")));
        for (String m : List.of("m2", "m3")) {
            List<Phase> round = up.next(ok()).orElseThrow();
            assertEquals(List.of("api-servers-ready", "control-plane-node", "drain", "master-node"), round.stream().map(Phase::id).toList(), m);
            assertEquals(List.of(m), hosts(ha, round.get(0)), m);
            assertTrue(round.get(0).steps().get(0).title().contains("ready") && !round.get(0).steps().get(0).title().contains(m), m);
            assertEquals(List.of(m), hosts(ha, round.get(1)), "kubeadm and kubeadm upgrade node on " + m + " alone");
            assertTrue(round.get(1).steps().stream().anyMatch(st -> st.title().startsWith("kubeadm upgrade node")), m);
            assertEquals(List.of("m1"), hosts(ha, round.get(2)), "the drain runs from the first master");
            assertTrue(round.get(2).title().equals("drain " + m), round.get(2).title());
        }
        assertTrue(up.next(ok()).orElseThrow().get(0).title().startsWith("batch 1/1 (w1)"));
        assertEquals(Optional.empty(), up.next(ok()));
        assertEquals(List.of("m1", "m2", "m3"), up.outcome(ok(), new dev.gpuctl.step.Facts()).mastersDone());
    }

    @Test void aMasterRoundRefusedEndsTheUpgradeAndNamesTheMastersDone() throws IOException {
        Inventory ha = TestInventory.ha(dir, "w1");
        UpgradeWorkflow up = new UpgradeWorkflow(ha, new UpgradePolicy.Options(KubeVersion.parse("1.35").orElseThrow(), 1,
            Duration.ofSeconds(15), false), dir.resolve("b.tar.gz"), new PrintWriter(progress, true));
        up.next(ok());
        up.next(ok()); // m1 done, m2's round handed out
        assertEquals(Optional.empty(), up.next(failed("api-servers-ready", FailureKind.BROKEN, "m3's API server is not ready")));
        assertEquals(List.of("m1"), up.outcome(ok(), new dev.gpuctl.step.Facts()).mastersDone());
    }
}
