package dev.gpuctl.gpu;

import dev.gpuctl.text.Fixtures;
import dev.gpuctl.text.HostConfException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GpuHealthTest {
    static final String PROC = Fixtures.read("nvidia-smi/proc-driver-nvidia-version_h200.txt");
    static final String LIST = Fixtures.read("nvidia-smi/nvidia-smi-L_h200.txt");

    /**
     * nvidia-smi's text when the library is newer than the loaded module, as printed by current drivers (two lines);
     * quoted from user reports of the real tool: NVIDIA open-gpu-kernel-modules (tinygrad fork) issue #47 and
     * intel/llvm issue #17614 ("Failed to initialize NVML: Driver/library version mismatch" / "NVML library version:
     * 550.144"). nvidia-smi exits 18 (NVML_ERROR_LIB_RM_VERSION_MISMATCH).
     */
    static final String MISMATCH = "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.173\n";


    @Test
    void moduleAndLibraryAgreeOnTheRealHost() {
        assertEquals(Optional.empty(), GpuHealth.driverMismatch("580.159.04\n", 0, PROC));
        assertEquals(Optional.empty(), GpuHealth.driverMismatch("580.159.04\n580.159.04\n", 0, PROC));
        // no /proc file (a container): nvidia-smi answering is enough
        assertEquals(Optional.empty(), GpuHealth.driverMismatch("580.159.04\n", 0, ""));
    }

    @Test
    void mismatchNamesBothVersionsAndTheFix() {
        String p = GpuHealth.driverMismatch(MISMATCH, 18, PROC).orElseThrow();
        assertTrue(p.startsWith("Driver/library version mismatch: the loaded kernel module is 580.159.04, the NVML library is 580.173"), p);
        assertTrue(p.contains("reboot the node") && p.contains("rmmod nvidia_uvm"), p);
        // the older one-line form (no "NVML library version:" line)
        String old = GpuHealth.driverMismatch("Failed to initialize NVML: Driver/library version mismatch\n", 18, PROC).orElseThrow();
        assertTrue(old.startsWith("Driver/library version mismatch: the loaded kernel module is 580.159.04 (the driver"), old);
        // answering, but with another version than the module's
        String other = GpuHealth.driverMismatch("580.173\n", 0, PROC).orElseThrow();
        assertTrue(other.startsWith("the loaded kernel module is 580.159.04 but nvidia-smi reports driver 580.173"), other);
    }

    @Test
    void preflightsQueryAnswersAsTheDriverVersionQueryWould() throws Exception {
        // the real H200's answer to preflight's query: its driver_version column, as --query-gpu=driver_version prints it
        String h200 = java.nio.file.Files.readString(java.nio.file.Path.of("src/test/resources/h200/nvidia-smi-query-noheader-nounits.txt"));
        GpuHealth.DriverAnswer ok = GpuHealth.DriverAnswer.ofQuery(0, h200);
        assertEquals(new GpuHealth.DriverAnswer(0, "580.159.04\n"), ok);
        assertEquals(ok, GpuHealth.DriverAnswer.parse(ok.text()), "kept as a fact's text and read back");
        assertEquals(Optional.empty(), GpuHealth.driverMismatch(ok.output(), ok.exit(), PROC));
        // two GPUs, a name holding ", " (counted from the end), no trailing line break
        GpuHealth.DriverAnswer two = GpuHealth.DriverAnswer.ofQuery(0,
            "0, NVIDIA H200, GPU-a, 143771, 580.173, Disabled, Default, 00000000:00:06.0\n1, Odd, Name, GPU-b, 143771, 580.173, Disabled, Default, 00000000:00:07.0");
        assertEquals("580.173\n580.173", two.output());
        assertTrue(GpuHealth.driverMismatch(two.output(), 0, PROC).orElseThrow().endsWith("nvidia-smi reports driver 580.173 — fix: reboot the node (drain it first: gpuctl drain HOST)"));
        // a failure is printed whatever the query asks: kept as it is, with its exit status
        GpuHealth.DriverAnswer failed = GpuHealth.DriverAnswer.ofQuery(18, MISMATCH);
        assertEquals(new GpuHealth.DriverAnswer(18, MISMATCH), failed);
        assertEquals(failed, GpuHealth.DriverAnswer.parse(failed.text()));
        assertEquals(GpuHealth.driverMismatch(MISMATCH, 18, PROC), GpuHealth.driverMismatch(failed.output(), failed.exit(), PROC));
        assertEquals(new GpuHealth.DriverAnswer(0, ""), GpuHealth.DriverAnswer.parse("0"));
        assertThrows(HostConfException.class, () -> GpuHealth.DriverAnswer.parse("x\n580"));
    }

    @Test
    void driverNotLoadedIsExplained() {
        String p = GpuHealth.driverMismatch("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            + "Make sure that the latest NVIDIA driver is installed and running.\n", 9, "").orElseThrow();
        assertTrue(p.contains("cannot reach the NVIDIA driver"), p);
    }

    @Test
    void gpusListedAgainstTheRecord() {
        // the record as the annotation keeps it, from the real H200's nvidia-smi -L (and from its --query-gpu)
        String one = GpuHealth.record(NvidiaSmi.parseList(LIST).gpus());
        assertTrue(one.matches("0:GPU-[0-9a-f-]{36}"), one);
        assertEquals(List.of(new GpuHealth.Recorded(0, one.substring(2))), GpuHealth.parseRecord(one));
        String two = one + ",1:GPU-11111111-2222-3333-4444-555555555555";
        assertEquals(Optional.empty(), GpuHealth.missingFromRecord(one, one, ""));
        String p = GpuHealth.missingFromRecord(two, one, "").orElseThrow();
        assertTrue(p.startsWith("1 GPU(s) listed by nvidia-smi, 2 recorded at bootstrap; missing: GPU 1 (GPU-11111111-2222-3333-4444-555555555555)"), p);
        assertTrue(p.contains("RMA"), p);
        // renumbered but all there: fine
        assertEquals(Optional.empty(), GpuHealth.missingFromRecord(two, "3:GPU-11111111-2222-3333-4444-555555555555," + one, ""));
        String none = GpuHealth.missingFromRecord(one, "", "nvidia-smi found no GPU").orElseThrow();
        assertTrue(none.startsWith("1 GPU(s) recorded at bootstrap, none listed now: nvidia-smi found no GPU"), none);
        // a UUID keeps only what UUIDs are made of: the record is safe on a command line
        assertEquals("0:GPU-abc", GpuHealth.record(List.of(new NvidiaSmi.Gpu(0, "x", "GPU-a'b;c", null, null, null, null, null))));
        assertEquals(List.of(), GpuHealth.parseRecord("garbage,:x,1:"));
    }

    /**
     * Xid lines as the NVIDIA driver logs them to the kernel log: "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off
     * the bus" quoted in NVIDIA/NVSentinel issue #155; newer drivers add "pid=..., name=...," before the text. Here as
     * journalctl -k prints them (timestamp, host, "kernel:").
     */
    @Test
    void xidCodesFromTheKernelLog() {
        String log = """
            Dec 03 13:20:01 gpu-1 kernel: nvidia-modeset: Loading NVIDIA UNIX Open Kernel Mode Setting Driver for x86_64  580.159.04
            Dec 03 13:27:50 gpu-1 kernel: NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus.
            Dec 03 13:27:51 gpu-1 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.
            Dec 03 13:27:52 gpu-1 kernel: NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus.
            Dec 03 13:28:10 gpu-1 kernel: NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address
            """;
        var gpus = List.of(new Xids.Gpu(0, "GPU-c84ee533", "00000000:3B:00.0"), new Xids.Gpu(1, "GPU-6a9b0001", "00000000:44:00.0"));
        String p = GpuHealth.xidProblem(log, gpus).orElseThrow();
        assertEquals("""
            3 hardware/driver Xid error(s) in the kernel log since boot:
            Xid 79 (GPU has fallen off the bus) 2 times, first at Dec 03 13:27:50, last at Dec 03 13:27:52 on GPU 1 (GPU-6a9b0001, PCI 0000:44:00): \
            "GPU has fallen off the bus." — drain it first (gpuctl drain HOST), so that no job is scheduled onto the GPU, reboot it; \
            if it repeats, check power, cooling and seating, then RMA
            Xid 48 (Double Bit ECC Error) at Dec 03 13:27:51 on GPU 0 (GPU-c84ee533, PCI 0000:3b:00): "An uncorrectable double bit \
            error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0." — uncorrectable memory error: \
            drain it first (gpuctl drain HOST), so that no job is scheduled onto the GPU, reboot it (resets the GPU, applies the \
            row remap), then see nvidia-smi -q -d ECC,ROW_REMAPPER; if it repeats, RMA""", p);
        String w = GpuHealth.xidWarning(log, gpus);
        assertEquals("""
            1 application Xid error(s) in the kernel log since boot (a job's fault, not the GPU's):
            Xid 13 (Graphics Engine Exception) at Dec 03 13:28:10 on GPU 0 (GPU-c84ee533, PCI 0000:3b:00), by process python3 \
            (pid 4242): "Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address" — the job's own fault: usually \
            the job's out-of-range access or illegal instruction: the GPU needs nothing; check that job (its log, its CUDA code, \
            its inputs) and run it again""", w);
        assertEquals(Optional.empty(), GpuHealth.xidProblem("Dec 03 13:20:01 gpu-1 kernel: NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.159.04\n", gpus));
        assertEquals(Optional.empty(), GpuHealth.xidProblem("", List.of()));
        assertEquals("", GpuHealth.xidWarning("", List.of()));
        // only an application's Xid: verify passes, with the warning
        String app = "Dec 03 13:28:10 gpu-1 kernel: NVRM: Xid (PCI:0000:3b:00): 31, pid=77, name=train, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS\n";
        assertEquals(Optional.empty(), GpuHealth.xidProblem(app, gpus));
        assertTrue(GpuHealth.xidWarning(app, List.of()).contains("Xid 31 (GPU memory page fault) at Dec 03 13:28:10 on the GPU at PCI 0000:3b:00, by process train (pid 77)"),
            GpuHealth.xidWarning(app, List.of()));
    }

    @Test
    void persistenceModeFromTheRealHealthQuery() {
        // the real H200 answer to --query-gpu=...,persistence_mode: "Enabled"
        String csv = Fixtures.read("nvidia-smi/nvidia-smi-query-health-csv_h200.txt");
        String last = csv.lines().skip(1).findFirst().orElseThrow();
        String mode = last.substring(last.lastIndexOf(',') + 1).strip();
        assertEquals("Enabled", mode);
        String answer = "0, " + mode + "\n";
        assertEquals(Optional.empty(), GpuHealth.persistenceProblem(answer, true));
        String p = GpuHealth.persistenceProblem(answer + "1, Disabled\n", true).orElseThrow();
        assertEquals("persistence mode should be Enabled: GPU 1 Disabled — fix: systemctl enable --now nvidia-persistenced (or nvidia-smi -pm 1)", p);
        assertTrue(GpuHealth.persistenceProblem(answer, false).isPresent());
        assertTrue(GpuHealth.persistenceProblem(MISMATCH, true).orElseThrow().contains("version mismatch"));
    }
}
