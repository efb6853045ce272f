package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** gpuctl certs renew's step: what it runs on the master, in which order, and what proves it done. */
class CertsRenewStepTest {
    static final Instant NOW = Instant.parse("2026-12-04T06:00:00Z");

    static Inventory inventory(Path dir) {
        return InventoryLoader.parse("inv.yaml", """
            cluster: { name: c, kubernetesVersion: "1.35", packages: system, runtime: containerd }
            nodes:
              - { name: m1, address: 10.1.0.1, role: master }
              - { name: w1, address: 10.1.0.2, role: worker }
            """, dir, Map.of("HOME", "/root"));
    }

    @Test void onTheMasterOnlyKubeadmRenewsThenEachStaticPodRestartsInTurnThenTheKubeconfigsAreCopied(@TempDir Path dir) {
        Inventory inv = inventory(dir);
        CertsRenewStep step = new CertsRenewStep(Clock.fixed(NOW, ZoneOffset.UTC));
        assertTrue(step.runsOn(new HostContext(inv, inv.node("m1").orElseThrow())));
        assertTrue(!step.runsOn(new HostContext(inv, inv.node("w1").orElseThrow())));
        List<Op> ops = step.apply(new HostContext(inv, inv.node("m1").orElseThrow()));
        List<String> whats = ops.stream().map(Op::what).toList();
        assertEquals("kubeadm certs renew all", whats.get(0));
        int at = 1;
        for (String pod : CertsRenewStep.STATIC_PODS) {
            assertEquals(List.of("move the " + pod + " manifest out of /etc/kubernetes/manifests", "wait until the kubelet has stopped " + pod,
                "move the " + pod + " manifest back into /etc/kubernetes/manifests",
                "wait until " + pod + " runs again" + (pod.equals("kube-apiserver") ? " and answers /readyz" : "")), whats.subList(at, at + 4));
            assertTrue(ops.get(at + 1) instanceof Op.Await && ops.get(at + 3) instanceof Op.Await, "the waits are the engine's");
            at += 4;
        }
        assertEquals(List.of("admin.conf for the ssh user", "admin.conf rebuilt on this machine"), whats.subList(at, whats.size()));
        Op.FetchKubeconfig fetch = (Op.FetchKubeconfig) ops.get(at + 1);
        assertEquals(inv.localKubeconfig(), fetch.localPath());
        assertEquals(null, fetch.newClusterFact(), "after a renewal, another CA is refused, never adopted");
    }

    @Test void aRestartMovesTheManifestOutWaitsForTheContainerToGoMovesItBackAndWaitsForItAgain() {
        List<Op> ops = CertsRenewStep.restart("kube-apiserver", "unix:///run/containerd/containerd.sock", "https://10.0.0.1:6443");
        String out = ((Op.Run) ops.get(0)).command();
        int putBackFirst = out.indexOf("if [ ! -f /etc/kubernetes/manifests/kube-apiserver.yaml ] && [ -f /etc/kubernetes/gpuctl-restart/kube-apiserver.yaml ]");
        int aside = out.indexOf("mv -f /etc/kubernetes/manifests/kube-apiserver.yaml /etc/kubernetes/gpuctl-restart/kube-apiserver.yaml");
        assertTrue(putBackFirst >= 0 && putBackFirst < aside, out);
        assertTrue(!out.contains("while") && !out.contains("sleep"), "no wait in the shell: " + out);

        Op.Await gone = (Op.Await) ops.get(1);
        assertTrue(gone.until().command().contains("crictl --runtime-endpoint unix:///run/containerd/containerd.sock ps --name '^kube-apiserver$' --state running -q"));
        assertEquals(Optional.of("kube-apiserver still running after its manifest left /etc/kubernetes/manifests (is the kubelet running?)"),
            gone.until().judge().apply(new ExecResult(0, "running\n", ""), new Facts()));
        assertEquals(Optional.empty(), gone.until().judge().apply(new ExecResult(0, "stopped\n", ""), new Facts()));
        assertEquals(Optional.empty(), gone.until().judge().apply(new ExecResult(0, "no manifest\n", ""), new Facts()), "an external etcd: nothing to wait for");
        assertEquals("if [ -f /etc/kubernetes/gpuctl-restart/kube-apiserver.yaml ]; then mv -f /etc/kubernetes/gpuctl-restart/kube-apiserver.yaml"
            + " /etc/kubernetes/manifests/kube-apiserver.yaml; fi", gone.orElse(), "a pod that does not stop gets its manifest back");
        assertEquals(gone.orElse(), ((Op.Run) ops.get(2)).command());

        Op.Await up = (Op.Await) ops.get(3);
        assertTrue(up.until().command().contains("get --raw=/readyz"), up.until().command());
        assertEquals(Optional.empty(), up.until().judge().apply(new ExecResult(0, "restarted\n", ""), new Facts()));
        assertTrue(up.until().judge().apply(new ExecResult(0, "not ready (/readyz)\n", ""), new Facts()).orElseThrow()
            .startsWith("kube-apiserver not ready (/readyz) since its manifest returned"));
        assertEquals(120, up.until().waitUpTo().toSeconds());
        assertTrue(CertsRenewStep.restart("etcd", "unix:///x", "https://10.0.0.1:6443").stream().noneMatch(o -> o instanceof Op.Await a && a.until().command().contains("readyz")),
            "only the API server answers /readyz");
    }

    @Test void doneMeansNoControlPlaneCertificateWithinThirtyDaysCasAndExternalOnesAside() {
        String table = """
            CERTIFICATE                EXPIRES                  RESIDUAL TIME   CERTIFICATE AUTHORITY   EXTERNALLY MANAGED
            admin.conf                 Dec 04, 2027 05:49 UTC   364d            ca                      no
            apiserver                  Dec 14, 2026 06:01 UTC   10d             ca                      no
            front-proxy-client         Dec 10, 2026 05:49 UTC   6d              front-proxy-ca          yes

            CERTIFICATE AUTHORITY   EXPIRES                  RESIDUAL TIME   EXTERNALLY MANAGED
            ca                      Dec 20, 2026 05:49 UTC   16d             no
            """;
        assertEquals(Optional.of("apiserver (control-plane certificate) expires 2026-12-14 06:01 UTC, in 10 days"), CertsRenewStep.notRenewed(table, NOW));
        assertEquals(Optional.empty(), CertsRenewStep.notRenewed(table.replace("Dec 14, 2026 06:01 UTC", "Dec 04, 2027 06:01 UTC"), NOW));
    }
}
