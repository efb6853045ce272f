package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.RemoteException.Kind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import net.schmizz.sshj.userauth.password.PasswordUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SshKeysTest {
    @TempDir Path dir;

    /** A fresh store per test, as each run has its own. */
    private final SshKeys keys = new SshKeys();

    @Test
    void readsAnOpenSshEd25519Key() throws Exception {
        Path id = Files.writeString(dir.resolve("id"), TestKeys.ED25519_PRIVATE);
        KeyPair kp = keys.load("w1", id, SshOptions.consolePassphrase());
        assertEquals(TestKeys.ED25519_FP, Fingerprints.sha256(kp.getPublic()));
    }

    @Test
    void encryptedKeyWithoutATerminalFailsAtOnce() throws Exception {
        Path id = Files.writeString(dir.resolve("id"), TestKeys.ENCRYPTED_PRIVATE);
        // the test JVM has no console: the console finder must answer nothing rather than wait
        RemoteException e = assertThrows(RemoteException.class,
            () -> keys.load("w1", id, SshOptions.consolePassphrase()));
        assertEquals(Kind.AUTH_FAILED, e.kind());
        assertTrue(e.getMessage().contains("protected by a passphrase and there is no terminal"), e.getMessage());
        RemoteException never = assertThrows(RemoteException.class, () -> keys.load("w1", id, null));
        assertTrue(never.getMessage().contains("protected by a passphrase"), never.getMessage());
    }

    @Test
    void encryptedKeyWithItsPassphrase() throws Exception {
        Path id = Files.writeString(dir.resolve("id"), TestKeys.ENCRYPTED_PRIVATE);
        KeyPair kp = keys.load("w1", id, PasswordUtils.createOneOff("secret".toCharArray()));
        assertEquals("ED25519", Fingerprints.blob(kp.getPublic()).label());
        RemoteException wrong = assertThrows(RemoteException.class,
            () -> new SshKeys().load("w1", id, PasswordUtils.createOneOff("nope".toCharArray())));
        assertTrue(wrong.getMessage().contains("wrong passphrase"), wrong.getMessage());
    }

    @Test
    void missingOrJunkFile() throws Exception {
        RemoteException missing = assertThrows(RemoteException.class,
            () -> keys.load("w1", dir.resolve("nope"), null));
        assertEquals(Kind.AUTH_FAILED, missing.kind());
        assertTrue(missing.getMessage().contains("no such file"), missing.getMessage());
        Path junk = Files.writeString(dir.resolve("junk"), "hello\n");
        RemoteException bad = assertThrows(RemoteException.class, () -> keys.load("w1", junk, null));
        assertTrue(bad.getMessage().contains("not an OpenSSH private key"), bad.getMessage());
    }
}
