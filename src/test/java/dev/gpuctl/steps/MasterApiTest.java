package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.Kube;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Probe;
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
 * The master's one kubectl for the API server's answer and gpuctl's manifests: the control plane's, the CNI's and the
 * device plugin's checks ask one command (a batch runs it once); its shell run against a kubectl that logs its launches.
 */
class MasterApiTest {
    static final Inventory INV = GpuStepTest.INV;
    static final HostContext MASTER = new HostContext(INV, INV.master());

    @TempDir Path dir;

    @Test void theThreeStepsAskOneCommandThatDiffsBothManifests() {
        Probe api = new ControlPlaneStep().check(MASTER).get(0);
        Probe cni = new CniStep().check(MASTER).get(0);
        Probe plugin = GpuStepTest.probe("device plugin");
        assertEquals(api.command(), cni.command());
        assertEquals(api.command(), plugin.command());
        assertEquals(List.of(CniStep.path(MASTER), GpuStep.path(MASTER)), MasterApi.manifests(MASTER));
        Inventory noGpu = InventoryLoader.parse("inv.yaml", """
            cluster: { name: c, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: 10.1.0.1, role: master }
              - { name: w, address: 10.1.0.2, role: worker, gpu: false }
            """, Path.of("."), Map.of("HOME", "/root"));
        HostContext m = new HostContext(noGpu, noGpu.master());
        assertEquals(List.of(CniStep.path(m)), MasterApi.manifests(m), "no GPU node: no device plugin to diff");
    }

    @Test void answersAreJudgedPerManifestAndTheApiServerAnswersWhenADiffDid() {
        String cni = CniStep.path(MASTER);
        String plugin = GpuStep.path(MASTER);
        var same = MasterApi.Answer.parse("diff 0 " + cni + "\ndiff 0 " + plugin + "\n");
        assertEquals(Optional.empty(), same.apiProblem());
        assertEquals(Optional.empty(), same.manifestProblem(cni));
        assertEquals(Optional.empty(), same.manifestProblem(plugin));

        var edited = MasterApi.Answer.parse("diff 0 " + cni + "\ndiff 1 " + plugin + "\n");
        assertEquals(Optional.empty(), edited.apiProblem(), "a difference is an answer");
        assertEquals(Optional.empty(), edited.manifestProblem(cni));
        assertEquals(Optional.of("the cluster differs from " + plugin), edited.manifestProblem(plugin));

        var fresh = MasterApi.Answer.parse("missing " + cni + "\nmissing " + plugin + "\nreadyz ok\n");
        assertEquals(Optional.empty(), fresh.apiProblem());
        assertEquals(Optional.of(cni + " is not on the master yet"), fresh.manifestProblem(cni));

        var pluginNotYet = MasterApi.Answer.parse("diff 1 " + cni + "\nmissing " + plugin + "\n");
        assertEquals(Optional.empty(), pluginNotYet.apiProblem());
        assertEquals(Optional.of(plugin + " is not on the master yet"), pluginNotYet.manifestProblem(plugin));
        var refused = MasterApi.Answer.parse("diff 2 " + cni + "\nmissing " + plugin + "\n");
        assertEquals(Optional.of("kubectl diff of gpuctl's manifests failed (exit 2): the API server does not answer"), refused.apiProblem());
        assertEquals(Optional.of("kubectl diff failed (exit 2): is the API server up?"), refused.manifestProblem(cni));
        assertTrue(MasterApi.starting(new ExecResult(0, "diff 2 " + cni + "\n", "")), "initialised: worth waiting for");

        var notInit = MasterApi.Answer.parse("no-admin-conf\n");
        assertTrue(notInit.apiProblem().isPresent());
        assertFalse(MasterApi.starting(new ExecResult(0, "no-admin-conf\n", "")), "not initialised: definite");
        assertEquals(Optional.of("got 'connection refused', expected 'ok'"),
            MasterApi.Answer.parse("readyz connection refused\n").apiProblem());
    }

