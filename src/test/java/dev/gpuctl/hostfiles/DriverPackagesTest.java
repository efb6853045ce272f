package dev.gpuctl.hostfiles;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DriverPackagesTest {
    /** dpkg-query -W -f='${Package} ${db:Status-Status}\n' on an Ubuntu GPU server with NVIDIA's packaged driver. */
    static final String DPKG = """
        bash installed
        cuda-drivers-580 installed
        libnvidia-compute-580:amd64 installed
        libnvidia-container-tools installed
        libnvidia-container1:amd64 installed
        libnvidia-ml1 config-files
        linux-image-6.8.0-49-generic installed
        linux-image-generic installed
        linux-modules-nvidia-580-server-open-6.8.0-49-generic installed
        nvidia-compute-utils-580 installed
        nvidia-container-toolkit installed
        nvidia-container-toolkit-base installed
        nvidia-dkms-580-open installed
        nvidia-driver-580-open installed
        nvidia-utils-580 installed
        """;

    @Test
    void driverPackagesButNotTheContainerToolkitOrRemovedOnes() {
        assertEquals(List.of("cuda-drivers-580", "libnvidia-compute-580:amd64", "linux-modules-nvidia-580-server-open-6.8.0-49-generic",
            "nvidia-compute-utils-580", "nvidia-dkms-580-open", "nvidia-driver-580-open", "nvidia-utils-580"),
            DriverPackages.installed(DPKG, false));
        List<String> withKernel = DriverPackages.installed(DPKG, true);
        assertTrue(withKernel.containsAll(List.of("linux-image-6.8.0-49-generic", "linux-image-generic")), withKernel.toString());
        assertFalse(withKernel.contains("nvidia-container-toolkit"));
        assertEquals(List.of("nvidia-driver-emu"), DriverPackages.installed("nvidia-driver-emu installed\n", false));
    }

    @Test
    void notHeldComparesWithShowhold() {
        List<String> want = List.of("libnvidia-compute-580:amd64", "nvidia-driver-580-open", "nvidia-utils-580");
        assertEquals(List.of("nvidia-utils-580"), DriverPackages.notHeld(want, "kubelet\nlibnvidia-compute-580\nnvidia-driver-580-open\n"));
        assertEquals(List.of(), DriverPackages.notHeld(want, "libnvidia-compute-580:amd64\nnvidia-driver-580-open\nnvidia-utils-580\n"));
    }

    @Test
    void aptConfListsTheSamePatternsAsPythonRegexes() {
        String conf = DriverPackages.aptConf(false);
        assertTrue(conf.contains("Unattended-Upgrade::Package-Blacklist {\n    \"^nvidia-(?!container-)\";\n"), conf);
        assertFalse(conf.contains("linux-(image"), conf);
        assertTrue(conf.endsWith("};\n"));
        assertTrue(DriverPackages.aptConf(true).contains("\"^linux-(image|headers|modules)-\";"));
        // every line outside the list is an apt.conf comment
        conf.lines().filter(l -> !l.startsWith("    ") && !l.startsWith("Unattended") && !l.equals("};"))
            .forEach(l -> assertTrue(l.startsWith("//"), l));
    }
}
