package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
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
        assertEquals(List.of("kubeadm certs renew all", "restart the etcd static pod", "restart the kube-apiserver static pod",
                "restart the kube-controller-manager static pod", "restart the kube-scheduler static pod",
                "admin.conf for the ssh user", "admin.conf rebuilt on this machine"),
            ops.stream().map(Op::what).toList());
        Op.FetchKubeconfig fetch = (Op.FetchKubeconfig) ops.get(6);
        assertEquals(inv.localKubeconfig(), fetch.localPath());
        assertEquals(null, fetch.newClusterFact(), "after a renewal, another CA is refused, never adopted");
    }

    @Test void aRestartMovesTheManifestOutWaitsForTheContainerToGoMovesItBackAndWaitsForItAgain() {
        String s = CertsRenewStep.restart("kube-apiserver", "unix:///run/containerd/containerd.sock");
        int putBackFirst = s.indexOf("if [ ! -f /etc/kubernetes/manifests/kube-apiserver.yaml ] && [ -f /etc/kubernetes/gpuctl-restart/kube-apiserver.yaml ]");
        int out = s.indexOf("mv -f /etc/kubernetes/manifests/kube-apiserver.yaml /etc/kubernetes/gpuctl-restart/kube-apiserver.yaml");
        int gone = s.indexOf("while crictl --runtime-endpoint unix:///run/containerd/containerd.sock ps --name '^kube-apiserver$' --state running -q");
        int back = s.indexOf("mv -f /etc/kubernetes/gpuctl-restart/kube-apiserver.yaml /etc/kubernetes/manifests/kube-apiserver.yaml; i=0; until");
        int ready = s.indexOf("get --raw=/readyz", back);
        assertTrue(putBackFirst >= 0 && putBackFirst < out && out < gone && gone < back && back < ready, s);
        assertTrue(!CertsRenewStep.restart("etcd", "unix:///x").contains("readyz"), "only the API server answers /readyz");
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
