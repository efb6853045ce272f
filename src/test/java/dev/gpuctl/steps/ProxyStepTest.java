package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** cluster.proxy: the files each host gets, their modes, and their removal when the inventory drops it. */
class ProxyStepTest {
    static Inventory inv(String proxy) {
        return InventoryLoader.parse("inv.yaml", """
            cluster:
              name: gpu-lab
              kubernetesVersion: "1.35"
            %s
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
              - { name: w1, address: gpu1.lab, nodeIp: 10.0.0.2, role: worker }
            """.formatted(proxy), Path.of("/srv/lab"), Map.of("HOME", "/home/ops"));
    }

    static HostContext worker(Inventory inv) { return new HostContext(inv, inv.nodes().get(1)); }

    static String writes(List<Op> ops, String path) {
        return ops.stream().filter(o -> o instanceof Op.WriteFile w && w.path().equals(path)).map(o -> ((Op.WriteFile) o).content())
            .findFirst().orElseThrow(() -> new AssertionError("no write of " + path + " in " + ops));
    }

    @Test void theHostGetsAptsFileTheDropInsAndTheDownloadsEnvironmentWithTheClusterKeptDirect() {
        Inventory inv = inv("  proxy: { http: \"http://proxy.lab:3128\", https: \"http://proxy.lab:3128\", noProxy: [registry.lab] }");
        List<Op> ops = new ProxyStep().apply(worker(inv));
        assertEquals("// written by gpuctl from cluster.proxy in the inventory\nAcquire::http::Proxy \"http://proxy.lab:3128\";\n"
            + "Acquire::https::Proxy \"http://proxy.lab:3128\";\n", writes(ops, ProxyStep.APT_FILE));
        String kubelet = writes(ops, ProxyStep.dropIn("kubelet"));
        assertEquals("# written by gpuctl from cluster.proxy in the inventory\n[Service]\nEnvironmentFile=/etc/gpuctl/proxy.env\n", kubelet);
        assertEquals(kubelet, writes(ops, ProxyStep.dropIn("containerd")), "the default runtime is containerd");
        String env = writes(ops, ProxyStep.ENV_FILE);
        assertTrue(env.contains("\nhttps_proxy='http://proxy.lab:3128'\n") && env.contains("\nHTTPS_PROXY='http://proxy.lab:3128'\n"), env);
        assertTrue(env.contains("\nNO_PROXY='registry.lab,localhost,127.0.0.1,::1,.svc,.cluster.local,m,w1,10.0.0.1,gpu1.lab,10.0.0.2,"
            + "10.244.0.0/16,10.96.0.0/12'\n"), env);
        assertTrue(ops.stream().allMatch(o -> !(o instanceof Op.WriteFile w) || w.mode().equals(w.path().equals(ProxyStep.ENV_FILE) ? "0600" : "0644")));
        Op.Run reload = (Op.Run) ops.get(ops.size() - 1);
        assertEquals(List.of(ProxyStep.APT_FILE, ProxyStep.ENV_FILE, ProxyStep.dropIn("containerd"), ProxyStep.dropIn("kubelet")),
            reload.onlyIfChanged(), "a restart only when a file changed");
        assertEquals(5, new ProxyStep().check(worker(inv)).size(), "four files, and the environment file's owner and mode");
    }

    /** A password is only in root's files (0600, never logged); the drop-ins, which systemd shows to anyone, hold none. */
    @Test void aPasswordIsOnlyInRootsFilesNeverInTheDropIns() {
        Inventory inv = inv("  proxy: { https: \"http://ci:s3cret@proxy.lab:3128\" }");
        List<Op> ops = new ProxyStep().apply(worker(inv));
        List<Op.WriteFile> files = ops.stream().filter(o -> o instanceof Op.WriteFile).map(o -> (Op.WriteFile) o).toList();
        assertEquals(4, files.size());
        for (Op.WriteFile f : files) {
            boolean holds = f.content().contains("s3cret");
            assertEquals(f.path().equals(ProxyStep.ENV_FILE) || f.path().equals(ProxyStep.APT_FILE), holds, f.path());
            if (holds) assertTrue(f.mode().equals("0600") && f.secret(), f.path());
            else assertTrue(f.mode().equals("0644") && !f.content().contains("Environment="), f.path());
        }
        Op.Run chmod = ops.stream().filter(o -> o instanceof Op.Run r && r.command().contains("chmod 0600 " + ProxyStep.ENV_FILE))
            .map(o -> (Op.Run) o).findFirst().orElseThrow();
        assertEquals(ProxyStep.envFileIsRoots().command(), chmod.guard().command(), "skipped when the file is already root's 0600");
    }

    @Test void theEnvironmentFilesOwnerAndModeAreChecked() {
        var probe = ProxyStep.envFileIsRoots();
        assertEquals(java.util.Optional.empty(), probe.judge().apply(new dev.gpuctl.remote.ExecResult(0, "regular file 600 root:root\n", ""), new Facts()));
        assertEquals(java.util.Optional.of("/etc/gpuctl/proxy.env is regular file 644 root:root, expected a regular file 600 root:root"),
            probe.judge().apply(new dev.gpuctl.remote.ExecResult(0, "regular file 644 root:root\n", ""), new Facts()));
    }

    @Test void withoutAProxyTheStepOnlyRemovesWhatAnEarlierOneWrote() {
        Inventory inv = inv("");
        List<Op> ops = new ProxyStep().apply(worker(inv));
        assertFalse(ops.stream().anyMatch(o -> o instanceof Op.WriteFile));
        Op.Run rm = (Op.Run) ops.get(0);
        assertTrue(rm.command().startsWith("rm -f -- /etc/apt/apt.conf.d/95gpuctl-proxy /etc/gpuctl/proxy.env"), rm.command());
        assertTrue(rm.unless() != null, "skipped when none is there");
        assertEquals(1, new ProxyStep().check(worker(inv)).size());
        assertTrue(HostWrite.CURL.contains("set -a && . " + ProxyStep.ENV_FILE), "gpuctl's downloads read and export the proxy file");
    }
}
