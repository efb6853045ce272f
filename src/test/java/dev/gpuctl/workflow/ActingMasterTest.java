package dev.gpuctl.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.gpuctl.engine.LaptopKubeconfigs;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.inventory.Node;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which master a command that needs one healthy master's kubectl uses, and the inventory it then runs on. */
class ActingMasterTest {
    static ActingMaster.Attempt a(String m, ActingMaster.State s, String why) { return new ActingMaster.Attempt(m, s, why); }

    @Test void theFirstMasterThatAnswersWithItsAdminConfIsUsedAndTheOnesBeforeItNamed() {
        ActingMaster.Choice c = ActingMaster.choose(List.of(a("m1", ActingMaster.State.UNREACHABLE, "unreachable (connection refused)"),
            a("m2", ActingMaster.State.NO_CLUSTER, "no /etc/kubernetes/admin.conf"), a("m3", ActingMaster.State.READY, "")));
        assertEquals(Optional.of("m3"), c.master());
        assertEquals(List.of("m1: unreachable (connection refused)", "m2: no /etc/kubernetes/admin.conf"), c.passedOver());
        assertEquals("m1: unreachable (connection refused); m2: no /etc/kubernetes/admin.conf; using m3 (the next master that answers"
            + " with its admin.conf)", ActingMaster.passedOverNote(c));
        ActingMaster.Choice first = ActingMaster.choose(List.of(a("m1", ActingMaster.State.READY, "")));
        assertEquals(Optional.of("m1"), first.master());
        assertEquals("", ActingMaster.passedOverNote(first));
    }

    @Test void whyNoMasterCanAct() {
        assertEquals(Optional.of(ActingMaster.Refusal.UNREACHABLE), ActingMaster.choose(List.of(a("m1", ActingMaster.State.UNREACHABLE, "x"),
            a("m2", ActingMaster.State.UNREACHABLE, "y"), a("m3", ActingMaster.State.UNREACHABLE, "z"))).refusal());
        // the first master answered without admin.conf and none has one: no cluster yet (bootstrap)
        assertEquals(Optional.of(ActingMaster.Refusal.NO_CLUSTER), ActingMaster.choose(List.of(a("m1", ActingMaster.State.NO_CLUSTER, "x"),
            a("m2", ActingMaster.State.UNREACHABLE, "y"), a("m3", ActingMaster.State.NO_CLUSTER, "z"))).refusal());
        // the first master down and the others blank is no "no cluster yet": the cluster is there, unreachable
        assertEquals(Optional.of(ActingMaster.Refusal.FAILED), ActingMaster.choose(List.of(a("m1", ActingMaster.State.UNREACHABLE, "x"),
            a("m2", ActingMaster.State.NO_CLUSTER, "y"), a("m3", ActingMaster.State.FAILED, "z"))).refusal());
        assertEquals(Optional.of(ActingMaster.Refusal.FAILED), ActingMaster.choose(List.of(a("m1", ActingMaster.State.FAILED, "x"))).refusal());
    }

    static Inventory ha(Path dir) throws IOException {
        return InventoryLoader.load(Files.writeString(dir.resolve("inventory.yaml"), """
            cluster: { name: ha, kubernetesVersion: "1.35", controlPlaneEndpoint: { vip: 10.0.0.100 } }
            ssh: { identityFile: /dev/null }
            nodes:
              - { name: m1, address: 10.0.0.11, role: master }
              - { name: w1, address: 10.0.0.21, role: worker }
              - { name: m2, address: 10.0.0.12, role: master }
              - { name: m3, address: 10.0.0.13, role: master }
            """), Map.of());
    }

    @Test void theActingMasterBecomesTheFirstMasterTheEndpointAndTheRestStay(@TempDir Path dir) throws IOException {
        Inventory inv = ha(dir);
        Inventory acting = inv.actingFirst("m3");
        assertEquals("m3", acting.master().name());
        assertEquals(List.of("m3", "m1", "w1", "m2"), acting.nodes().stream().map(Node::name).toList());
        assertEquals(inv.controlPlaneEndpoint(), acting.controlPlaneEndpoint());
        assertSame(inv, inv.actingFirst("m1"));
        // the kubeconfig gpuctl writes names the endpoint, whichever master's admin.conf it was read from
        for (Node m : acting.masters()) {
            assertEquals(Optional.of("https://10.0.0.100:8443"), LaptopKubeconfigs.expectedServer(acting.localKubeconfig(), m, acting.controlPlaneEndpoint()));
        }
    }
}
