package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** kube-apiserver's image tag and version from the manifest's image lines. */
class ApiServerImageTest {
    @Test void theTagAndItsVersionFromTheImageLines() {
        ApiServerImage a = ApiServerImage.parse("registry.k8s.io/kube-apiserver:v1.34.2\n");
        assertEquals(Optional.of("v1.34.2"), a.tag());
        assertEquals(KubeVersion.parse("1.34.2"), a.version());
        assertEquals(Optional.of("v1.35.1"), ApiServerImage.parse("  \"mirror.lab:5000/k8s/kube-apiserver:v1.35.1@sha256:abc\"\n").tag());
    }

    @Test void noApiServerLineOrATagGpuctlDoesNotCompareGivesNoVersion() {
        assertEquals(Optional.empty(), ApiServerImage.parse("").tag());
        assertEquals(Optional.empty(), ApiServerImage.parse("registry.k8s.io/etcd:3.5.15-0\n").version());
        ApiServerImage rc = ApiServerImage.parse("registry.k8s.io/kube-apiserver:v1.35.0-rc.1\n");
        assertEquals(Optional.of("v1.35.0-rc.1"), rc.tag());
        assertEquals(Optional.empty(), rc.version());
    }
}
