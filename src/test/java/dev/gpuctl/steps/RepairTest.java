package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Step;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RepairTest {
    static final String U0 = "GPU-0a1b2c3d-0000-1111-2222-333344445555";

    @Test void theSmokePodMustSucceedListingEveryGpu() {
        assertEquals(Optional.empty(), RepairProof.smokeProblem("Succeeded\nGPU 0: NVIDIA H200 (UUID: " + U0 + ")\n", "w1", 1));
        assertEquals(Optional.of("smoke pod's nvidia-smi -L listed 0 GPU(s), 1 asked for"), RepairProof.smokeProblem("Succeeded\n", "w1", 1));
        assertTrue(RepairProof.smokeProblem("Failed\nFailed to initialize NVML: Unknown Error\n", "w1", 1).orElseThrow()
            .equals("smoke pod default/gpuctl-smoke-w1 is Failed: Failed to initialize NVML: Unknown Error"));
        assertTrue(RepairProof.smokeProblem("Pending\n", "w1", 1).orElseThrow().contains("is Pending"));
    }

    @Test void theNodeIsBackOnANewBootAndReady() {
        assertEquals(Optional.empty(), RebootRemedy.NodeBackStep.problem("b2 True", "w1", "b1"));
        assertTrue(RebootRemedy.NodeBackStep.problem("b1 True", "w1", "b1").orElseThrow().contains("has not come back"));
        assertTrue(RebootRemedy.NodeBackStep.problem("b2 Unknown", "w1", "b1").orElseThrow().contains("is not Ready (Unknown)"));
    }

    @Test void onlyANewHardwareXidFailsTheProof() {
        assertEquals(Optional.empty(), RepairProof.newXids("Dec 04 10:00:01 w1 kernel: NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=p, Graphics SM Warp Exception\n"));
        assertEquals(Optional.of("1 hardware Xid(s) since the repair began: Xid 79 (GPU has fallen off the bus) on 0000:3b:00"),
            RepairProof.newXids("Dec 04 10:00:01 w1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=p, GPU has fallen off the bus.\n"));
    }

    @Test void nvidiaSmiCsvBecomesTheRecordsForm() {
        assertEquals("0:" + U0, RepairProof.recordForm("0, " + U0 + ", 00000000:3B:00.0\n"));
        assertEquals("", RepairProof.recordForm("No devices were found\n"));
    }

    @Test void theSmokePodIsPinnedAndAsksForEveryGpu() {
        String m = RepairProof.smokeManifest("w1", 2);
        assertTrue(m.contains("\"nodeName\":\"w1\"") && m.contains("\"nvidia.com/gpu\":2") && m.contains("[\"nvidia-smi\",\"-L\"]"), m);
    }

    @Test void theRecordIsOneShellWord() {
        String cmd = ((Op.Run) new RepairProof.RecordStep("w1", "2026-12-04T22:55:42Z;proved;remedies=reboot").apply(null).get(0)).command();
        assertTrue(cmd.contains(" annotate node w1 'gpuctl.dev/last-repair=2026-12-04T22:55:42Z;proved;remedies=reboot' --overwrite"), cmd);
    }

    @Test void onlyAProvedRepairMarksTheXidsBeforeItAnswered() {
        var proved = RepairProof.record("w1", "t;proved;remedies=reboot", true, 1796424957L);
        assertEquals(List.of("record", "xids-answered"), proved.get(0).steps().stream().map(Step::id).toList());
        assertEquals("uncordon", proved.get(1).id());
        String cmd = ((Op.Run) proved.get(0).steps().get(1).apply(null).get(0)).command();
        assertTrue(cmd.contains("printf '%s\\n' 1796424957 > " + GpuHealthStep.ANSWERED + ".tmp"), cmd);
        var failed = RepairProof.record("w1", "t;not-proved;remedies=reboot", false, 1796424957L);
        assertEquals(1, failed.size(), "no uncordon");
        assertEquals(List.of("record"), failed.get(0).steps().stream().map(Step::id).toList());
        // verify's Xid check and the next diagnosis read the kernel log from that time on
        assertTrue(GpuHealthStep.XID.contains("--since \"@$(grep -xE '[0-9]{1,12}' " + GpuHealthStep.ANSWERED + " 2>/dev/null || echo 0)\""));
    }

    /** A stand-in nvidia-smi: no compute process listed; -r refused as the driver refuses it {@code refusals} times, then done. */
    static Path fakeSmi(Path dir, int refusals) throws Exception {
        Path smi = dir.resolve("nvidia-smi");
        Files.writeString(smi, "#!/bin/sh\ncase \"$*\" in *query-compute-apps*) exit 0;; esac\n"
            + "n=$(cat " + dir + "/calls 2>/dev/null || echo 0); n=$((n+1)); echo $n > " + dir + "/calls\n"
            + "if [ $n -le " + refusals + " ]; then echo 'GPU 00000000:3B:00.0 is currently in use by another process.'; exit 255; fi\n"
            + "echo 'GPU 00000000:3B:00.0 was successfully reset.'; echo 'All done.'\n");
        Files.setPosixFilePermissions(smi, PosixFilePermissions.fromString("rwx------"));
        return smi;
    }

    static int sh(Path dir, String command, StringBuilder out) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("/bin/sh", "-c", command).redirectErrorStream(true);
        pb.environment().put("PATH", dir + ":/usr/bin:/bin");
        Process p = pb.start();
        out.append(new String(p.getInputStream().readAllBytes()));
        return p.waitFor();
    }

    @Test void aResetWaitsForTheLastProcessToLetGoThenResets(@TempDir Path dir) throws Exception {
        fakeSmi(dir, 2);
        StringBuilder out = new StringBuilder();
        assertEquals(0, sh(dir, RepairRemedies.resetCommand(0, 5, 0), out), out::toString);
        assertTrue(out.toString().contains("was successfully reset."), out::toString);
        assertEquals("3", Files.readString(dir.resolve("calls")).strip());
    }

    @Test void aGpuStillHeldIsNotResetAndTheHolderIsNamed(@TempDir Path dir) throws Exception {
        fakeSmi(dir, 99);
        StringBuilder out = new StringBuilder();
        assertEquals(1, sh(dir, RepairRemedies.resetCommand(0, 3, 0), out), out::toString);
        assertTrue(out.toString().contains("GPU 0 is still held (the driver: GPU 00000000:3B:00.0 is currently in use by another process.): not reset"),
            out::toString);
        assertEquals("3", Files.readString(dir.resolve("calls")).strip());
    }

    @Test void theAnnotationValueIsCheckedBeforeItReachesAShell() {
        assertThrows(IllegalArgumentException.class, () -> new RepairProof.RecordStep("w1", "x'; rm -rf /"));
    }

    @Test void theLastRepairOfEachNodeIsReadFromTheRunsClusterRead() {
        Facts facts = new Facts();
        assertEquals(Optional.empty(), Repair.lastRepair(facts, "w1"), "the cluster not read");
        String answer = "N\tw1\t\t\t\t\t\t\t2026-12-04T10:00:00Z;proved;remedies=reset_gpu,restart_plugin\n"
            + "N\tw2\t\t\t\t\t\t\t\n" + "N\tw3\t\t\t\t\t\t\tnot repair's form\n";
        facts.answer(ClusterProbes.CLUSTER, answer);
        assertEquals(Optional.of(new dev.gpuctl.gpu.RepairPlan.LastRepair("2026-12-04T10:00:00Z", true, List.of("reset_gpu", "restart_plugin"))),
            Repair.lastRepair(facts, "w1"));
        assertEquals(Optional.empty(), Repair.lastRepair(facts, "w2"), "never repaired");
        assertEquals(Optional.empty(), Repair.lastRepair(facts, "w3"), "an annotation repair did not write");
        assertEquals(Optional.empty(), Repair.lastRepair(facts, "w9"));
    }
}
