package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** remove-node's and reset's phases, and what the host reset asks and does. */
class NodeLifecycleStepsTest {
    static List<String> ids(Phase p) { return p.steps().stream().map(Step::id).toList(); }

    @Test void removeNodeDrainsThenResetsTheHostThenDeletesTheNodeSoThatItsKubeletCannotRegisterItAgain() {
        List<Phase> phases = NodePhases.removeNodes(List.of("w1"), Duration.ofMinutes(5), false, false);
        assertEquals(List.of("drain", "reset", "delete-node"), phases.stream().map(Phase::id).toList());
        assertEquals(List.of("cordon", "gpu-jobs", "drain"), ids(phases.get(0)));
        assertEquals(List.of("cordon", "drain"), ids(NodePhases.removeNodes(List.of("w1"), Duration.ofMinutes(5), true, false).get(0)), "forced: no wait");
    }

    @Test void resetTakesTheWorkersFirstThenTheMaster() {
        Inventory inv = SchedulableStepTest.inventory(false, false);
        List<Phase> phases = NodePhases.resetCluster(List.of("w1"), "m1", false);
        assertEquals(List.of("reset-workers", "reset-master"), phases.stream().map(Phase::id).toList());
        Step workers = phases.get(0).steps().get(0);
        assertTrue(workers.runsOn(new HostContext(inv, inv.node("w1").orElseThrow())));
        assertFalse(workers.runsOn(new HostContext(inv, inv.master())));
        assertTrue(phases.get(1).steps().get(0).runsOn(new HostContext(inv, inv.master())));
    }

    @Test void restoreHostComesLastOnTheRemovedHostsOrAfterTheMastersResetOnEveryHost() {
        Inventory inv = SchedulableStepTest.inventory(false, false);
        List<Phase> removed = NodePhases.removeNodes(List.of("w1"), Duration.ofMinutes(5), false, true);
        assertEquals(List.of("drain", "reset", "delete-node", "restore-host"), removed.stream().map(Phase::id).toList());
        Step restore = removed.get(3).steps().get(0);
        assertTrue(restore.runsOn(new HostContext(inv, inv.node("w1").orElseThrow())));
        assertFalse(restore.runsOn(new HostContext(inv, inv.master())));
        List<Phase> reset = NodePhases.resetCluster(List.of("w1"), "m1", true);
        assertEquals(List.of("reset-workers", "reset-master", "restore-host"), reset.stream().map(Phase::id).toList());
        assertTrue(reset.get(2).steps().get(0).runsOn(new HostContext(inv, inv.master())));
        assertEquals(List.of("drain", "reset", "delete-node"), NodePhases.removeNodes(List.of("w1"), Duration.ofMinutes(5), false, false)
            .stream().map(Phase::id).toList(), "without --restore-host the preparation stays");
    }

    @Test void theRestoreCheckSaysWhatWouldComeBackAndTheApplyRunsTheScriptItLearns() {
        Inventory inv = SchedulableStepTest.inventory(false, false);
        HostContext w1 = new HostContext(inv, inv.node("w1").orElseThrow());
        RestoreHostStep step = new RestoreHostStep(List.of("w1"));
        Probe p = step.check(w1).get(0);
        String journal = dev.gpuctl.hostfiles.HostJournal.line(new dev.gpuctl.hostfiles.HostJournal.FileCreated("/etc/sysctl.d/k8s.conf")) + "\n";
        String answer = "state present\narchived 0\nbackups \njournal " + java.util.HexFormat.of().formatHex(journal.getBytes()) + "\n";
        assertEquals(Optional.of("would remove /etc/sysctl.d/k8s.conf (gpuctl created it); archive the journal /var/lib/gpuctl/journal"
            + " (/var/lib/gpuctl/journal.restored-TIME)"), p.judge().apply(new ExecResult(0, answer, ""), new Facts()));
        assertEquals(Optional.empty(), p.judge().apply(new ExecResult(0, "state absent\narchived 1\nbackups \njournal \n", ""), new Facts()));
        assertTrue(p.judge().apply(new ExecResult(0, "garbage", ""), new Facts()).orElseThrow().startsWith("could not read the answer"));

        List<Op> ops = step.apply(w1);
        Op.Capture read = (Op.Capture) ops.get(0);
        String script = read.parse().apply(answer).get("restore.w1.script");
        assertTrue(script.contains("rm -f -- /etc/sysctl.d/k8s.conf /etc/sysctl.d/k8s.conf.gpuctl-orig"), script);
        assertTrue(script.contains("mv -fT -- /var/lib/gpuctl/journal /var/lib/gpuctl/journal.restored-"), script);
        assertEquals("{{restore.w1.script}}", ((Op.Run) ops.get(1)).command());
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
