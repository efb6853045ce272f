package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Sh;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The pure judgements inside the steps: text in, verdict out. */
class StepLogicTest {

    @Test void swapUnitsThatStartAtBoot() {
        String out = """
            dev-sda2.swap          generated -
            swapfile.swap          enabled   enabled
            old.swap               masked    enabled
            zram0.swap             static    -
            dev-zram0.swap         enabled-runtime -
            """;
        assertEquals(List.of("dev-sda2.swap", "swapfile.swap", "dev-zram0.swap"), SwapStep.enabledSwapUnits(out));
        assertEquals(List.of(), SwapStep.enabledSwapUnits(""));
    }

    @Test void kubernetesPackagesAtTheMinor() {
        String ok = "kubelet 1.35.0-1.1 installed\nkubeadm 1.35.2-1.1 installed\nkubectl 1.35.0-1.1 installed\n";
        assertEquals(Optional.empty(), KubePackagesStep.versionProblems(ok, "1.35"));
        String bad = "kubelet 1.34.1-1.1 installed\nkubeadm 1.35.2-1.1 config-files\n";
        assertEquals(Optional.of("kubelet 1.34.1-1.1, expected 1.35.x; kubeadm not installed; kubectl not installed"),
            KubePackagesStep.versionProblems(bad, "1.35"));
        // 1.3 must not accept 1.35
        assertTrue(KubePackagesStep.versionProblems(ok, "1.3").isPresent());
    }

    @Test void supportedOperatingSystems() {
        assertEquals(Optional.empty(), PreflightStep.osProblem("ID=debian\nVERSION_ID=\"12\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"));
        assertEquals(Optional.empty(), PreflightStep.osProblem("ID=ubuntu\nVERSION_ID=\"24.04\"\n"));
        assertEquals(Optional.of("unsupported OS CentOS Stream 9 (supported: Debian 12, Ubuntu 22.04, Ubuntu 24.04)"),
            PreflightStep.osProblem("ID=\"centos\"\nVERSION_ID=\"9\"\nPRETTY_NAME=\"CentOS Stream 9\"\n"));
        // a hostile os-release: its PRETTY_NAME would set the window title and clear the screen
        assertEquals(Optional.of("unsupported OS Evil\\x1b]0;title\\x07\\x1b[2J (supported: Debian 12, Ubuntu 22.04, Ubuntu 24.04)"),
            PreflightStep.osProblem("ID=evil\nVERSION_ID=1\nPRETTY_NAME=\"Evil\u001b]0;title\u0007\u001b[2J\"\n"));
    }

    @Test void containerdAnswers() {
        String gpuOk = "version = 2\n  default_runtime_name = \"nvidia\"\n SystemdCgroup = true\n";
        assertEquals(Optional.empty(), RuntimeStep.containerdProblems(gpuOk, true));
        assertEquals(Optional.of("default runtime is nvidia on a node without GPUs"), RuntimeStep.containerdProblems(gpuOk, false));
        assertEquals(Optional.of("SystemdCgroup is not true; default runtime is not nvidia"),
            RuntimeStep.containerdProblems("SystemdCgroup = false\ndefault_runtime_name = \"runc\"", true));
    }

    @Test void factsAreSubstitutedAndSecretsMasked() {
        Facts f = new Facts();
        f.put("join.token", "abcdef.0123456789abcdef", true);
        f.put("kubeadm.version", "v1.35.0", false);
        assertEquals("token: abcdef.0123456789abcdef v1.35.0", f.substitute("token: {{join.token}} {{kubeadm.version}}"));
        assertEquals("kubeadm join --token abcdef.<redacted> v1.35.0", f.mask("kubeadm join --token abcdef.0123456789abcdef v1.35.0"));
        f.put("password", "hunter2-long", true);
        assertEquals("pw <password>", f.mask("pw hunter2-long"));
        assertThrows(IllegalStateException.class, () -> f.substitute("{{join.caCertHash}}"));
    }

    @Test void shellQuoting() {
        assertEquals("chrony", ShellWords.quote("chrony"));
        assertEquals("'it'\\''s here'", ShellWords.quote("it's here"));
        assertEquals("'$(reboot)'", ShellWords.quote("$(reboot)"));
    }

    @Test void chronySourcesOnlyWhenServersAreGiven() {
        assertEquals(Optional.empty(), TimeSyncStep.sourcesFile(List.of()));
        assertEquals("# Written by gpuctl from the inventory's cluster.timeServers.\nserver ntp1.lan iburst\nserver 10.0.0.5 iburst\n",
            TimeSyncStep.sourcesFile(List.of("ntp1.lan", "10.0.0.5")).orElseThrow());
    }

    @Test void timeSynchronisation() {
        assertEquals(Optional.empty(), TimeSyncStep.synchronisationProblem("yes\nLeap status     : Normal\n1\n"));
        assertEquals(Optional.empty(), TimeSyncStep.synchronisationProblem("no\nLeap status     : Normal\n1\n"));
        assertTrue(TimeSyncStep.synchronisationProblem("no\nLeap status     : Not synchronised\n0\n").orElseThrow().contains("no source selected"));
        assertTrue(TimeSyncStep.synchronisationProblem("no\n0\n").isPresent());
        assertTrue(TimeSyncStep.synchronisationProblem("").isPresent());
    }
}
