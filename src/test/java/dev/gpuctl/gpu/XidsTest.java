package dev.gpuctl.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** NVIDIA's Xid catalogue as gpuctl's table says it, and the kernel's real Xid line formats. */
class XidsTest {
    @Test
    void applicationXidsAreTheJobsAndHardwareOnesTheGpus() {
        for (int code : List.of(13, 31, 43, 45, 68, 69)) assertEquals(Xids.Cause.APPLICATION, Xids.kind(code).cause(), "Xid " + code);
        for (int code : List.of(48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 121, 140)) {
            assertEquals(Xids.Cause.HARDWARE, Xids.kind(code).cause(), "Xid " + code);
            assertTrue(Xids.kind(code).action().contains("gpuctl drain HOST"), "Xid " + code + " says to drain");
        }
        assertEquals("GPU has fallen off the bus", Xids.kind(79).name());
        Xids.Kind unlisted = Xids.kind(8);
        assertEquals(Xids.Cause.UNLISTED, unlisted.cause());
        assertTrue(unlisted.action().contains("docs.nvidia.com/deploy/xid-errors"), unlisted.action());
    }

    @Test
    void theKernelsLineFormats() {
        String log = """
            Dec 03 13:27:50 gpu-1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.
            2026-12-03T13:27:51+0000 gpu-1 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.
            [ 4711.123456] NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus.
            Dec 03 13:28:00 gpu-1 kernel: NVRM: Xid (0000:ca:00): 13, pid=2245, name=pt_main_thread, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address
            Dec 03 13:28:01 gpu-1 kernel: NVRM: GPU at PCI:0000:44:00: GPU-6a9b0001
            Dec 03 13:28:02 gpu-1 kernel: nvidia-modeset: Xid-like text that is no Xid line
            """;
        List<Xids.Xid> x = Xids.parse(log);
        assertEquals(4, x.size());
        assertEquals(new Xids.Xid("Dec 03 13:27:50", "0000:3b:00", 79, Optional.of(1234), Optional.of("python3"), "GPU has fallen off the bus."), x.get(0));
        assertEquals("2026-12-03T13:27:51+0000", x.get(1).when());
        assertEquals(Optional.empty(), x.get(1).pid());
        assertEquals(Optional.empty(), x.get(1).process());
        assertTrue(x.get(1).message().startsWith("An uncorrectable double bit error"));
        assertEquals(new Xids.Xid("4711.123456 s after boot", "0000:44:00", 79, Optional.empty(), Optional.empty(), "GPU has fallen off the bus."), x.get(2));
        assertEquals("0000:ca:00", x.get(3).pci());
        assertEquals(Optional.of("pt_main_thread"), x.get(3).process());
        assertEquals("Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address", x.get(3).message());
    }

    @Test
    void theGpuAnXidNamesByItsPciBusId() {
        // the H200's real bus id (src/test/resources/h200/nvidia-smi-query-noheader-nounits.txt) and a second GPU
        var smi = List.of(new NvidiaSmi.Gpu(0, "NVIDIA H200", "GPU-c84ee533-0d1b-b723-49eb-e74b6c7485b2", 143771L, "580.159.04", "Disabled", "Default", "00000000:00:06.0"),
            new NvidiaSmi.Gpu(1, "NVIDIA H200", "GPU-6a9b", 143771L, "580.159.04", "Disabled", "Default", "00000000:3B:00.0"));
        List<Xids.Gpu> gpus = Xids.parseGpus(Xids.gpusText(smi));
        assertEquals(List.of(new Xids.Gpu(0, "GPU-c84ee533-0d1b-b723-49eb-e74b6c7485b2", "00000000:00:06.0"), new Xids.Gpu(1, "GPU-6a9b", "00000000:3B:00.0")), gpus);
        assertEquals(Optional.of(gpus.get(1)), Xids.gpuOf("0000:3b:00", gpus));
        assertEquals(Optional.of(gpus.get(0)), Xids.gpuOf("0000:00:06", gpus));
        assertEquals(Optional.empty(), Xids.gpuOf("0000:44:00", gpus));
        assertEquals("the GPU at PCI 0000:44:00", Xids.gpuName("0000:44:00", gpus));
    }

    @Test
    void rowsGroupRepeatsAndNameTheProcess() {
        String log = """
            Dec 03 13:00:00 g kernel: NVRM: Xid (PCI:0000:3b:00): 43, pid=10, name=a, Ch 00000010
            Dec 03 13:00:01 g kernel: NVRM: Xid (PCI:0000:3b:00): 43, pid=11, name=b, Ch 00000010
            Dec 03 13:00:02 g kernel: NVRM: Xid (PCI:0000:3b:00): 45, pid='<unknown>', name=<unknown>, Ch 00000010
            Dec 03 13:00:03 g kernel: NVRM: Xid (PCI:0000:3b:00): 8, pid=12, name=c, Channel 00000010 timed out
            """;
        List<String> app = Xids.rows(Xids.parse(log), List.of(), false);
        assertEquals(3, app.size(), app::toString);
        assertTrue(app.get(0).contains("by process a (pid 10)"), app.get(0));
        assertTrue(app.get(1).contains("by process b (pid 11)"), app.get(1));
        assertTrue(app.get(2).contains("by a process the driver did not name"), app.get(2));
        List<String> hw = Xids.rows(Xids.parse(log), List.of(), true);
        assertEquals(1, hw.size());
        assertTrue(hw.get(0).startsWith("Xid 8 (not in gpuctl's table) at Dec 03 13:00:03 on the GPU at PCI 0000:3b:00: \"Channel 00000010 timed out\" — look it up"), hw.get(0));
    }
}
