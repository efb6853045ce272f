package dev.gpuctl.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.gpu.RepairPlan.Remedy;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RepairPlanTest {
    static final String U0 = "GPU-0a1b2c3d-0000-1111-2222-333344445555";
    static final String U1 = "GPU-9f8e7d6c-0000-1111-2222-333344445555";
    static final List<GpuHealth.Recorded> RECORD = List.of(new GpuHealth.Recorded(0, U0), new GpuHealth.Recorded(1, U1));
    static final Xids.Gpu G0 = new Xids.Gpu(0, U0, "00000000:3B:00.0");
    static final Xids.Gpu G1 = new Xids.Gpu(1, U1, "00000000:91:00.0");

    static RepairPlan.Facts facts(List<Xids.Gpu> present, String kernelLog, int allocatable, Optional<String> driver, Map<String, List<String>> holders) {
        return new RepairPlan.Facts("w1", RECORD, present, present.isEmpty() ? "No devices were found" : "", driver, holders,
            Xids.parse(kernelLog), List.of(), new RepairPlan.PluginView(allocatable, Optional.of("kube-system/nvidia-device-plugin-daemonset-abcde"), false), 1);
    }

    static final String XID79 = "Dec 04 10:00:01 w1 kernel: NVRM: Xid (PCI:0000:91:00): 79, pid=1234, name=python3, GPU has fallen off the bus.\n";
    static final String XID48 = "Dec 04 10:00:01 w1 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.\n";
    static final String XID13 = "Dec 04 10:00:01 w1 kernel: NVRM: Xid (PCI:0000:3b:00): 13, pid=1234, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address\n";

    @Test void aHealthyNodeNeedsNothing() {
        var p = RepairPlan.plan(facts(List.of(G0, G1), "", 2, Optional.empty(), Map.of()), false);
        assertTrue(p.healthy(), p.toString());
        assertTrue(RepairPlan.text(p).contains("nothing to repair"), RepairPlan.text(p));
    }

    @Test void anApplicationXidAloneIsTheJobsFaultAndNeedsNothing() {
        var p = RepairPlan.plan(facts(List.of(G0, G1), XID13, 2, Optional.empty(), Map.of(U0, List.of("1234 python3"))), false);
        assertTrue(p.healthy(), p.toString());
    }

    @Test void aGpuOffTheBusNeedsAReboot_andOnlyThat() {
        var p = RepairPlan.plan(facts(List.of(G0), XID79, 1, Optional.empty(), Map.of()), false);
        assertEquals(List.of(Remedy.REBOOT), p.remedies());
        String text = RepairPlan.text(p);
        assertTrue(text.contains("1 GPU(s) recorded at bootstrap missing from nvidia-smi: GPU 1 (" + U1 + ")"), text);
        assertTrue(text.contains("hardware Xid 79 (GPU has fallen off the bus) x1"), text);
        assertTrue(text.indexOf("hold the jobs safe") < text.indexOf("reboot the host"), text);
    }

    @Test void aStickyUnhealthyMarkRestartsThePluginOnly() {
        // every GPU present, no hardware Xid left to answer, but the plugin still advertises fewer
        var p = RepairPlan.plan(facts(List.of(G0, G1), "", 1, Optional.empty(), Map.of()), false);
        assertEquals(List.of(Remedy.RESTART_PLUGIN), p.remedies());
        assertTrue(p.findings().get(0).contains("advertises 1 nvidia.com/gpu, 2 expected"), p.toString());
    }

    @Test void aHardwareXidOnAPresentGpuResetsThatGpuThenRestartsThePlugin() {
        var p = RepairPlan.plan(facts(List.of(G0, G1), XID48, 1, Optional.empty(), Map.of()), false);
        assertEquals(List.of(Remedy.RESET_GPU, Remedy.RESTART_PLUGIN), p.remedies());
        assertEquals(List.of(0), p.resetGpus());
    }

    static final String MISMATCH = "Driver/library version mismatch: the kernel module version is unknown, the NVML library is 580.173";

    @Test void aDriverMismatchReloadsTheModulesThenRestartsThePluginWithoutAReboot() {
        // under the mismatch nvidia-smi lists nothing and reads no memory: unknown, not missing
        var f = facts(List.of(), "", 0, Optional.of(MISMATCH), Map.of());
        var mismatch = RepairPlan.plan(new RepairPlan.Facts(f.node(), f.recorded(), f.present(), "Failed to initialize NVML: Driver/library version mismatch",
            f.driverProblem(), f.holders(), f.xids(), List.of("nvidia-smi -q gave no GPU: Failed to initialize NVML"), f.plugin(), 1), false);
        assertEquals(List.of(Remedy.RELOAD_MODULES, Remedy.RESTART_PLUGIN), mismatch.remedies());
        assertTrue(mismatch.findings().stream().noneMatch(s -> s.contains("missing") || s.startsWith("memory")), mismatch.toString());
        assertTrue(mismatch.findings().contains("the device plugin advertises 0 nvidia.com/gpu, 2 expected for the 2 GPU(s) recorded"
            + " (pod kube-system/nvidia-device-plugin-daemonset-abcde)"), mismatch.toString());
        String text = RepairPlan.text(mismatch);
        assertTrue(text.indexOf("reload the NVIDIA kernel modules") < text.indexOf("restart the device plugin pod"), text);
    }

    @Test void theRebootFlagOrAGpuOffTheBusBeatsTheReload() {
        var asked = RepairPlan.plan(facts(List.of(G0, G1), "", 2, Optional.empty(), Map.of()), true);
        assertEquals(List.of(Remedy.REBOOT), asked.remedies());
        var both = RepairPlan.plan(facts(List.of(), XID79, 0, Optional.of(MISMATCH), Map.of()), false);
        assertEquals(List.of(Remedy.REBOOT), both.remedies());
    }

    @Test void persistencedEnabledButNotRunningIsRestartedAndNothingElse() {
        var f = facts(List.of(G0, G1), "", 2, Optional.empty(), Map.of());
        var down = new RepairPlan.Facts(f.node(), f.recorded(), f.present(), f.smiProblem(), f.driverProblem(), f.holders(), f.xids(), f.memory(),
            f.plugin(), 1, RepairPlan.Persistenced.parse("LoadState=loaded\nUnitFileState=enabled\nActiveState=failed\n"));
        var p = RepairPlan.plan(down, false);
        assertEquals(List.of(Remedy.RESTART_PERSISTENCED), p.remedies());
        assertTrue(p.findings().contains("nvidia-persistenced is enabled but not running"), p.toString());
        // with a GPU to reset as well: persistenced first, the plugin last (it must see the reset GPU)
        var xid = facts(List.of(G0, G1), XID48, 1, Optional.empty(), Map.of());
        var both = RepairPlan.plan(new RepairPlan.Facts(xid.node(), xid.recorded(), xid.present(), "", Optional.empty(), Map.of(), xid.xids(),
            List.of(), xid.plugin(), 1, down.persistenced()), false);
        assertEquals(List.of(Remedy.RESTART_PERSISTENCED, Remedy.RESET_GPU, Remedy.RESTART_PLUGIN), both.remedies());
        // under a mismatch persistenced cannot start: it is started after the reload, before the plugin
        var m = facts(List.of(), "", 0, Optional.of(MISMATCH), Map.of());
        var mismatchDown = RepairPlan.plan(new RepairPlan.Facts(m.node(), m.recorded(), m.present(), "", m.driverProblem(), Map.of(), List.of(),
            List.of(), m.plugin(), 1, down.persistenced()), false);
        assertEquals(List.of(Remedy.RELOAD_MODULES, Remedy.RESTART_PERSISTENCED, Remedy.RESTART_PLUGIN), mismatchDown.remedies());
    }

    @Test void theLastRepairIsReadFromTheAnnotationRepairWrites() {
        assertEquals(Optional.of(new RepairPlan.LastRepair("2026-12-04T10:00:00Z", true, List.of("reset_gpu", "restart_plugin"))),
            RepairPlan.LastRepair.parse("2026-12-04T10:00:00Z;proved;remedies=reset_gpu,restart_plugin"));
        assertEquals(Optional.of(new RepairPlan.LastRepair("2026-12-04T10:00:00Z", false, List.of())),
            RepairPlan.LastRepair.parse("2026-12-04T10:00:00Z;not-proved;remedies="));
        assertEquals(Optional.empty(), RepairPlan.LastRepair.parse("someone else's note"));
    }

    @Test void persistencedsUnitIsReadFromSystemctlShow() {
        assertEquals(new RepairPlan.Persistenced(true, true, true),
            RepairPlan.Persistenced.parse("LoadState=loaded\nUnitFileState=enabled\nActiveState=active\n"));
        assertEquals(RepairPlan.Persistenced.ABSENT, RepairPlan.Persistenced.parse("LoadState=not-found\nUnitFileState=\nActiveState=inactive\n"));
        var disabled = RepairPlan.Persistenced.parse("LoadState=loaded\nUnitFileState=disabled\nActiveState=inactive\n");
        assertTrue(disabled.installed() && !disabled.down(), "installed but not enabled: the host's choice, not a fault");
    }

    @Test void anUncorrectableMemoryErrorReboots() {
        var f = facts(List.of(G0, G1), "", 2, Optional.empty(), Map.of());
        var ecc = new RepairPlan.Facts(f.node(), f.recorded(), f.present(), f.smiProblem(), f.driverProblem(), f.holders(), f.xids(),
            List.of("GPU 00000000:3B:00.0: 2 uncorrectable ECC error(s) since the driver loaded"), f.plugin(), f.replicas());
        var p = RepairPlan.plan(ecc, false);
        assertEquals(List.of(Remedy.REBOOT), p.remedies());
        assertTrue(p.findings().contains("memory: GPU 00000000:3B:00.0: 2 uncorrectable ECC error(s) since the driver loaded"), p.toString());
    }

    @Test void noGpuListedAtAllReboots() {
        var p = RepairPlan.plan(facts(List.of(), "", 0, Optional.empty(), Map.of()), false);
        assertEquals(List.of(Remedy.REBOOT), p.remedies());
        assertTrue(p.findings().get(0).contains("2 GPU(s) recorded at bootstrap missing") && p.findings().get(0).contains("No devices were found"), p.toString());
    }

    @Test void parsersReadNvidiaSmiCsv() {
        assertEquals(List.of(G0, G1), RepairPlan.parseGpus("0, " + U0 + ", 00000000:3B:00.0\n1, " + U1 + ", 00000000:91:00.0\n"));
        assertEquals(List.of(), RepairPlan.parseGpus("No devices were found\n"));
        assertEquals(Map.of(U0, List.of("4242 python3", "4243 /usr/bin/python")),
            RepairPlan.parseHolders(U0 + ", 4242, python3\n" + U0 + ", 4243, /usr/bin/python\n"));
        assertEquals(Map.of(), RepairPlan.parseHolders("No running processes found\n"));
    }

    static RepairPlan.Facts nvmlFacts(List<DevChar.PodNvml> lost, Optional<String> devChar, int allocatable) {
        var f = facts(List.of(G0, G1), "", allocatable, Optional.empty(), Map.of());
        return new RepairPlan.Facts(f.node(), f.recorded(), f.present(), f.smiProblem(), f.driverProblem(), f.holders(), f.xids(), f.memory(),
            f.plugin(), f.replicas(), f.persistenced(), lost, devChar);
    }

    static final DevChar.PodNvml LOST = new DevChar.PodNvml("default/infer-w1-abc", "w1", "ReplicaSet", 255, DevChar.LOST);

    @Test void podsThatLostNvmlGetTheLinksAndARestart_withoutHoldingTheJobs() {
        var p = RepairPlan.plan(nvmlFacts(List.of(LOST), Optional.of("6 of 6 NVIDIA device node(s) without their /dev/char link"), 2), false);
        assertEquals(List.of(Remedy.DEV_CHAR_LINKS, Remedy.RESTART_LOST_PODS), p.remedies());
        assertTrue(!p.holdsJobs(), p.toString());
        String text = RepairPlan.text(p);
        assertTrue(text.contains("1 running GPU pod(s) lost their GPUs (nvidia-smi -L in them: \"Failed to initialize NVML: Unknown Error\"):"
            + " default/infer-w1-abc (ReplicaSet)"), text);
        assertTrue(text.contains("prevention missing: 6 of 6"), text);
        assertTrue(!text.contains("hold the jobs safe") && !text.contains("smoke pod"), text);
    }

    @Test void theMissingPreventionAloneMakesTheLinksOnly() {
        var p = RepairPlan.plan(nvmlFacts(List.of(), Optional.of(DevChar.RULE_FILE + " is missing"), 2), false);
        assertEquals(List.of(Remedy.DEV_CHAR_LINKS), p.remedies());
        assertTrue(!p.healthy());
    }

    @Test void withAPluginRestartTheLinksComeFirst_andTheDrainRestartsTheLostPods() {
        var p = RepairPlan.plan(nvmlFacts(List.of(LOST), Optional.of("links missing"), 1), false);
        assertEquals(List.of(Remedy.DEV_CHAR_LINKS, Remedy.RESTART_PLUGIN), p.remedies());
        assertTrue(p.holdsJobs());
        assertTrue(RepairPlan.text(p).contains("hold the jobs safe"), RepairPlan.text(p));
    }
}
