package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.EtcdCluster;
import dev.gpuctl.inventory.HaInventory;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A control plane of several masters: verify's control-plane checks, remove-node of a master, reset's order. */
class HaControlPlaneStepsTest {
    static Inventory ha(Path dir) throws IOException {
        return HaInventory.load(dir);
    }

    static HostContext on(Inventory inv, String host) { return new HostContext(inv, inv.node(host).orElseThrow()); }

    static String members(int n) {
        StringBuilder ms = new StringBuilder("{\"header\":{},\"members\":[");
        for (int i = 1; i <= n; i++) {
            ms.append(i > 1 ? "," : "").append("{\"ID\":").append(i).append(",\"name\":\"m").append(i)
                .append("\",\"clientURLs\":[\"https://10.0.0.1").append(i).append(":2379\"]}");
        }
        return ms + "]}";
    }

    static String answer(int n, boolean... healthy) {
        StringBuilder hs = new StringBuilder("[");
        for (int i = 1; i <= n; i++) {
            hs.append(i > 1 ? "," : "").append("{\"endpoint\":\"https://10.0.0.1").append(i).append(":2379\",\"health\":")
                .append(healthy[i - 1]).append("}");
        }
        String status = "[{\"Endpoint\":\"https://10.0.0.11:2379\",\"Status\":{\"header\":{\"member_id\":1},\"leader\":1}}]";
        return EtcdCluster.SECTION + " members\n" + members(n) + "\n" + EtcdCluster.SECTION + " status\n" + status + "\n"
            + EtcdCluster.SECTION + " health\n" + hs + "]\n";
    }

    @Test void removeNodeOfAMasterRemovesItsMemberFromAnotherMasterAfterTheDrainBeforeTheReset(@TempDir Path dir) throws IOException {
        Inventory inv = ha(dir);
        List<Phase> phases = NodePhases.removeNodes(List.of("m1"), List.of("m1"), Duration.ofMinutes(5), false, false);
        assertEquals(List.of("drain", "etcd-member", "reset", "delete-node"), phases.stream().map(Phase::id).toList());
        Step remove = phases.get(1).steps().get(0);
        // the first master leaves: the next one (m2) does the etcdctl and kubectl work; the leaving one never
        assertEquals(List.of("m2"), inv.nodes().stream().filter(n -> remove.runsOn(new HostContext(inv, n))).map(n -> n.name()).toList());
        for (Phase p : List.of(phases.get(0), phases.get(3))) {
            for (Step s : p.steps()) {
                assertEquals(List.of("m2"), inv.nodes().stream().filter(n -> s.runsOn(new HostContext(inv, n))).map(n -> n.name()).toList(), s.id());
            }
        }
        assertTrue(phases.get(2).steps().get(0).runsOn(on(inv, "m1")), "the leaving master is reset");
        // a worker leaves: the first master does the kubectl work, as with one master
        List<Phase> worker = NodePhases.removeNodes(List.of("w1"), Duration.ofMinutes(5), false, false);
        assertTrue(worker.get(0).steps().get(0).runsOn(on(inv, "m1")));
        assertFalse(worker.get(0).steps().get(0).runsOn(on(inv, "m2")), "one master runs kubectl, not each");
    }

