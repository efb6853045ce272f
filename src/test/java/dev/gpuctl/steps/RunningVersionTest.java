package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Bootstrap never changes a running cluster's version: the running minor must be the inventory's. */
class RunningVersionTest {
    /** The image lines of kubeadm's kube-apiserver.yaml (what the probe's sed prints). */
    @Test void theControlPlanesVersionIsKubeApiserversImageTag() {
        assertEquals(Optional.of("v1.34.2"), PreflightStep.imageVersion("registry.k8s.io/kube-apiserver:v1.34.2\n"));
        assertEquals(Optional.of("v1.35.0"), PreflightStep.imageVersion("  \"mirror.lab:5000/k8s/kube-apiserver:v1.35.0\"\n"));
        assertEquals(Optional.of("v1.35.1"), PreflightStep.imageVersion("registry.k8s.io/kube-apiserver:v1.35.1@sha256:abc\n"));
        assertEquals(Optional.empty(), PreflightStep.imageVersion(""), "no cluster yet");
        assertEquals(Optional.of("v1.34.2"), PreflightStep.kubeletVersion("Kubernetes v1.34.2\n"));
        assertEquals(Optional.empty(), PreflightStep.kubeletVersion(""));
    }

    @Test void aNewerInventoryIsAnUpgradeForKubeadmAndAnOlderOneADowngradeRefused() {
        assertEquals(Optional.empty(), PreflightStep.versionProblem("1.35", Optional.of("v1.35.1"), "the cluster runs"));
        assertEquals(Optional.empty(), PreflightStep.versionProblem("1.35", Optional.empty(), "the cluster runs"));
        String up = PreflightStep.versionProblem("1.35", Optional.of("v1.34.2"), "the cluster runs").orElseThrow();
        assertTrue(up.startsWith("the cluster runs v1.34.2; the inventory asks for 1.35: run `gpuctl upgrade`"), up);
        assertTrue(up.contains("bootstrap never changes a running cluster's version") && up.endsWith("or set cluster.kubernetesVersion: \"1.34\""), up);
        String down = PreflightStep.versionProblem("1.34", Optional.of("v1.35.0"), "the kubelet here is").orElseThrow();
        assertEquals("the kubelet here is v1.35.0, newer than the inventory's 1.34: a downgrade is refused; set"
            + " cluster.kubernetesVersion: \"1.35\" in the inventory", down);
        assertTrue(PreflightStep.versionProblem("1.35", Optional.of("v1.9.0"), "x").orElseThrow().contains("asks for 1.35"),
            "compared as numbers, not text");
        assertTrue(PreflightStep.versionProblem("1.9", Optional.of("v1.35.0"), "x").orElseThrow().contains("a downgrade"));
    }
}
