package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.hostconf.DriverPackages;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GPU health and driver hold steps: which nodes they run on, and their probes' real shell commands run here
 * against an nvidia-smi that prints the real H200 outputs (src/test/resources/nvidia-smi/) or a fault, then judged.
 */
class GpuHealthStepTest {
    static final Path SMI = Path.of("src/test/resources/nvidia-smi");

    static Inventory inv(String gpuDriver) {
        return InventoryLoader.parse("inv.yaml", "cluster: { name: c, kubernetesVersion: \"1.35\", packages: system" + gpuDriver + " }\n"
            + "nodes:\n  - { name: master, address: 10.1.0.1, role: master }\n  - { name: w1, address: 10.1.0.2, role: worker }\n"
            + "  - { name: cpu, address: 10.1.0.3, role: worker, gpu: false }\n", Path.of("."), Map.of("HOME", "/root"));
    }

    static HostContext ctx(Inventory inv, String node) {
        return new HostContext(inv, inv.nodes().stream().filter(n -> n.name().equals(node)).findFirst().orElseThrow());
    }

    @Test
    void runOnGpuNodesOnlyAndTheHoldCanBeTurnedOff() {
        Inventory inv = inv("");
        assertTrue(new GpuHealthStep().runsOn(ctx(inv, "w1")));
        assertFalse(new GpuHealthStep().runsOn(ctx(inv, "master")));
        assertFalse(new GpuHealthStep().runsOn(ctx(inv, "cpu")));
        assertTrue(new DriverHoldStep().runsOn(ctx(inv, "w1")));
        assertFalse(new DriverHoldStep().runsOn(ctx(inv, "cpu")));
        assertFalse(new DriverHoldStep().runsOn(ctx(inv(", gpuDriver: { hold: false }"), "w1")));
        assertTrue(Steps.ids().containsAll(List.of("driver-hold", "gpu-health")));
    }

    @Test
    void persistenceIsCheckedOnlyWhereTheInventoryAsks() {
        assertEquals(3, new GpuHealthStep().check(ctx(inv(""), "w1")).size());
        var probes = new GpuHealthStep().check(ctx(inv(", gpuDriver: { persistenceMode: true }"), "w1"));
        assertEquals(4, probes.size());
        assertTrue(probes.get(3).what().startsWith("persistence mode on"));
    }

    @Test
    void aWrongInventoryValueIsAnErrorWithItsPlace() {
        var e = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, () -> inv(", gpuDriver: { hold: maybe }"));
        assertTrue(e.getMessage().contains("cluster.gpuDriver.hold: expected true or false"), e.getMessage());
    }

    /** A fake nvidia-smi: prints FILE for -L, -q and --query-gpu from the given map (by first argument), exit code. */
    static Path fakeSmi(Path dir, String list, String q, String driverQuery, int exit) throws IOException {
        Files.writeString(dir.resolve("L"), list);
        Files.writeString(dir.resolve("q"), q);
        Files.writeString(dir.resolve("d"), driverQuery);
        Path smi = dir.resolve("nvidia-smi");
        Files.writeString(smi, "#!/bin/sh\ncase \"$1\" in -L) cat " + dir.resolve("L") + ";; -q) cat " + dir.resolve("q")
            + ";; *) cat " + dir.resolve("d") + ";; esac\nexit " + exit + "\n");
        Files.setPosixFilePermissions(smi, PosixFilePermissions.fromString("rwxr-xr-x"));
        return dir;
    }

    static ExecResult sh(String command, Path bin) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", command);
        pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        Process q = pb.start();
        String out = new String(q.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(q.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new ExecResult(q.waitFor(), out, err);
    }

    static Optional<String> ask(Probe p, Path bin) throws Exception {
        return p.judge().apply(sh(p.command(), bin), new Facts());
    }

    @Test
    void healthyH200PassesTheDriverGpuAndMemoryProbes(@TempDir Path dir) throws Exception {
        String list = Files.readString(SMI.resolve("nvidia-smi-L_h200.txt"));
        Path bin = fakeSmi(dir, list, Files.readString(SMI.resolve("nvidia-smi-q-d-ECC-PAGE_RETIREMENT-ROW_REMAPPER_h200.txt")), "580.159.04\n", 0);
        var probes = new GpuHealthStep().check(ctx(inv(""), "w1"));
        assertEquals(Optional.empty(), ask(probes.get(0), bin));
        assertEquals(Optional.empty(), ask(probes.get(1), bin));
        assertTrue(new GpuHealthStep().apply(ctx(inv(""), "w1")).isEmpty(), "the health checks change nothing");
    }

    @Test
    void mismatchAndEccErrorsAreFoundThroughTheRealCommands(@TempDir Path dir) throws Exception {
        String ecc = Files.readString(SMI.resolve("nvidia-smi-q-d-ECC-PAGE_RETIREMENT-ROW_REMAPPER_h200.txt"))
            .replace("Remapping Failure Occurred                     : No", "Remapping Failure Occurred                     : Yes");
        String mismatch = "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.173\n";
        Path bin = fakeSmi(dir, mismatch, ecc, mismatch, 18);
        var probes = new GpuHealthStep().check(ctx(inv(""), "w1"));
        String driver = ask(probes.get(0), bin).orElseThrow();
        assertTrue(driver.startsWith("Driver/library version mismatch:") && driver.contains("NVML library is 580.173"), driver);
        Path bin2 = fakeSmi(dir, "", ecc, "580.159.04\n", 0);
        assertTrue(ask(probes.get(1), bin2).orElseThrow().contains("a row remapping failed"));
    }

    @Test
    void xidProbeReportsTheCodes() {
        Probe xid = new GpuHealthStep().check(ctx(inv(""), "w1")).get(2);
        assertTrue(xid.command().startsWith("if out=$(journalctl -k -b"));
        String found = xid.judge().apply(new ExecResult(0, "Dec 03 13:27:50 w1 kernel: NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus.\n", ""), new Facts()).orElseThrow();
        assertTrue(found.contains("codes [79]"), found);
        assertEquals(Optional.empty(), xid.judge().apply(new ExecResult(0, "", ""), new Facts()));
        assertTrue(xid.judge().apply(new ExecResult(1, "", "cannot read the kernel log: x"), new Facts()).orElseThrow().startsWith("exit 1"));
    }

    @Test
    void driverHoldProbesAndOps() {
        HostContext c = ctx(inv(", gpuDriver: { holdKernel: true }"), "w1");
        var probes = new DriverHoldStep().check(c);
        String answer = "nvidia-driver-emu installed\nlinux-image-amd64 installed\nbash installed\n@@@\nkubelet\nnvidia-driver-emu\n";
        assertEquals(Optional.of("not held: linux-image-amd64 (an apt upgrade would replace the driver under the loaded module)"),
            probes.get(1).judge().apply(new ExecResult(0, answer, ""), new Facts()));
        assertTrue(probes.get(0).what().contains(DriverPackages.APT_CONF));
        var ops = new DriverHoldStep().apply(c);
        assertEquals(DriverPackages.aptConf(true), ((Op.WriteFile) ops.get(0)).content());
        var facts = ((Op.Capture) ops.get(1)).parse().apply(answer);
        assertEquals(Map.of("driverHold.w1.unheld", "linux-image-amd64"), facts);
        Op.Run hold = (Op.Run) ops.get(2);
        assertEquals("apt-mark hold {{driverHold.w1.unheld}} >/dev/null", hold.command());
        assertEquals("test -z \"{{driverHold.w1.unheld}}\"", hold.unless());
    }
}
