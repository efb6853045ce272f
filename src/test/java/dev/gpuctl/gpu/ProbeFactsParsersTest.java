package dev.gpuctl.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gpuctl.hostfiles.DriverPackages;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The records a probe's answer is kept as, for the probes after it: each parsed from the fact's text by a pure parser. */
class ProbeFactsParsersTest {
    @Test void installedDriverPackagesFromDpkgQueryAndBackFromTheFactsText() {
        String dpkg = "nvidia-driver-emu installed\nlibnvidia-ml1:amd64 installed\nnvidia-container-toolkit installed\n"
            + "linux-image-amd64 installed\nnvidia-old config-files\nbash installed\n";
        DriverPackages.Installed driver = DriverPackages.Installed.fromDpkgQuery(dpkg, false);
        assertEquals(List.of("nvidia-driver-emu", "libnvidia-ml1:amd64"), driver.packages());
        assertEquals("nvidia-driver-emu libnvidia-ml1:amd64", driver.words());
        assertEquals(driver, DriverPackages.Installed.parse(driver.words()));
        assertEquals(List.of("nvidia-driver-emu", "libnvidia-ml1:amd64", "linux-image-amd64"),
            DriverPackages.Installed.fromDpkgQuery(dpkg, true).packages());
        assertEquals(List.of(), DriverPackages.Installed.parse("").packages());
        assertEquals(List.of(), DriverPackages.Installed.parse(" \n").packages());
        assertEquals(List.of("libnvidia-ml1:amd64"), driver.notHeld("kubelet\nnvidia-driver-emu\n"));
        assertEquals(List.of(), driver.notHeld("nvidia-driver-emu\nlibnvidia-ml1\n"), "a hold without the arch qualifier counts");
    }

    @Test void migModesKeepTheParsedModesAndTheText() {
        NvidiaMig.Modes m = NvidiaMig.Modes.parse("0, NVIDIA H200, Enabled, Enabled\n1, NVIDIA H200, Disabled, Enabled\n");
        assertEquals(List.of(0, 1), m.indexes());
        assertEquals(NvidiaMig.parseModes("0, NVIDIA H200, Enabled, Enabled\n1, NVIDIA H200, Disabled, Enabled\n"), m.gpus());
        assertEquals(List.of(true, false), m.gpus().stream().map(NvidiaMig.GpuMode::enabled).toList());
        NvidiaMig.Modes failed = NvidiaMig.Modes.parse("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n");
        assertEquals(List.of(), failed.gpus());
        assertEquals("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", failed.text());
    }

    @Test void kernelModuleVersionFromProcDriverNvidiaVersion() {
        String proc = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U22)  Thu Oct  2 00:00:00 UTC 2025\n"
            + "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
        assertEquals(Optional.of("580.159.04"), GpuHealth.KernelModule.parse(proc).version());
        assertEquals(Optional.empty(), GpuHealth.KernelModule.parse("").version(), "no module loaded");
        assertEquals(GpuHealth.driverMismatch("580.173\n", 0, proc), GpuHealth.driverMismatch("580.173\n", 0, GpuHealth.KernelModule.parse(proc)));
    }
}
