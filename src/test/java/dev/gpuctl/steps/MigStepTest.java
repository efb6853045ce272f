package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.gpu.DevicePluginSharing;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** MIG's preflight question, the step's probes and script, and the device plugin's allocatable per MIG resource. */
class MigStepTest {
    static final Inventory INV = InventoryLoader.parse("inv.yaml", """
        cluster: { name: c, kubernetesVersion: "1.35", runtime: docker, packages: system }
        nodes:
          - { name: master, address: 10.1.0.1, role: master }
          - { name: worker-1, address: 10.1.0.2, role: worker, gpuSharing: { mig: { strategy: single, profile: 1g.18gb } } }
          - { name: worker-2, address: 10.1.0.3, role: worker, gpuSharing: { mig: { strategy: mixed, profile: [3g.71gb, 1g.18gb, 1g.18gb] } } }
          - { name: worker-3, address: 10.1.0.4, role: worker }
        """, Path.of("."), Map.of("HOME", "/root"));

    static HostContext ctx(String node) { return new HostContext(INV, INV.node(node).orElseThrow()); }

    static String res(String path) throws IOException { return Files.readString(Path.of("src/test/resources", path)); }

    static final String H200_MODES = "0, NVIDIA H200, Disabled, Disabled\n";

    /** Asks probes in order as the runner does: each answer's facts kept before it (and the later ones) are judged. */
    static List<Optional<String>> inOrder(List<Probe> probes, Facts facts, ExecResult... answers) {
        List<Optional<String>> out = new java.util.ArrayList<>();
        for (int i = 0; i < probes.size(); i++) {
            probes.get(i).learn().apply(answers[i]).forEach((k, v) -> facts.put(k, v, false));
            out.add(probes.get(i).judge().apply(answers[i], facts));
        }
        return out;
    }

    static ExecResult out(String stdout) { return new ExecResult(0, stdout, ""); }

    @Test void preflightAsksOnlyMigNodesAndLearnsTheProfilesAndLayout() throws IOException {
        assertTrue(MigStep.preflight(ctx("worker-3")).isEmpty());
        assertTrue(MigStep.preflight(ctx("master")).isEmpty());
        List<Probe> ps = MigStep.preflight(ctx("worker-1"));
        assertEquals(List.of(MigStep.MODES, MigStep.PROFILES), ps.stream().map(Probe::command).toList(), "one command each");
        Probe p = ps.get(1);
        assertTrue(new PreflightStep().check(ctx("worker-1")).stream().anyMatch(q -> q.what().equals(p.what())), "preflight asks it");
        Facts f = new Facts();
        ExecResult lgip = out(res("nvidia-smi/nvidia-smi-mig-lgip_h200.txt"));
        assertEquals(List.of(Optional.empty(), Optional.empty()), inOrder(ps, f, out(H200_MODES), lgip));
        assertEquals(H200_MODES, f.get("gpu.worker-1.mig.modes").orElseThrow());
        Map<String, String> learned = p.learn().apply(lgip);
        assertEquals("1g.18gb,1g.18gb,1g.18gb,1g.18gb,1g.18gb,1g.18gb,1g.18gb", learned.get("gpu.worker-1.mig.layout"));
        assertTrue(learned.get("gpu.worker-1.mig.profiles").startsWith("1g.18gb=7,1g.18gb+me=1,1g.35gb=4,"));

        ExecResult none = out("No MIG-supported devices found.\n");
        String why = inOrder(ps, new Facts(), out("0, NVIDIA GeForce RTX 4090, [N/A], [N/A]\n"), none).get(1).orElseThrow();
        assertTrue(why.startsWith("worker-1: MIG is asked for (gpuSharing.mig: single 1g.18gb), but its GPU 0, NVIDIA GeForce RTX 4090,"
            + " does not support MIG"), why);
        assertEquals(Map.of(), p.learn().apply(none));
    }

    static Facts facts() throws IOException {
        Facts f = new Facts();
        for (String n : List.of("worker-1", "worker-2")) {
            inOrder(MigStep.preflight(ctx(n)), f, out(H200_MODES), out(res("nvidia-smi/nvidia-smi-mig-lgip_h200.txt")));
            f.put(GpuStep.gpuCountFact(INV.node(n).orElseThrow()), "1", false);
        }
        return f;
    }

