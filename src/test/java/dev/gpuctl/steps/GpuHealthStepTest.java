package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.hostfiles.DriverPackages;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
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
        assertEquals(4, new GpuHealthStep().check(ctx(inv(""), "w1")).size());
        var probes = new GpuHealthStep().check(ctx(inv(", gpuDriver: { persistenceMode: true }"), "w1"));
        assertEquals(5, probes.size());
        assertTrue(probes.get(4).what().startsWith("persistence mode on"));
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

    /** Asks the probes in order as the runner does (each one's facts kept before it and the later ones are judged); the last one's answer. */
    static Optional<String> askInOrder(List<Probe> probes, Path bin, Facts facts) throws Exception {
        Optional<String> last = Optional.empty();
        for (Probe p : probes) {
            ExecResult r = sh(p.command(), bin);
            p.learn().apply(r).forEach((k, v) -> facts.put(k, v, false));
            last = p.judge().apply(r, facts);
        }
        return last;
    }

    /** Preflight's one nvidia-smi query on the node (whose answer the driver check reads) followed by the given probes. */
    static List<Probe> afterPreflightQuery(HostContext c, List<Probe> probes) {
        Probe query = new PreflightStep().check(c).stream().filter(p -> p.command().startsWith("nvidia-smi --query-gpu=")).findFirst().orElseThrow();
        return java.util.stream.Stream.concat(java.util.stream.Stream.of(query), probes.stream()).toList();
    }

    @Test
    void healthyH200PassesTheDriverGpuAndMemoryProbes(@TempDir Path dir) throws Exception {
        String list = Files.readString(SMI.resolve("nvidia-smi-L_h200.txt"));
        Path bin = fakeSmi(dir, list, Files.readString(SMI.resolve("nvidia-smi-q-d-ECC-PAGE_RETIREMENT-ROW_REMAPPER_h200.txt")),
            Files.readString(Path.of("src/test/resources/h200/nvidia-smi-query-noheader-nounits.txt")), 0);
        var probes = new GpuHealthStep().check(ctx(inv(""), "w1"));
        assertEquals(Optional.empty(), askInOrder(afterPreflightQuery(ctx(inv(""), "w1"), probes.subList(0, 2)), bin, new Facts()));
        assertEquals(Optional.empty(), ask(probes.get(2), bin));
        assertTrue(new GpuHealthStep().apply(ctx(inv(""), "w1")).isEmpty(), "the health checks change nothing");
    }

    @Test
    void mismatchAndEccErrorsAreFoundThroughTheRealCommands(@TempDir Path dir) throws Exception {
        String ecc = Files.readString(SMI.resolve("nvidia-smi-q-d-ECC-PAGE_RETIREMENT-ROW_REMAPPER_h200.txt"))
            .replace("Remapping Failure Occurred                     : No", "Remapping Failure Occurred                     : Yes");
        String mismatch = "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.173\n";
        Path bin = fakeSmi(dir, mismatch, ecc, mismatch, 18);
        var probes = new GpuHealthStep().check(ctx(inv(""), "w1"));
        String driver = askInOrder(afterPreflightQuery(ctx(inv(""), "w1"), probes.subList(0, 2)), bin, new Facts()).orElseThrow();
        assertTrue(driver.startsWith("Driver/library version mismatch:") && driver.contains("NVML library is 580.173"), driver);
        Path bin2 = fakeSmi(dir, "", ecc, "580.159.04\n", 0);
        assertTrue(ask(probes.get(2), bin2).orElseThrow().contains("a row remapping failed"));
    }

    @Test
    void theDriverProbeJudgesPreflightsNvidiaSmiAnswerAgainstTheLoadedModule() {
        HostContext c = ctx(inv(""), "w1");
        var probes = new GpuHealthStep().check(c);
        Probe module = probes.get(0);
        assertEquals("cat /proc/driver/nvidia/version 2>/dev/null; true", module.command());
        assertEquals(Optional.empty(), module.judge().apply(new ExecResult(0, "", ""), new Facts()), "the module's version alone is no problem");
        String proc = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U22)\n";
        ExecResult procAnswer = new ExecResult(0, proc, "");
        assertEquals(Map.of("gpu.w1.kernelModule", proc), module.learn().apply(procAnswer));
        Probe driver = probes.get(1);
        assertEquals(module.command(), driver.command(), "no nvidia-smi of its own: the batch asks the module's file once for both");
        assertTrue(probes.stream().noneMatch(p -> p.command().contains("driver_version")), "no second nvidia-smi for the driver");

        Probe query = afterPreflightQuery(c, List.of()).get(0);
        String row = "0, NVIDIA H200, GPU-c84ee533-0d1b-b723-49eb-e74b6c7485b2, 143771, %s, Disabled, Default, 00000000:00:06.0\n";
        Facts newer = new Facts();
        query.learn().apply(new ExecResult(0, row.formatted("580.173"), "")).forEach((k, v) -> newer.put(k, v, false));
        assertEquals(Optional.of("the loaded kernel module is 580.159.04 but nvidia-smi reports driver 580.173 — fix: reboot the node"
            + " (drain it first: gpuctl drain HOST)"), driver.judge().apply(procAnswer, newer));
        assertEquals(Optional.empty(), driver.judge().apply(new ExecResult(0, "", ""), newer), "no module loaded: nothing to compare");

        Facts same = new Facts();
        query.learn().apply(new ExecResult(0, row.formatted("580.159.04"), "")).forEach((k, v) -> same.put(k, v, false));
        assertEquals(Optional.empty(), driver.judge().apply(procAnswer, same));

        assertEquals(Optional.of("nvidia-smi on w1 was not asked (see its preflight)"), driver.judge().apply(procAnswer, new Facts()));
    }

    @Test
    void xidProbeFailsOnHardwareXidsAndWarnsOfTheJobsOwn() {
        HostContext c = ctx(inv(""), "w1");
        GpuHealthStep step = new GpuHealthStep();
        Probe xid = step.check(c).get(3);
        assertTrue(xid.command().startsWith("if out=$(journalctl -k -b"));
        Facts facts = new Facts();
        facts.put(PreflightStep.gpuBusFact("w1"), "0 GPU-c84ee533 00000000:44:00.0\n", false);
        String hw = "Dec 03 13:27:50 w1 kernel: NVRM: Xid (PCI:0000:44:00): 79, pid=1234, name=python3, GPU has fallen off the bus.\n";
        String found = judge(xid, new ExecResult(0, hw, ""), facts).orElseThrow();
        assertTrue(found.contains("Xid 79 (GPU has fallen off the bus) at Dec 03 13:27:50 on GPU 0 (GPU-c84ee533, PCI 0000:44:00)"), found);
        assertEquals("", step.warning(xid, facts, "w1"));

        String app = "Dec 03 13:27:50 w1 kernel: NVRM: Xid (PCI:0000:44:00): 13, pid=4242, name=python3, Graphics SM Warp Exception\n";
        assertEquals(Optional.empty(), judge(xid, new ExecResult(0, app, ""), facts));
        String warning = step.warning(xid, facts, "w1");
        assertTrue(warning.contains("Xid 13 (Graphics Engine Exception) at Dec 03 13:27:50 on GPU 0 (GPU-c84ee533, PCI 0000:44:00), by process python3 (pid 4242)"), warning);
        assertEquals("", step.warning(step.check(c).get(2), facts, "w1"), "only the Xid check warns");

        assertEquals(Optional.empty(), judge(xid, new ExecResult(0, "", ""), facts));
        assertEquals("", step.warning(xid, facts, "w1"));
        assertTrue(judge(xid, new ExecResult(1, "", "cannot read the kernel log: x"), facts).orElseThrow().startsWith("exit 1"));
    }

    /** As the runner does: keeps what the answer teaches, then judges it. */
    static Optional<String> judge(Probe p, ExecResult r, Facts facts) {
        p.learn().apply(r).forEach((k, v) -> facts.put(k, v, false));
        return p.judge().apply(r, facts);
    }

    @Test
    void driverHoldProbesAndOps() {
        HostContext c = ctx(inv(", gpuDriver: { holdKernel: true }"), "w1");
        var probes = new DriverHoldStep().check(c);
        assertTrue(probes.get(0).what().contains(DriverPackages.APT_CONF));
        assertEquals(DriverPackages.DPKG_QUERY + " 2>/dev/null", probes.get(1).command());
        assertEquals("apt-mark showhold", probes.get(2).command());
        String installed = "nvidia-driver-emu installed\nlinux-image-amd64 installed\nbash installed\n";
        Map<String, String> learned = probes.get(1).learn().apply(new ExecResult(0, installed, ""));
        assertEquals(Map.of("driverHold.w1.installed", "nvidia-driver-emu linux-image-amd64"), learned);
        assertEquals(Optional.empty(), probes.get(1).judge().apply(new ExecResult(0, installed, ""), new Facts()));
        Facts facts = new Facts();
        learned.forEach((k, v) -> facts.put(k, v, false));
        ExecResult holds = new ExecResult(0, "kubelet\nnvidia-driver-emu\n", "");
        assertEquals(Optional.of("not held: linux-image-amd64 (an apt upgrade would replace the driver under the loaded module)"),
            probes.get(2).judge().apply(holds, facts));
        assertEquals(Optional.empty(), probes.get(2).judge().apply(new ExecResult(0, "linux-image-amd64\nnvidia-driver-emu\n", ""), facts));
        assertEquals(Optional.of("the installed packages are not known (dpkg-query was not asked before)"),
            probes.get(2).judge().apply(holds, new Facts()));
        Facts none = new Facts();
        probes.get(1).learn().apply(new ExecResult(0, "bash installed\n", "")).forEach((k, v) -> none.put(k, v, false));
        assertEquals(Optional.empty(), probes.get(2).judge().apply(holds, none), "no driver package installed: nothing to hold");

        var ops = new DriverHoldStep().apply(c);
        assertEquals(DriverPackages.aptConf(true), ((Op.WriteFile) ops.get(0)).content());
        Op.Capture capture = (Op.Capture) ops.get(1);
        assertEquals(probes.get(1).command(), capture.command());
        assertEquals(learned, capture.parse().apply(installed), "the apply learns what the probe learns, under the same key");
        Op.Run hold = (Op.Run) ops.get(2);
        assertEquals("apt-mark hold {{driverHold.w1.installed}} >/dev/null", hold.command());
        assertEquals("test -z \"{{driverHold.w1.installed}}\"", hold.unless());
    }
}
