package dev.gpuctl.gpu;

import dev.gpuctl.text.Fixtures;
import dev.gpuctl.text.HostConfException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NvidiaSmiTest {

    private static final String UUID = "GPU-7ff2f39c-9b2f-4d81-48f8-8185096b5daf";

    @Test
    void queryFieldsAreTheOnesOfTheRealCsvHeader() {
        String header = Fixtures.read("nvidia-smi/nvidia-smi-query-csv_h200.txt").lines().findFirst().orElseThrow();
        assertEquals("index, name, uuid, memory.total [MiB], driver_version, mig.mode.current, compute_mode, pci.bus_id", header);
        assertEquals(NvidiaSmi.QUERY_FIELDS, header.replace(" [MiB]", "").replace(", ", ","));
        assertEquals("nvidia-smi --query-gpu=index,name,uuid,memory.total,driver_version,mig.mode.current,compute_mode,pci.bus_id"
                + " --format=csv,noheader,nounits", NvidiaSmi.QUERY_COMMAND);
    }

    @Test
    void realListOutput() {
        NvidiaSmi.GpuScan scan = NvidiaSmi.parseList(Fixtures.read("nvidia-smi/nvidia-smi-L_h200.txt"));
        assertEquals(List.of(new NvidiaSmi.Gpu(0, "NVIDIA H200", UUID, null, null, null, null, null)), scan.gpus());
        assertTrue(scan.ok());
        assertEquals(Optional.empty(), scan.problem());
    }

    @Test
    void listWithSeveralGpusAndMigDevices() {
        String out = """
                GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-11111111-2222-3333-4444-555555555555)
                  MIG 3g.40gb     Device  0: (UUID: MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee)
                  MIG 3g.40gb     Device  1: (UUID: MIG-ffffffff-bbbb-cccc-dddd-eeeeeeeeeeee)
                GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-66666666-2222-3333-4444-555555555555)
                GPU 2: Tesla V100-PCIE-32GB (UUID: GPU-77777777-2222-3333-4444-555555555555)
                """;
        NvidiaSmi.GpuScan scan = NvidiaSmi.parseList(out);
        assertEquals(List.of(0, 1, 2), scan.gpus().stream().map(NvidiaSmi.Gpu::index).toList());
        assertEquals("Tesla V100-PCIE-32GB", scan.gpus().get(2).name());
        assertEquals("GPU-66666666-2222-3333-4444-555555555555", scan.gpus().get(1).uuid());
    }

    @Test
    void unknownListLineIsAnError() {
        assertThrows(HostConfException.class, () -> NvidiaSmi.parseList("Segmentation fault\n"));
    }

    @Test
    void realNoheaderNounitsWithTheFieldsItWasCapturedWith() {
        NvidiaSmi.GpuScan scan = NvidiaSmi.parseQuery(
                Fixtures.read("nvidia-smi/nvidia-smi-query-csv-noheader-nounits_h200.txt"),
                "index,name,uuid,memory.total,driver_version");
        assertEquals(List.of(new NvidiaSmi.Gpu(0, "NVIDIA H200", UUID, 143771L, "580.159.04", null, null, null)),
                scan.gpus());
    }

    @Test
    void gpuctlsOwnQueryOnSeveralGpus() {
        String out = "0, NVIDIA H200, GPU-a, 143771, 580.159.04, Disabled, Default, 00000000:00:06.0\n"
                + "1, NVIDIA H200, GPU-b, 143771, 580.159.04, Enabled, Exclusive_Process, 00000000:00:07.0\n"
                + "2, NVIDIA GeForce RTX 4090, GPU-c, 24564, 580.159.04, [N/A], Default, 00000000:01:00.0\n";
        NvidiaSmi.GpuScan scan = NvidiaSmi.parseQuery(out);
        assertEquals(3, scan.gpus().size());
        assertEquals(new NvidiaSmi.Gpu(1, "NVIDIA H200", "GPU-b", 143771L, "580.159.04", "Enabled", "Exclusive_Process",
                "00000000:00:07.0"), scan.gpus().get(1));
        assertEquals(null, scan.gpus().get(2).migMode(), "[N/A] is no value");
        assertEquals(24564L, scan.gpus().get(2).memoryTotalMib());
    }

    @Test
    void wrongNumberOfValuesIsAnErrorNamingTheFields() {
        HostConfException e = assertThrows(HostConfException.class, () -> NvidiaSmi.parseQuery(
                Fixtures.read("nvidia-smi/nvidia-smi-query-csv-noheader-nounits_h200.txt")));
        assertTrue(e.getMessage().contains("5 values where 8 fields"), e.getMessage());
    }

    @Test
    void nonNumericMemoryOrIndexIsAnError() {
        assertThrows(HostConfException.class, () -> NvidiaSmi.parseQuery("0, X, GPU-a, lots", "index,name,uuid,memory.total"));
        assertThrows(HostConfException.class, () -> NvidiaSmi.parseQuery("zero, X", "index,name"));
        assertThrows(HostConfException.class, () -> NvidiaSmi.parseQuery("X, GPU-a", "name,uuid"));
    }

    @Test
    void noDevicesIsAResultWithAReason() {
        for (NvidiaSmi.GpuScan scan : List.of(NvidiaSmi.parseList("No devices were found\n"),
                NvidiaSmi.parseQuery("No devices were found\n"))) {
            assertEquals(List.of(), scan.gpus());
            assertFalse(scan.ok());
            assertTrue(scan.problem().orElseThrow().startsWith("nvidia-smi found no GPU"), scan.problem().get());
        }
    }

    @Test
    void driverNotLoadedIsAResultWithAReason() {
        String out = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
                + "latest NVIDIA driver is installed and running.\n\n";
        NvidiaSmi.GpuScan scan = NvidiaSmi.parseQuery(out);
        assertEquals(List.of(), scan.gpus());
        assertTrue(scan.problem().orElseThrow().contains("cannot reach the NVIDIA driver"), scan.problem().get());
        assertTrue(scan.problem().get().contains("NVIDIA-SMI has failed"), "keeps what nvidia-smi said");
        assertEquals(scan.problem(), NvidiaSmi.parseList(out).problem());
    }

    @Test
    void versionMismatchIsAResultWithAReason() {
        NvidiaSmi.GpuScan scan = NvidiaSmi.parseList(
                "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.159\n");
        assertTrue(scan.problem().orElseThrow().contains("reboot"), scan.problem().get());
    }

    @Test
    void aLostGpuAmongGoodOnesKeepsTheGoodOnesAndReportsIt() {
        String out = "GPU 0: NVIDIA H200 (UUID: GPU-a)\n"
                + "Unable to determine the device handle for GPU0000:07:00.0: Unknown Error\n"
                + "GPU 2: NVIDIA H200 (UUID: GPU-c)\n";
        NvidiaSmi.GpuScan scan = NvidiaSmi.parseList(out);
        assertEquals(2, scan.gpus().size());
        assertFalse(scan.ok());
        assertTrue(scan.problem().orElseThrow().contains("Xid"), scan.problem().get());
    }

    @Test
    void emptyOutputIsNoGpusWithAReason() {
        assertEquals(Optional.of("nvidia-smi printed nothing"), NvidiaSmi.parseQuery("").problem());
    }

    @Test
    void driverVersionFromProc() {
        assertEquals(Optional.of("580.159.04"),
                NvidiaSmi.driverVersion(Fixtures.read("nvidia-smi/proc-driver-nvidia-version_h200.txt")));
        assertEquals(Optional.of("535.129.03"), NvidiaSmi.driverVersion(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n"
                        + "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n"));
        assertEquals(Optional.of("550.54"), NvidiaSmi.driverVersion(
                "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  550.54  Release Build"));
        assertEquals(Optional.empty(), NvidiaSmi.driverVersion("GCC version:  gcc version 12.3.0\n"));
        assertEquals(Optional.empty(), NvidiaSmi.driverVersion(""));
    }
}
