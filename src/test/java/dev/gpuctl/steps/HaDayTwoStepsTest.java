package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.KubeVersion;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Day 2 on a control plane of several masters: who runs what, the readiness refusal, the etcd health and member choice. */
class HaDayTwoStepsTest {
    static final Inventory HA = InventoryLoader.parse("inv.yaml", "cluster: { name: c, kubernetesVersion: \"1.35\", packages: system,"
        + " controlPlaneEndpoint: { vip: 10.1.0.100 } }\nnodes:\n"
        + "  - { name: m1, address: 10.1.0.11, role: master, gpu: false }\n"
        + "  - { name: m2, address: 10.1.0.12, role: master, gpu: false }\n"
        + "  - { name: m3, address: 10.1.0.13, role: master, gpu: false }\n"
        + "  - { name: w1, address: 10.1.0.21, role: worker, gpu: false }\n", Path.of("."), Map.of("HOME", "/root"));
    static final KubeVersion V135 = KubeVersion.parse("1.35").orElseThrow();

    static Node node(String name) { return HA.node(name).orElseThrow(); }

    static List<String> hosts(Step step) {
        return HA.nodes().stream().filter(n -> step.runsOn(new HostContext(HA, n))).map(Node::name).toList();
    }

    @Test void theClusterWideStepsRunOnTheFirstMasterOnly() {
        assertEquals(List.of("m1"), hosts(new ControlPlaneUpgradeStep(V135)), "kubeadm upgrade apply once");
        assertEquals(List.of("m1"), hosts(new NodeBackStep(node("m2"), V135)));
        assertEquals(List.of("m1"), hosts(new KubeconfigsStep()));
        assertEquals(List.of("m1"), hosts(new CertsRenewStep()));
        assertEquals(List.of("m2"), hosts(CertsRenewStep.on("m2")));
        assertEquals(List.of("m3"), hosts(new ControlPlaneNodeUpgradeStep(V135, node("m3"))));
        for (Step s : NodePhases.drain(List.of("m2"), java.time.Duration.ofSeconds(5), false).steps()) assertEquals(List.of("m1"), hosts(s), s.id());
        assertEquals(List.of("m1"), hosts(BackupStep.phase(Path.of("/tmp/b.tar.gz")).steps().get(0)), "upgrade's backup on the first master");
    }

    @Test void upgradeNodeOnAnotherMasterWaitsForItsOwnApiServerNotTheVip() {
        ControlPlaneNodeUpgradeStep step = new ControlPlaneNodeUpgradeStep(V135, node("m2"));
        HostContext ctx = new HostContext(HA, node("m2"));
        assertEquals(List.of("kubeadm upgrade node"), step.apply(ctx).stream().map(o -> ((Op.Run) o).command()).toList());
        Probe own = step.verify(ctx).get(1);
        assertTrue(own.command().contains("--server=https://10.1.0.12:6443 version -o json"), own.command());
        assertEquals(Optional.empty(), own.judge().apply(new ExecResult(0,
            "{\"serverVersion\": {\"major\": \"1\", \"gitVersion\": \"v1.35.1\"}}", ""), new Facts()));
        assertTrue(own.judge().apply(new ExecResult(0, "{\"serverVersion\": {\"gitVersion\": \"v1.34.2\"}}", ""), new Facts()).isPresent());
        assertEquals(Optional.of("kube-apiserver runs v1.34.2, not 1.35"), step.check(ctx).get(0).judge()
            .apply(new ExecResult(0, "registry.k8s.io/kube-apiserver:v1.34.2\n", ""), new Facts()));
    }

    @Test void aMasterGoesDownOnlyWhileEveryOtherMastersApiServerIsReady() {
        Phase p = UpgradeSteps.apiServersReady(HA, node("m2"));
        assertTrue(p.readOnly());
        Step step = p.steps().get(0);
        assertEquals(List.of("m2"), hosts(step));
        List<Probe> probes = step.check(new HostContext(HA, node("m2")));
        assertEquals(2, probes.size());
        assertTrue(probes.get(0).command().endsWith(" https://10.1.0.11:6443/readyz"), probes.get(0).command());
        assertTrue(probes.get(1).command().endsWith(" https://10.1.0.13:6443/readyz"), probes.get(1).command());
        assertEquals(Optional.empty(), probes.get(1).judge().apply(new ExecResult(0, "200", ""), new Facts()));
        assertEquals(Optional.of("m3's API server is not ready (https://10.1.0.13:6443/readyz: no answer (curl exit 7)): m2 is not taken"
                + " down while another master's API server is not ready, so the VIP keeps a healthy backend; bring m3 back (gpuctl verify"
                + " says why) and run upgrade again"),
            probes.get(1).judge().apply(new ExecResult(7, "000", ""), new Facts()));
        assertTrue(UpgradeSteps.notReady(node("m2"), node("m1"), 0, "500").orElseThrow().contains("(https://10.1.0.11:6443/readyz: HTTP 500)"));
    }

