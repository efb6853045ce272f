package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Op;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RepairRemediesTest {
    /** Stand-ins for lsmod (listing {@code loaded}), systemctl (persistenced active or not) and modprobe; each logs its call. */
    static void fakeHost(Path dir, List<String> loaded, boolean persistenced, String modprobeRemove) throws Exception {
        StringBuilder lsmod = new StringBuilder("#!/bin/sh\necho 'Module                  Size  Used by'\n");
        loaded.forEach(m -> lsmod.append("echo '").append(m).append("  16384  0'\n"));
        tool(dir, "lsmod", lsmod.toString());
        tool(dir, "systemctl", "#!/bin/sh\ncase \"$1\" in is-active) exit " + (persistenced ? 0 : 3) + ";; esac\necho \"systemctl $*\" >> " + dir + "/log\n");
        tool(dir, "modprobe", "#!/bin/sh\necho \"modprobe $*\" >> " + dir + "/log\n"
            + "if [ \"$1\" = -r ]; then " + modprobeRemove + "; fi\n");
    }

    static void tool(Path dir, String name, String text) throws Exception {
        Path p = dir.resolve(name);
        Files.writeString(p, text);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
    }

    static String log(Path dir) throws Exception {
        return Files.exists(dir.resolve("log")) ? Files.readString(dir.resolve("log")) : "";
    }

    @Test void theModulesAreReloadedUsersFirstWithPersistencedStoppedAndStartedAgain(@TempDir Path dir) throws Exception {
        fakeHost(dir, List.of("nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia", "overlay"), true, "exit 0");
        StringBuilder out = new StringBuilder();
        assertEquals(0, RepairTest.sh(dir, RepairRemedies.reloadCommand(3, 0, "/dev/nvidia*"), out), out::toString);
        assertEquals("systemctl stop nvidia-persistenced\nmodprobe -r nvidia_uvm nvidia_drm nvidia_modeset nvidia\nmodprobe nvidia\n"
            + "modprobe nvidia_modeset\nmodprobe nvidia_drm\nmodprobe nvidia_uvm\nsystemctl start nvidia-persistenced\n", log(dir));
    }

    @Test void onlyTheLoadedModulesAreRemovedAndNvidiaIsAlwaysLoaded(@TempDir Path dir) throws Exception {
        fakeHost(dir, List.of("nvidia_uvm", "nvidia"), false, "exit 0");
        StringBuilder out = new StringBuilder();
        assertEquals(0, RepairTest.sh(dir, RepairRemedies.reloadCommand(3, 0, "/dev/nvidia*"), out), out::toString);
        assertEquals("modprobe -r nvidia_uvm nvidia\nmodprobe nvidia\nmodprobe nvidia_uvm\n", log(dir));

        Files.delete(dir.resolve("log"));
        fakeHost(dir, List.of(), false, "exit 0");
        assertEquals(0, RepairTest.sh(dir, RepairRemedies.reloadCommand(3, 0, "/dev/nvidia*"), new StringBuilder()));
        assertEquals("modprobe nvidia\n", log(dir), "a module not loaded is loaded, never removed");
    }

    @Test void aModuleInUseIsNotReloadedPersistencedRunsAgainAndTheNextStepIsNamed(@TempDir Path dir) throws Exception {
        fakeHost(dir, List.of("nvidia_uvm", "nvidia"), true, "echo 'modprobe: FATAL: Module nvidia is in use.' >&2; exit 1");
        StringBuilder out = new StringBuilder();
        assertEquals(1, RepairTest.sh(dir, RepairRemedies.reloadCommand(3, 0, "/dev/nvidia*"), out), out::toString);
        assertTrue(out.toString().contains("modprobe -r nvidia_uvm nvidia refused: modprobe: FATAL: Module nvidia is in use.;"
            + " the NVIDIA modules not reloaded"), out::toString);
        assertTrue(out.toString().contains("run the repair again with --reboot"), out::toString);
        assertEquals("systemctl stop nvidia-persistenced\nmodprobe -r nvidia_uvm nvidia\nsystemctl start nvidia-persistenced\n", log(dir),
            "nothing loaded after the refusal; persistenced back");
    }

    @Test void aProcessHoldingAGpuDeviceIsWaitedForThenNamedAndNothingIsUnloaded(@TempDir Path dir) throws Exception {
        fakeHost(dir, List.of("nvidia_uvm", "nvidia"), true, "exit 0");
        Path dev = Files.createDirectory(dir.resolve("dev"));
        Files.writeString(dev.resolve("nvidia0"), "");
        // a process with the "device" open for the whole test, as a CUDA process holds /dev/nvidia0
        Process holder = new ProcessBuilder("/bin/sh", "-c", "exec 3<" + dev.resolve("nvidia0") + "; exec sleep 60").start();
        try {
            Path fd = Path.of("/proc/" + holder.pid() + "/fd/3");
            Path comm = Path.of("/proc/" + holder.pid() + "/comm");
            for (int i = 0; i < 200 && !(Files.isSymbolicLink(fd) && Files.readString(comm).strip().equals("sleep")); i++) Thread.sleep(50);
            StringBuilder out = new StringBuilder();
            assertEquals(1, RepairTest.sh(dir, RepairRemedies.reloadCommand(2, 0, dev + "/nvidia*"), out), out::toString);
            assertTrue(out.toString().contains("the GPUs are still held by: " + holder.pid() + " sleep: the NVIDIA modules not reloaded;"
                + " end the processes holding the GPUs, or run the repair again with --reboot"), out::toString);
            assertEquals("systemctl stop nvidia-persistenced\nsystemctl start nvidia-persistenced\n", log(dir), "no modprobe at all; persistenced back");
        } finally {
            holder.destroy();
        }
    }

    @Test void theReloadIsDueOnlyWhileNvidiaSmiReportsTheMismatch() {
        String mismatch = "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.173\n";
        assertTrue(RepairRemedies.driverProblem(new ExecResult(18, mismatch, "")).orElseThrow().contains("Driver/library version mismatch"));
        assertEquals(Optional.empty(), RepairRemedies.driverProblem(new ExecResult(0, "580.173.02\n580.173.02\n", "")));
        assertTrue(RepairRemedies.driverProblem(new ExecResult(9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", ""))
            .orElseThrow().startsWith("nvidia-smi failed (exit 9)"));
    }

    @Test void persistencedsRestartIsProvedByTheUnitAndPersistenceMode() {
        var step = new RepairRemedies.PersistencedRestartStep("w1");
        var ctxless = step.verify(null);
        assertEquals(2, ctxless.size());
        assertEquals(Optional.empty(), ctxless.get(1).judge().apply(new ExecResult(0, "0, Enabled\n1, Enabled\n", ""), null));
        assertTrue(ctxless.get(1).judge().apply(new ExecResult(0, "0, Enabled\n1, Disabled\n", ""), null).orElseThrow().contains("GPU 1 Disabled"));
    }

    static final String LOST_PODS = "default/probe-x w1 DaemonSet 255 Failed to initialize NVML: Unknown Error\n"
        + "default/train-w1-abc w1 Job 255 Failed to initialize NVML: Unknown Error\n"
        + "default/train-w2-abc w2 Job 0 GPU 0: NVIDIA H200 (UUID: GPU-9af2b8b1-7895-b3e8-a303-c9f68d62ff6d)\n";

    @Test void podsThatLostTheirGpus_aControllersPodIsDeleted_aJobsOnlyWithForce() {
        var lost = dev.gpuctl.gpu.DevChar.lostOn(dev.gpuctl.gpu.DevChar.parsePods(LOST_PODS), "w1");
        var step = new RepairRemedies.LostPodsStep("w1", lost, false);
        List<String> ops = step.apply(null).stream().map(o -> ((Op.Run) o).command()).toList();
        assertEquals(1, ops.size(), ops::toString);
        assertTrue(ops.get(0).contains("-n default delete pod probe-x --ignore-not-found --wait=true"), ops::toString);
        assertEquals(2, new RepairRemedies.LostPodsStep("w1", lost, true).apply(null).size());
        String still = RepairRemedies.stillLost(LOST_PODS, "w1").orElseThrow();
        assertTrue(still.startsWith("2 pod(s) on w1 still without their GPUs: default/probe-x, default/train-w1-abc (a Job's pod:"
            + " not deleted without --force"), still);
        assertTrue(still.contains("kubectl delete pod -n default train-w1-abc, or run the repair with --force"), still);
        assertEquals(Optional.empty(), RepairRemedies.stillLost(LOST_PODS, "w2"));
    }
}
