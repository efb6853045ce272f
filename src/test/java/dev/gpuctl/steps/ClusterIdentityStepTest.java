package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.ClusterIdentity;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What the identity probes learn on the master and a worker, and which runs ask them. */
class ClusterIdentityStepTest {
    static final String A = "sha256:5f87f60006b7064ebfb0ec4909df42d1d62936a45faec548484e60e9e2368967";

    static Optional<String> ask(Probe p, ExecResult r, Facts facts) {
        p.learn().apply(r).forEach((k, v) -> facts.put(k, v, false));
        return p.judge().apply(r, facts);
    }

    @Test
    void theMastersCaAndAWorkersKubeletConf() throws Exception {
        String pem = Files.readString(Path.of("src/test/resources/kubeadm/ca-rsa.crt"));
        var inv = GpuHealthStepTest.inv("");
        Facts facts = new Facts();
        Probe master = new ClusterIdentityStep().check(GpuHealthStepTest.ctx(inv, "master")).get(0);
        assertTrue(master.command().contains(ClusterIdentityStep.CA_CRT));
        assertEquals(Optional.empty(), ask(master, new ExecResult(0, pem, ""), facts));
        assertEquals(Optional.of(A), ClusterIdentityStep.masterCa(facts, "master"));
        assertEquals(Optional.empty(), ask(master, new ExecResult(0, "", ""), facts));
        assertEquals(Optional.of("none"), facts.get(ClusterIdentityStep.caFact("master")));
        assertTrue(ask(master, new ExecResult(0, "garbage", ""), facts).orElseThrow().startsWith("cannot read /etc/kubernetes/pki/ca.crt"));

        Probe worker = new ClusterIdentityStep().check(GpuHealthStepTest.ctx(inv, "w1")).get(0);
        assertTrue(worker.command().contains(ClusterIdentityStep.KUBELET_CONF));
        String data = Base64.getEncoder().encodeToString(pem.getBytes(StandardCharsets.US_ASCII));
        assertEquals(Optional.empty(), ask(worker, new ExecResult(0, "server https://10.1.0.1:6443\nca-data " + data + "\n", ""), facts));
        assertEquals(Optional.of(Optional.of(new ClusterIdentity.Joined("https://10.1.0.1:6443", A))), ClusterIdentityStep.joined(facts, "w1"));
        ask(worker, new ExecResult(0, "", ""), facts);
        assertEquals(Optional.of(Optional.empty()), ClusterIdentityStep.joined(facts, "w1"), "asked: joined to none");
        assertEquals(Optional.empty(), ClusterIdentityStep.joined(facts, "cpu"), "not asked");
    }

    @Test
    void onlyARunThatInitsOrJoinsAsks() {
        assertTrue(has(Steps.phases()));
        assertTrue(has(Steps.only(Set.of("init"))));
        assertTrue(has(Steps.only(Set.of("join", "gpu"))));
        assertFalse(has(Steps.only(Set.of("proxy", "time", "swap", "kernel", "runtime", "packages", "driver-hold"))),
            "preparing a wiped master's host before a restore");
        assertTrue(Steps.only(Set.of("swap")).get(0).steps().stream().anyMatch(s -> s instanceof PreflightStep));
    }

    static boolean has(java.util.List<Phase> phases) {
        return phases.get(0).steps().stream().anyMatch(s -> s instanceof ClusterIdentityStep);
    }
}
