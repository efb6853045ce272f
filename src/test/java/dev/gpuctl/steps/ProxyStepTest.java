package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
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
        assertTrue(kubelet.contains("Environment=\"NO_PROXY=registry.lab,localhost,127.0.0.1,::1,.svc,.cluster.local,m,w1,10.0.0.1,gpu1.lab,10.0.0.2,"
            + "10.244.0.0/16,10.96.0.0/12\""), kubelet);
        assertEquals(kubelet, writes(ops, ProxyStep.dropIn("containerd")), "the default runtime is containerd");
        assertTrue(writes(ops, ProxyStep.ENV_FILE).contains("export https_proxy=" + Sh.quote("http://proxy.lab:3128") + "\n"));
        assertTrue(ops.stream().allMatch(o -> !(o instanceof Op.WriteFile w) || w.mode().equals("0644") && !w.secret()));
        Op.Run reload = (Op.Run) ops.get(ops.size() - 1);
        assertEquals(List.of(ProxyStep.APT_FILE, ProxyStep.ENV_FILE, ProxyStep.dropIn("containerd"), ProxyStep.dropIn("kubelet")),
            reload.onlyIfChanged(), "a restart only when a file changed");
        assertEquals(4, new ProxyStep().check(worker(inv)).size());
    }

    @Test void credentialsMakeEveryFilePrivateAndSecret() {
        Inventory inv = inv("  proxy: { https: \"http://ci:s3cret@proxy.lab:3128\" }");
        List<Op> ops = new ProxyStep().apply(worker(inv));
        assertTrue(ops.stream().filter(o -> o instanceof Op.WriteFile).allMatch(o -> ((Op.WriteFile) o).mode().equals("0600")
            && ((Op.WriteFile) o).secret()));
    }

    @Test void withoutAProxyTheStepOnlyRemovesWhatAnEarlierOneWrote() {
        Inventory inv = inv("");
        List<Op> ops = new ProxyStep().apply(worker(inv));
        assertFalse(ops.stream().anyMatch(o -> o instanceof Op.WriteFile));
        Op.Run rm = (Op.Run) ops.get(0);
        assertTrue(rm.command().startsWith("rm -f -- /etc/apt/apt.conf.d/95gpuctl-proxy /etc/gpuctl/proxy.env"), rm.command());
        assertTrue(rm.unless() != null, "skipped when none is there");
        assertEquals(1, new ProxyStep().check(worker(inv)).size());
        assertTrue(HostWrite.CURL.contains(". " + ProxyStep.ENV_FILE), "gpuctl's downloads read the proxy file");
    }
}
