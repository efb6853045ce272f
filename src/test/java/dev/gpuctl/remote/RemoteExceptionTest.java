package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.RemoteException.Kind;
import java.net.ConnectException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RemoteExceptionTest {
    static void contains(RemoteException e, String... parts) {
        for (String p : parts) assertTrue(e.getMessage().contains(p), "'" + p + "' missing in: " + e.getMessage());
    }

    @Test
    void unknownHostKeyShowsFingerprintAndBothWaysOut() {
        RemoteException e = RemoteException.hostKeyUnknown("worker-1", "10.0.0.5", 2222, "ED25519", TestKeys.ED25519_FP,
            Path.of("/home/a/.ssh/known_hosts"));
        assertEquals(Kind.HOST_KEY_UNKNOWN, e.kind());
        assertEquals("worker-1", e.host());
        contains(e, "worker-1: ", "10.0.0.5:2222", "ED25519 key " + TestKeys.ED25519_FP, "Verify it (on the host",
            "--accept-new-host-keys", "/home/a/.ssh/known_hosts", "ssh_host_ed25519_key.pub");
    }

    @Test
    void changedHostKeyShowsBothFingerprintsAndTheKeygenCommand() {
        RemoteException e = RemoteException.hostKeyChanged("master", "10.0.0.5", 2222, "ED25519",
            "ED25519 key " + TestKeys.ED25519_FP + " (line 3)", "/k/known_hosts", "SHA256:offered", Path.of("/k/known_hosts"));
        assertEquals(Kind.HOST_KEY_CHANGED, e.kind());
        contains(e, "master: HOST KEY CHANGED", TestKeys.ED25519_FP, "(line 3)", "SHA256:offered", "Refusing",
            "ssh-keygen -R '[10.0.0.5]:2222' -f /k/known_hosts");
        RemoteException p = RemoteException.pinnedKeyMismatch("master", "10.0.0.5", 22, "ED25519", "SHA256:pinned", "SHA256:offered");
        assertEquals(Kind.HOST_KEY_CHANGED, p.kind());
        contains(p, "pins hostKey SHA256:pinned", "offers ED25519 key SHA256:offered", "update hostKey for master");
    }

    @Test
    void sudoMessageSaysWhatToAllow() {
        RemoteException e = RemoteException.sudoNeedsPassword("w2", "deploy", "sudo: a password is required\n");
        assertEquals(Kind.SUDO_NEEDS_PASSWORD, e.kind());
        contains(e, "w2: user deploy needs a password for sudo", "sudo: a password is required", "allow NOPASSWD for deploy",
            "or use root");
    }

    @Test
    void timeoutNamesTheCommandsFirstLine() {
        RemoteException e = RemoteException.timeout("w1", "apt-get install -y chrony\necho done", Duration.ofSeconds(90));
        assertEquals(Kind.TIMEOUT, e.kind());
        contains(e, "w1: command did not finish within 90s: `apt-get install -y chrony ...`");
        assertEquals("within 5m", RemoteException.timeout("w1", "x", Duration.ofMinutes(5)).getMessage().replaceAll(".*(within \\S+):.*", "$1"));
        assertEquals("`" + "x".repeat(197) + " ...`", RemoteException.shown("x".repeat(500)));
    }

    @Test
    void otherKinds() {
        RemoteException u = RemoteException.unreachable("w1", "10.0.0.7", 22, "connection refused", new ConnectException("x"));
        assertEquals(Kind.UNREACHABLE, u.kind());
        contains(u, "w1: cannot connect to 10.0.0.7:22: connection refused", "sshd listens on port 22");
        RemoteException a = RemoteException.authFailed("w1", "ops", Path.of("/k/id"), "publickey refused", null);
        assertEquals(Kind.AUTH_FAILED, a.kind());
        contains(a, "user ops", "/k/id", "~ops/.ssh/authorized_keys");
        RemoteException l = RemoteException.connectionLost("w1", "kubeadm init", new java.io.IOException("Broken pipe"));
        assertEquals(Kind.CONNECTION_LOST, l.kind());
        contains(l, "`kubeadm init`", "Broken pipe", "may or may not have finished");
    }
}
