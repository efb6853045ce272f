package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.gpu.NvidiaSmi;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Probe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * gpuctl's GPU probes judged on what a real NVIDIA H200 machine answered (src/test/resources/h200/, captured by
 * running gpuctl there with connection: local). The same probe objects run in preflight and verify.
 */
class H200ProbesTest {
    static final Path DIR = Path.of("src/test/resources/h200");

    static String fixture(String name) throws IOException { return Files.readString(DIR.resolve(name)); }

    static HostContext gpuHost() {
        Inventory inv = InventoryLoader.parse("h200.yaml", """
            cluster: { name: h200, kubernetesVersion: "1.35", runtime: containerd, packages: system }
            nodes:
              - { name: h200, address: 127.0.0.1, role: master, gpu: true, connection: local }
            """, Path.of("."), Map.of("HOME", "/root"));
        return new HostContext(inv, inv.master());
    }

    static Probe probe(String what) {
        return new PreflightStep().check(gpuHost()).stream().filter(p -> p.what().startsWith(what)).findFirst().orElseThrow();
    }

    @Test void theQueryGpuctlRunsIsTheOneCaptured() throws IOException {
        String log = fixture("verify-h200.log");
        assertTrue(log.contains("$ " + probe("nvidia-smi answers").command()), "the captured log holds gpuctl's exact command");
    }

    @Test void preflightsGpuCheckPassesAndLearnsCountAndDriver() throws IOException {
        Probe p = probe("nvidia-smi answers");
        ExecResult r = new ExecResult(0, fixture("nvidia-smi-query-noheader-nounits.txt"), "");
        assertEquals(Optional.empty(), p.judge().apply(r, new Facts()));
        Map<String, String> learned = p.learn().apply(r);
        assertEquals(Map.of("gpu.h200.count", "1", "gpu.h200.driver", "580.159.04", "gpu.h200.gpusProblem", "",
            "gpu.h200.gpus", "0:" + NvidiaSmi.parseQuery(fixture("nvidia-smi-query-noheader-nounits.txt")).gpus().get(0).uuid(),
            "gpu.h200.pciBus", "0 GPU-c84ee533-0d1b-b723-49eb-e74b6c7485b2 00000000:00:06.0\n",
            "gpu.h200.nvmlDriver", "0\n580.159.04\n"), learned);
    }

    @Test void gpuHealthsDriverCheckPassesOnTheH200FromPreflightsAnswer() throws IOException {
        Facts facts = new Facts();
        probe("nvidia-smi answers").learn().apply(new ExecResult(0, fixture("nvidia-smi-query-noheader-nounits.txt"), ""))
            .forEach((k, v) -> facts.put(k, v, false));
        Probe driver = new GpuHealthStep().check(gpuHost()).get(1);
        assertEquals(Optional.empty(), driver.judge().apply(new ExecResult(0, fixture("proc-driver-nvidia-version.txt"), ""), facts),
            "module 580.159.04 and preflight's driver_version 580.159.04 agree");
    }

    @Test void theParsersReadEveryCapturedFormat() throws IOException {
        var q = NvidiaSmi.parseQuery(fixture("nvidia-smi-query-noheader-nounits.txt"));
        assertTrue(q.ok());
        assertEquals(1, q.gpus().size());
        var gpu = q.gpus().get(0);
        assertEquals("NVIDIA H200", gpu.name());
        assertEquals(143771L, gpu.memoryTotalMib());
        assertEquals("GPU-c84ee533-0d1b-b723-49eb-e74b6c7485b2", gpu.uuid());
        assertEquals("Disabled", gpu.migMode());
        assertEquals(1, NvidiaSmi.parseList(fixture("nvidia-smi-L.txt")).gpus().size());
        assertEquals(Optional.of("580.159.04"), NvidiaSmi.driverVersion(fixture("proc-driver-nvidia-version.txt")));
    }

    @Test void aDriverThatDoesNotAnswerFailsPreflightWithAnAdvice() {
        Probe p = probe("nvidia-smi answers");
        ExecResult r = new ExecResult(9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            + "Make sure that the latest NVIDIA driver is installed and running.\n", "");
        String problem = p.judge().apply(r, new Facts()).orElseThrow();
        assertTrue(problem.contains("exit 9") && problem.contains("gpu: false"), problem);
    }

    @Test void theMachinesEmptyMachineIdAndMissingIpAreCaught() throws IOException {
        String problem = probe("hostname and machine-id").judge()
            .apply(new ExecResult(0, fixture("hostname-machine-id.txt"), ""), new Facts()).orElseThrow();
        assertTrue(problem.contains("/etc/machine-id is empty"), problem);
        String ip = probe("interface addresses").judge()
            .apply(new ExecResult(127, "", "sh: 1: ip: not found\n"), new Facts()).orElseThrow();
        assertTrue(ip.contains("install iproute2"), ip);
        assertEquals(Optional.empty(), probe("cgroup v2").judge().apply(new ExecResult(0, fixture("stat-cgroup.txt"), ""), new Facts()));
    }
}
