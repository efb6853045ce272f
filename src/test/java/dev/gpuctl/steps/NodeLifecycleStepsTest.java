package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.ExecResult;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** remove-node's and reset's phases, and what the host reset asks and does. */
class NodeLifecycleStepsTest {
    static List<String> ids(Phase p) { return p.steps().stream().map(Step::id).toList(); }

    @Test void removeNodeDrainsThenResetsTheHostThenDeletesTheNodeSoThatItsKubeletCannotRegisterItAgain() {
        List<Phase> phases = Drain.removeNodes(List.of("w1"), Duration.ofMinutes(5), false);
        assertEquals(List.of("drain", "reset", "delete-node"), phases.stream().map(Phase::id).toList());
        assertEquals(List.of("cordon", "gpu-jobs", "drain"), ids(phases.get(0)));
        assertEquals(List.of("cordon", "drain"), ids(Drain.removeNodes(List.of("w1"), Duration.ofMinutes(5), true).get(0)), "forced: no wait");
    }

    @Test void resetTakesTheWorkersFirstThenTheMaster() {
        Inventory inv = SchedulableStepTest.inventory(false, false);
        List<Phase> phases = Drain.resetCluster(List.of("w1"), "m1");
        assertEquals(List.of("reset-workers", "reset-master"), phases.stream().map(Phase::id).toList());
        Step workers = phases.get(0).steps().get(0);
        assertTrue(workers.runsOn(new HostContext(inv, inv.node("w1").orElseThrow())));
        assertFalse(workers.runsOn(new HostContext(inv, inv.master())));
        assertTrue(phases.get(1).steps().get(0).runsOn(new HostContext(inv, inv.master())));
    }

    @Test void theHostResetUsesTheClustersCriSocketAndJudgesWhatIsLeft() {
        Inventory inv = SchedulableStepTest.inventory(false, false);
        HostContext w1 = new HostContext(inv, inv.node("w1").orElseThrow());
        ResetHostStep step = new ResetHostStep(List.of("w1"));
        Op.Run reset = (Op.Run) step.apply(w1).get(0);
        assertEquals("kubeadm reset -f --cri-socket " + inv.cluster().runtime().criSocket(), reset.command());
        List<Probe> probes = step.check(w1);
        assertEquals(Optional.of("kubelet is active"), probes.get(0).judge().apply(new ExecResult(0, "active\n", ""), new Facts()));
        assertEquals(Optional.empty(), probes.get(0).judge().apply(new ExecResult(0, "inactive\n", ""), new Facts()));
        assertEquals(Optional.of("still there: /etc/kubernetes/kubelet.conf"),
            probes.get(1).judge().apply(new ExecResult(0, "/etc/kubernetes/kubelet.conf\n", ""), new Facts()));
        assertEquals(Optional.of("still there: flannel.1, cni0"), probes.get(3).judge().apply(new ExecResult(0,
            "1: lo: <LOOPBACK> mtu 65536\n3: flannel.1: <BROADCAST> mtu 1450\n4: cni0: <BROADCAST> mtu 1450\n", ""), new Facts()));
        assertEquals(Optional.of("still there: KUBE-FORWARD"), probes.get(4).judge().apply(new ExecResult(0,
            "*filter\n:KUBE-FORWARD - [0:0]\n-A FORWARD -j KUBE-FORWARD\nCOMMIT\n", ""), new Facts()));
        assertEquals(Optional.empty(), probes.get(4).judge().apply(new ExecResult(0, "", ""), new Facts()), "no iptables: nothing left");
    }
}