    /** The command run by bash with admin.conf and a kubectl that logs each launch and diffs by a word in the file. */
    private List<String> run(String... files) throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path log = dir.resolve("kubectl.log");
        Files.writeString(bin.resolve("kubectl"), """
            #!/bin/sh
            echo "$*" >> %s
            case "$2" in
              get) echo ok; exit 0 ;;
              diff) shift 2; s=0; while [ $# -gt 0 ]; do [ "$1" = -f ] && shift; grep -q EDITED "$1" && s=1; grep -q BROKEN "$1" && exit 2; shift; done; exit $s ;;
            esac
            exit 3
            """.formatted(log));
        Files.setPosixFilePermissions(bin.resolve("kubectl"), PosixFilePermissions.fromString("rwxr-xr-x"));
        Path admin = dir.resolve("admin.conf");
        Files.writeString(admin, "x");
        String cni = CniStep.path(MASTER);
        String plugin = GpuStep.path(MASTER);
        Path cniFile = dir.resolve("cni.yaml");
        Path pluginFile = dir.resolve("plugin.yaml");
        if (files.length > 0) Files.writeString(cniFile, files[0]);
        if (files.length > 1) Files.writeString(pluginFile, files[1]);
        String command = MasterApi.command(MASTER).replace(Kube.ADMIN_CONF, admin.toString())
            .replace(cni, cniFile.toString()).replace(plugin, pluginFile.toString());
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", command).redirectErrorStream(true);
        pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        Files.writeString(dir.resolve("out.txt"), out);
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    private MasterApi.Answer answer() throws Exception {
        String out = Files.readString(dir.resolve("out.txt"))
            .replace(dir.resolve("cni.yaml").toString(), CniStep.path(MASTER)).replace(dir.resolve("plugin.yaml").toString(), GpuStep.path(MASTER));
        return MasterApi.Answer.parse(out);
    }

    @Test void bothManifestsUnchangedIsOneKubectlProcess() throws Exception {
        List<String> launches = run("kind: A", "kind: B");
        assertEquals(1, launches.size(), launches.toString());
        assertTrue(launches.get(0).matches("--kubeconfig=\\S+ diff -f \\S+cni.yaml -f \\S+plugin.yaml"), launches.toString());
        MasterApi.Answer a = answer();
        assertEquals(Optional.empty(), a.apiProblem());
        assertEquals(Optional.empty(), a.manifestProblem(CniStep.path(MASTER)));
        assertEquals(Optional.empty(), a.manifestProblem(GpuStep.path(MASTER)));
    }

    @Test void anEditedObjectIsFoundAndNamedByItsManifest() throws Exception {
        List<String> launches = run("kind: A", "kind: B EDITED");
        assertEquals(3, launches.size(), "the two together, then each alone to say which: " + launches);
        MasterApi.Answer a = answer();
        assertEquals(Optional.empty(), a.manifestProblem(CniStep.path(MASTER)));
        assertEquals(Optional.of("the cluster differs from " + GpuStep.path(MASTER)), a.manifestProblem(GpuStep.path(MASTER)));
    }

    @Test void aBrokenManifestDoesNotHideTheOtherOnesAnswer() throws Exception {
        run("kind: A", "kind: B BROKEN");
        MasterApi.Answer a = answer();
        assertEquals(Optional.empty(), a.manifestProblem(CniStep.path(MASTER)));
        assertEquals(Optional.of("kubectl diff failed (exit 2): is the API server up?"), a.manifestProblem(GpuStep.path(MASTER)));
        assertEquals(Optional.empty(), a.apiProblem(), "the CNI's diff got an answer");
    }

    @Test void beforeAnyManifestIsPlacedItAsksReadyz() throws Exception {
        List<String> launches = run();
        assertEquals(1, launches.size(), launches.toString());
        assertTrue(launches.get(0).endsWith("get --raw=/readyz"), launches.toString());
        MasterApi.Answer a = answer();
        assertEquals(Optional.of("ok"), a.readyz());
        assertEquals(Optional.of(CniStep.path(MASTER) + " is not on the master yet"), a.manifestProblem(CniStep.path(MASTER)));
    }
}
