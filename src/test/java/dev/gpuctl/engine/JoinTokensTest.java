package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.Kubeadm;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

public class JoinTokensTest {
    public static final String HASH = "sha256:" + "ab".repeat(32);
    public static final String CACHED = "kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "
        + HASH + " --cri-socket unix:///var/run/cri-dockerd.sock";
    public static final Instant NOW = Instant.parse("2026-12-02T12:00:00Z");

    public static String list(String token, String expires) {
        return "{\"kind\":\"BootstrapToken\",\"apiVersion\":\"output.kubeadm.k8s.io/v1alpha3\",\"token\":\"" + token
            + "\",\"description\":\"gpuctl join-token\",\"expires\":\"" + expires
            + "\",\"usages\":[\"authentication\",\"signing\"],\"groups\":[\"system:bootstrappers:kubeadm:default-node-token\"]}\n";
    }

    @Test void joinCommandCarriesTheCriSocket() {
        var j = Kubeadm.parseJoinCommand("kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash " + HASH + " \n");
        assertEquals(CACHED, JoinTokens.joinCommand(j, "unix:///var/run/cri-dockerd.sock"));
    }

    @Test void validWhileTheMasterHoldsAnUnexpiredToken() {
        assertEquals(Optional.empty(), JoinTokens.invalidReason(CACHED, list("abcdef.0123456789abcdef", "2026-12-02T13:00:00Z"), NOW));
    }

    @Test void expiredDeletedOrAboutToExpire() {
        assertTrue(JoinTokens.invalidReason(CACHED, list("abcdef.0123456789abcdef", "2026-12-02T11:00:00Z"), NOW).orElseThrow().contains("expired"));
        assertTrue(JoinTokens.invalidReason(CACHED, list("abcdef.0123456789abcdef", "2026-12-02T12:00:30Z"), NOW).orElseThrow().contains("expired"));
        assertTrue(JoinTokens.invalidReason(CACHED, list("zzzzzz.0123456789abcdef", "2026-12-02T13:00:00Z"), NOW).orElseThrow().contains("no longer on the master"));
        assertTrue(JoinTokens.invalidReason(CACHED, "", NOW).orElseThrow().contains("no longer on the master"));
        assertTrue(JoinTokens.invalidReason("garbage", "", NOW).orElseThrow().contains("cannot be read"));
    }
}
