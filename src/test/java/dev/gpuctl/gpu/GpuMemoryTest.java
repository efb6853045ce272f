package dev.gpuctl.gpu;

import dev.gpuctl.text.Fixtures;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A GPU's memory faults read from a real H200's nvidia-smi -q report, and from edits of it. */
class GpuMemoryTest {
    static final String ECC = Fixtures.read("nvidia-smi/nvidia-smi-q-d-ECC-PAGE_RETIREMENT-ROW_REMAPPER_h200.txt");

    @Test
    void realH200EccReportIsParsedPerGpuAndHealthy() {
        var gpus = GpuMemory.parseQ(ECC);
        assertEquals(1, gpus.size());
        var g = gpus.get(0);
        assertEquals("00000000:00:06.0", g.gpu());
        assertEquals(Optional.of("Enabled"), g.get("ECC Mode/Current"));
        assertEquals(Optional.of("0"), g.get("ECC Errors/Volatile/DRAM Uncorrectable"));
        assertEquals(Optional.of("0"), g.get("ECC Errors/Aggregate/SRAM Uncorrectable SEC-DED"));
        assertEquals(Optional.of("No"), g.get("ECC Errors/Aggregate/SRAM Threshold Exceeded"));
        assertEquals(Optional.of("No"), g.get("ECC Errors/Unrepairable Memory"));
        assertEquals(Optional.of("N/A"), g.get("Retired Pages/Pending Page Blacklist"));
        assertEquals(Optional.of("No"), g.get("Remapped Rows/Pending"));
        assertEquals(Optional.of("No"), g.get("Remapped Rows/Remapping Failure Occurred"));
        assertEquals(Optional.of("3072 bank(s)"), g.get("Remapped Rows/Bank Remap Availability Histogram/Max"));
        assertEquals(List.of(), GpuMemory.memoryProblems(ECC));
    }

    @Test
    void uncorrectableErrorsPendingRemapAndFailureAreEachFound() {
        String bad = ECC.replace("            DRAM Uncorrectable                         : 0\n        Aggregate",
                "            DRAM Uncorrectable                         : 2\n        Aggregate")
            .replace("        Pending                                        : No", "        Pending                                        : Yes");
        List<String> p = GpuMemory.memoryProblems(bad);
        assertEquals(2, p.size(), p.toString());
        assertTrue(p.get(0).startsWith("GPU 00000000:00:06.0: 2 uncorrectable ECC error(s) since the driver loaded (DRAM Uncorrectable 2)"), p.get(0));
        assertTrue(p.get(0).contains("gpuctl drain HOST") && p.get(0).contains("RMA"), p.get(0));
        assertTrue(p.get(1).contains("row remapping") && p.get(1).contains("waits for a GPU reset"), p.get(1));

        String failed = ECC.replace("Remapping Failure Occurred                     : No", "Remapping Failure Occurred                     : Yes")
            .replace("Unrepairable Memory                            : No", "Unrepairable Memory                            : Yes");
        List<String> f = GpuMemory.memoryProblems(failed);
        assertEquals(2, f.size(), f.toString());
        assertTrue(f.get(0).contains("Unrepairable Memory: Yes") && f.get(0).contains("RMA"), f.get(0));
        assertTrue(f.get(1).contains("a row remapping failed") && f.get(1).contains("RMA"), f.get(1));
    }

    @Test
    void aggregateCountsAloneAreHistoryNotAFault() {
        String old = ECC.replace("            DRAM Uncorrectable                         : 0\n            SRAM Threshold",
            "            DRAM Uncorrectable                         : 5\n            SRAM Threshold");
        assertTrue(old.contains("DRAM Uncorrectable                         : 5"));
        assertEquals(List.of(), GpuMemory.memoryProblems(old));
    }

    @Test
    void aFailedNvidiaSmiIsAMemoryFindingWithItsCause() {
        List<String> p = GpuMemory.memoryProblems(GpuHealthTest.MISMATCH);
        assertEquals(1, p.size());
        assertTrue(p.get(0).contains("version mismatch") && p.get(0).contains("reboot"), p.get(0));
    }
}