    @Test void certsRenewOnAMasterWaitsForItsOwnApiServerAndRefreshesTheCopiesOnTheFirstOnly() {
        HostContext m2 = new HostContext(HA, node("m2"));
        List<Op> ops = CertsRenewStep.on("m2").apply(m2);
        assertTrue(ops.stream().anyMatch(o -> o instanceof Op.Await a
            && a.until().command().contains("--server=https://10.1.0.12:6443 get --raw=/readyz")), ops::toString);
        int onM2 = ops.size();
        int onM1 = CertsRenewStep.on("m1").apply(new HostContext(HA, node("m1"))).size();
        assertTrue(onM1 > onM2, "admin.conf's copies refreshed from the first master only");
        assertFalse(CertsRenewStep.on("m2").verify(m2).stream().anyMatch(p -> p.what().contains("~/.kube/config")));
    }

    @Test void etcdHealthIsReadFromEtcdctlAndTheFirstHealthyMasterIsChosen() {
        assertEquals("healthy", BackupStep.health(0, "https://127.0.0.1:2379 is healthy: successfully committed proposal: took = 1.9ms\n"));
        assertEquals("unhealthy: failed to commit proposal: etcdserver: request timed out", BackupStep.health(1,
            "https://127.0.0.1:2379 is unhealthy: failed to commit proposal: etcdserver: request timed out\nError: unhealthy cluster\n"));
        assertEquals("unhealthy: exit 1, no running etcd container on this master", BackupStep.health(1, "no running etcd container on this master\n"));
        Map<String, String> health = Map.of("m1", "unhealthy: exit 1, Error: context deadline exceeded", "m2", "healthy", "m3", "healthy");
        List<String> masters = List.of("m1", "m2", "m3");
        assertEquals(Optional.of("m2"), BackupStep.chosenMember(masters, m -> Optional.ofNullable(health.get(m))));
        assertEquals(Optional.empty(), BackupStep.chosenMember(masters, m -> Optional.of("unhealthy: x")));
    }

    @Test void theBackupIsTakenOnTheChosenMemberOnlyAndRefusedWhenNoneIsHealthy() {
        Path archive = Path.of("/nonexistent/dir/b.tar.gz");
        List<Phase> phases = BackupStep.haPhases(archive, List.of("m1", "m2", "m3"));
        assertTrue(phases.get(0).readOnly());
        Probe ask = phases.get(0).steps().get(0).check(new HostContext(HA, node("m3"))).get(0);
        assertTrue(ask.command().contains("endpoint health"), ask.command());
        assertEquals(Map.of("backup.etcd.m3", "healthy"), ask.learn().apply(new ExecResult(0, "https://127.0.0.1:2379 is healthy: x\n", "")));
        Step backup = phases.get(1).steps().get(0);
        assertEquals(List.of("m1", "m2", "m3"), hosts(backup));
        Facts facts = new Facts();
        facts.put("backup.etcd.m1", "unhealthy: exit 1, Error: context deadline exceeded", false);
        facts.put("backup.etcd.m2", "healthy", false);
        facts.put("backup.etcd.m3", "healthy", false);
        ExecResult ok = new ExecResult(0, "", "");
        assertEquals(Optional.empty(), backup.check(new HostContext(HA, node("m1"))).get(0).judge().apply(ok, facts), "not chosen: nothing to do");
        assertEquals(Optional.empty(), backup.check(new HostContext(HA, node("m3"))).get(0).judge().apply(ok, facts));
        assertEquals(Optional.of("no backup archive at " + archive + " yet"),
            backup.check(new HostContext(HA, node("m2"))).get(0).judge().apply(ok, facts), "the chosen member takes it");
        Facts none = new Facts();
        for (String m : List.of("m1", "m2", "m3")) none.put("backup.etcd." + m, "unhealthy: etcdserver: request timed out", false);
        assertTrue(backup.check(new HostContext(HA, node("m1"))).get(0).judge().apply(ok, none).orElseThrow()
            .startsWith("no master's etcd member is healthy"));
        assertEquals(Optional.empty(), backup.check(new HostContext(HA, node("m2"))).get(0).judge().apply(ok, none));
        String script = BackupStep.snapshotAndPack("/var/tmp/gpuctl-backup.abcdefgh", "b.tar.gz", "unix:///run/containerd/containerd.sock",
            Optional.of("m2"));
        assertTrue(script.contains("member list") && script.contains(BackupStep.MEMBERS_FILE)
            && script.contains("when the snapshot was taken from m2"), script);
        assertFalse(BackupStep.snapshotAndPack("/var/tmp/gpuctl-backup.abcdefgh", "b.tar.gz", "unix:///x").contains("member list"));
    }
}