    @Test void checkSaysWhatIsMissingAndNothingWhenTheGpusAreCutAsAsked() throws IOException {
        MigStep step = new MigStep();
        assertTrue(step.runsOn(ctx("worker-1")));
        assertFalse(step.runsOn(ctx("worker-3")));
        assertFalse(step.runsOn(ctx("master")));
        List<Probe> probes = step.check(ctx("worker-1"));
        assertEquals(List.of(MigStep.MODES, MigStep.INSTANCES), probes.stream().map(Probe::command).toList(), "one command each");
        Facts facts = facts();
        ExecResult noInstances = out("No MIG-enabled devices found.\n");
        String disabled = "GPU 0 (NVIDIA H200) has MIG mode Disabled";
        assertEquals(List.of(Optional.of(disabled), Optional.of(disabled)), inOrder(probes, facts, out(H200_MODES), noInstances),
            "the instances' probe judges the mode its step's first probe learned");
        String pending = "GPU 0 (NVIDIA H200) has MIG mode Disabled, Enabled pending: it takes effect once the GPU is reset;"
            + " reboot worker-1 (gpuctl drain worker-1 first), then run gpuctl again";
        assertEquals(Optional.of(pending), inOrder(probes, facts, out("0, NVIDIA H200, Disabled, Enabled\n"), noInstances).get(0));
        ExecResult enabled = out("0, NVIDIA H200, Enabled, Enabled\n");
        ExecResult seven = out(res("nvidia-smi/mig/lgi-h200-7x1g.18gb.txt"));
        assertEquals(List.of(Optional.empty(), Optional.empty()), inOrder(probes, facts, enabled, seven));
        assertEquals(Optional.of("GPU 0 has no GPU instance, expected 7 × 1g.18gb each"),
            inOrder(probes, facts, enabled, out("No GPU instances found: Not Found\n")).get(1));
        assertEquals(Optional.of("GPU 0 has 7 × 1g.18gb, expected 2 × 1g.18gb + 3g.71gb each"),
            inOrder(step.check(ctx("worker-2")), facts, enabled, seven).get(1));
        assertEquals(Optional.of("the GPUs' MIG modes are not known (nvidia-smi mig.mode.current gave no answer)"),
            probes.get(1).judge().apply(seven, new Facts()));
        assertEquals(Optional.of("nvidia-smi reported no GPU's MIG mode: NVIDIA-SMI has failed"),
            probes.get(0).judge().apply(out("NVIDIA-SMI has failed\n"), facts));
    }

    @Test void theScriptRefusesBusyGpusAndPendingModeThenCutsFromTheLearnedLayout() {
        String s = MigStep.script(INV.node("worker-1").orElseThrow());
        assertTrue(s.startsWith("set -e; apps=$(nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader 2>&1)"), s);
        assertTrue(s.contains("changing MIG would end them: gpuctl drain worker-1, then run gpuctl again, then gpuctl uncordon worker-1"));
        assertTrue(s.indexOf("nvidia-smi -i \"$i\" -mig 1") < s.indexOf("MIG mode is not on yet"));
        assertTrue(s.contains("reboot worker-1 (gpuctl drain worker-1 first)"));
        assertTrue(s.endsWith("nvidia-smi mig -i \"$i\" -cgi {{gpu.worker-1.mig.layout}} -C; done"), s);
        List<Op> ops = new MigStep().apply(ctx("worker-1"));
        assertEquals(1, ops.size());
    }

    @Test void thePluginGetsEachNodesMigStrategyAndAllocatableIsCountedPerResource() throws IOException {
        assertEquals(Map.of("nvidia.com/gpu.present", "true", "nvidia.com/device-plugin.config", "mig-single-1g.18gb"),
            GpuStep.labels(INV, INV.node("worker-1").orElseThrow()));
        assertEquals(Map.of("nvidia.com/gpu.present", "true", "nvidia.com/device-plugin.config", "none"),
            GpuStep.labels(INV, INV.node("worker-3").orElseThrow()));
        assertEquals(List.of(DevicePluginSharing.Config.mig("mig-single-1g.18gb", "single"), DevicePluginSharing.Config.mig("mig-mixed-1x3g.71gb-2x1g.18gb", "mixed")),
            GpuStep.sharingConfigs(INV));
        assertEquals("version: v1\nflags:\n  migStrategy: mixed\n", DevicePluginSharing.configFile(DevicePluginSharing.Config.mig("mig-mixed", "mixed")));

        List<Probe> probes = new GpuStep().check(new HostContext(INV, INV.master()));
        Probe w1 = probes.stream().filter(p -> p.what().startsWith("node worker-1 allocatable")).findFirst().orElseThrow();
        Probe w2 = probes.stream().filter(p -> p.what().startsWith("node worker-2 allocatable")).findFirst().orElseThrow();
        assertEquals("node worker-2 allocatable = its MIG instances (mixed 3g.71gb + 2 × 1g.18gb)", w2.what());
        Facts facts = facts();
        String json = GpuStepTest.json("nodes.json");
        String recorded = "\"allocatable\": {\"cpu\": \"64\", \"memory\": \"65746948Ki\", \"nvidia.com/gpu\": \"2\"";
        assertTrue(json.contains(recorded), "the recorded worker-1 advertises 2 GPUs; 7 MIG devices here");
        String out = dev.gpuctl.kube.KubectlPrints.clusterView(
            json.replaceFirst(java.util.regex.Pattern.quote(recorded), java.util.regex.Matcher.quoteReplacement(recorded.replace("\"2\"", "\"7\""))),
            GpuStepTest.json("pods.json"));
        assertEquals(Optional.empty(), w1.judge().apply(new ExecResult(0, out, ""), facts));
        String why = w2.judge().apply(new ExecResult(0, out, ""), facts).orElseThrow();
        assertTrue(why.startsWith("allocatable nvidia.com/mig-1g.18gb is 0, expected 2, nvidia.com/mig-3g.71gb is 0, expected 1"
            + " (1 GPUs cut as mixed 3g.71gb + 2 × 1g.18gb); "), why);
        Facts unknown = new Facts();
        assertEquals(Optional.of("the node's GPUs and MIG profiles are not known (preflight learns them)"),
            w1.judge().apply(new ExecResult(0, out, ""), unknown));
    }
}
