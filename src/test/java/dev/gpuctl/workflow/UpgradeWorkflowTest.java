package dev.gpuctl.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StepFailure;
import dev.gpuctl.hostconf.KubeVersion;
import dev.gpuctl.hostconf.UpgradePolicy;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.steps.FailureKind;
import dev.gpuctl.steps.Phase;
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
            b1.orElseThrow().get(0).steps().stream().map(dev.gpuctl.steps.Step::failureKind).toList());
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
        UpgradeWorkflow.Outcome o = upgrade.outcome(ok(), new dev.gpuctl.steps.Facts());
        assertEquals(List.of("w1: still runs default/train-42 on 1 GPU"), o.left());
    }

    @Test void anyOtherFailureEndsTheUpgradeWhateverTheStepIsCalled() {
        upgrade.next(ok());
        upgrade.next(ok());
        assertEquals(Optional.empty(), upgrade.next(failed("gpu-jobs", FailureKind.BROKEN, "kubectl failed (exit 1)")),
            "a failure is told apart by its kind, not by its step's name");
        assertEquals(List.of(), upgrade.outcome(ok(), new dev.gpuctl.steps.Facts()).left());
    }

    @Test void aFailedControlPlaneEndsTheUpgradeBeforeAnyBatch() {
        upgrade.next(ok());
        assertEquals(Optional.empty(), upgrade.next(failed("control-plane", FailureKind.BROKEN, "kubeadm upgrade apply failed")));
    }
}