    @Test void theMemberRemovalIsDoneOnlyWhileTheRestKeepAQuorumAndNoOtherMasterIsDown(@TempDir Path dir) throws IOException {
        assertEquals(Map.of(EtcdMemberRemoveStep.ID_FACT, "3"), EtcdMemberRemoveStep.memberToRemove(answer(3, true, true, true), "m3"));
        assertEquals(Map.of(EtcdMemberRemoveStep.ID_FACT, ""), EtcdMemberRemoveStep.memberToRemove(answer(2, true, true), "m3"),
            "already gone: nothing to remove");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> EtcdMemberRemoveStep.memberToRemove(answer(3, true, false, true), "m3"));
        assertEquals("refused: another master is down: m2 (2) (etcd: 2 of 3 members healthy, quorum 2); a master is removed only while"
            + " every other master is up. Nothing was changed.", e.getMessage());
        Inventory inv = ha(dir);
        EtcdMemberRemoveStep step = new EtcdMemberRemoveStep("m3");
        Probe p = step.check(on(inv, "m1")).get(0);
        assertEquals(Optional.of("still a member: m3 (3); 3 of 3 members healthy (quorum 2); leader m1"),
            p.judge().apply(new ExecResult(0, answer(3, true, true, true), ""), new Facts()));
        assertEquals(Optional.empty(), p.judge().apply(new ExecResult(0, answer(2, true, true), ""), new Facts()));
        List<Op> ops = step.apply(on(inv, "m1"));
        Op.Run run = (Op.Run) ops.get(1);
        assertTrue(run.command().endsWith("id={{" + EtcdMemberRemoveStep.ID_FACT + "}}; [ -z \"$id\" ] || etcdctl_ member remove \"$id\""),
            run.command());
    }

    @Test void verifyAsksEachMasterForItsMemberTheQuorumItsApiServerAndTheVip(@TempDir Path dir) throws IOException {
        Inventory inv = ha(dir);
        ControlPlaneHaStep step = new ControlPlaneHaStep();
        assertTrue(step.runsOn(on(inv, "m2")));
        assertFalse(step.runsOn(on(inv, "w1")));
        List<Probe> probes = step.check(on(inv, "m3"));
        assertEquals(List.of(ControlPlaneHaStep.QUORUM, ControlPlaneHaStep.MEMBER, ControlPlaneHaStep.API, ControlPlaneHaStep.VIP),
            probes.stream().map(Probe::what).toList());
        assertTrue(probes.get(2).command().startsWith("curl -sk --max-time 5 https://10.0.0.13:6443/readyz"), probes.get(2).command());
        Facts facts = new Facts();
        // m2 down: the quorum holds and the check passes, naming it
        ExecResult oneDown = new ExecResult(0, answer(3, true, false, true), "");
        assertEquals(Optional.empty(), probes.get(0).judge().apply(oneDown, facts));
        assertEquals("2 of 3 members healthy (quorum 2); leader m1; down: m2 (2)", step.detail(probes.get(0), facts, "m3"));
        assertEquals(Optional.empty(), probes.get(1).judge().apply(oneDown, facts));
        assertEquals("member m3 (id 3, https://10.0.0.13:2379), follower, healthy", step.detail(probes.get(1), facts, "m3"));
        // two down: quorum lost
        assertTrue(probes.get(0).judge().apply(new ExecResult(0, answer(3, true, false, false), ""), facts).orElseThrow()
            .startsWith("etcd has 1 of 3 members healthy, needs 2: quorum lost"));
        assertEquals(Optional.of("/readyz answered 'readyz check failed'"),
            probes.get(2).judge().apply(new ExecResult(0, "readyz check failed\n", ""), facts));
        assertEquals(Optional.empty(), probes.get(3).judge().apply(new ExecResult(0, "holder\nok\n", ""), facts));
        assertEquals("holds the VIP", step.detail(probes.get(3), facts, "m3"));
        assertEquals(Optional.of("holds the VIP 10.0.0.100 while its API server is not ready (/readyz: 'readyz check failed')"),
            probes.get(3).judge().apply(new ExecResult(0, "holder\nreadyz check failed\n", ""), facts));
        assertEquals(Optional.empty(), probes.get(3).judge().apply(new ExecResult(0, "backup\n\n", ""), facts), "a backup needs no ready API server");
        assertEquals("does not hold the VIP (backup)", step.detail(probes.get(3), facts, "m3"));
        assertTrue(Steps.verifyPhases().stream().flatMap(p -> p.steps().stream()).anyMatch(s -> s instanceof ControlPlaneHaStep));
        assertFalse(Steps.phases().stream().flatMap(p -> p.steps().stream()).anyMatch(s -> s instanceof ControlPlaneHaStep),
            "bootstrap does not run it");
    }

    @Test void resetTakesTheOtherMastersOneAtATimeThenTheFirst(@TempDir Path dir) throws IOException {
        List<Phase> phases = NodePhases.resetCluster(List.of("w1"), List.of("m1", "m2", "m3"), false);
        assertEquals(List.of("reset-workers", "reset-master-m3", "reset-master-m2", "reset-master"), phases.stream().map(Phase::id).toList());
        Inventory inv = ha(dir);
        assertTrue(phases.get(3).steps().get(0).runsOn(on(inv, "m1")));
        assertFalse(phases.get(3).steps().get(0).runsOn(on(inv, "m2")));
    }
}
