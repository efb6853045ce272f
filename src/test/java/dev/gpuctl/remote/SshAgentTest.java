package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.SshSettings;
import dev.gpuctl.inventory.SshSettings.KeyOrigin;
import dev.gpuctl.remote.RemoteException.Kind;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.Signature;
import java.util.List;
import java.util.Optional;
import net.schmizz.sshj.common.Buffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ssh-agent client and the order of keys, against a real ssh-agent started (and stopped by PID) here. */
class SshAgentTest {
    @TempDir Path dir;
    TestAgent agent;
    Path home;

    @BeforeEach
    void startAgent() throws Exception {
        agent = TestAgent.start(dir);
        home = Files.createDirectories(dir.resolve("home/.ssh")).getParent();
    }

    @AfterEach
    void stopAgent() throws Exception {
        agent.close();
    }

    Path keygen(String type, String name, String passphrase) throws Exception {
        Path f = dir.resolve(name);
        Process p = new ProcessBuilder("ssh-keygen", "-q", "-t", type, "-N", passphrase, "-C", name, "-f", f.toString())
            .redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        assertEquals(0, p.waitFor());
        return f;
    }

    SshSettings settings(Path key, KeyOrigin origin) {
        return new SshSettings("root", 22, key, home.resolve(".ssh/known_hosts"), Optional.empty(), Optional.empty(), origin);
    }

    SshSettings defaults() {
        return settings(home.resolve(".ssh/id_ed25519"), KeyOrigin.DEFAULT);
    }

    static byte[][] sshStrings(byte[] blob, int n) throws Exception {
        Buffer.PlainBuffer b = new Buffer.PlainBuffer(blob);
        byte[][] out = new byte[n][];
        for (int i = 0; i < n; i++) out[i] = b.readBytes();
        return out;
    }

    @Test
    void listsTheAgentsKeysAndSignsWithThem() throws Exception {
        Path ed = keygen("ed25519", "lab-ed", "");
        Path rsa = keygen("rsa", "lab-rsa", "");
        agent.add(ed);
        agent.add(rsa);
        List<SshAgent.Key> keys = SshAgent.keys(agent.socket);
        assertEquals(List.of("ssh-ed25519", "ssh-rsa"), keys.stream().map(SshAgent.Key::type).toList());
        assertEquals(List.of("lab-ed", "lab-rsa"), keys.stream().map(SshAgent.Key::comment).toList());
        assertArrayEquals(SshAgent.publicBlob(Files.readString(dir.resolve("lab-ed.pub"))).orElseThrow(), keys.get(0).blob());

        byte[] data = "session id and request".getBytes(StandardCharsets.UTF_8);
        KeyPair edPair = new SshKeys().load("w1", ed, null);
        byte[][] edSig = sshStrings(keys.get(0).sign(data, "ssh-ed25519"), 2);
        assertEquals("ssh-ed25519", new String(edSig[0], StandardCharsets.US_ASCII));
        Signature verify = Signature.getInstance("Ed25519");
        verify.initVerify(edPair.getPublic());
        verify.update(data);
        assertTrue(verify.verify(edSig[1]), "the agent's ed25519 signature verifies with the file's public key");

        // RSA through the agent is signed with SHA-512 when asked (OpenSSH 8.8+ refuses ssh-rsa's SHA-1)
        KeyPair rsaPair = new SshKeys().load("w1", rsa, null);
        byte[][] rsaSig = sshStrings(keys.get(1).sign(data, "rsa-sha2-512"), 2);
        assertEquals("rsa-sha2-512", new String(rsaSig[0], StandardCharsets.US_ASCII));
        Signature jdk = Signature.getInstance("SHA512withRSA");
        jdk.initVerify(rsaPair.getPublic());
        jdk.update(data);
        assertTrue(jdk.verify(rsaSig[1]));
    }

    @Test
    void noSocketOrADeadOneIsNoAgent() {
        assertEquals(List.of(), SshAgent.keys(dir.resolve("nothing-here.sock")));
    }

    @Test
    void withNoKeyNamedTheAgentsKeysComeBeforeTheDefaultFiles() throws Exception {
        Path inAgent = keygen("ed25519", "in-agent", "");
        agent.add(inAgent);
        Files.copy(keygen("ed25519", "plain", ""), home.resolve(".ssh/id_ed25519"));
        Files.copy(keygen("ecdsa", "plain-ecdsa", ""), home.resolve(".ssh/id_ecdsa"));
        List<SshKeys.Login> logins = new SshKeys().logins("w1", defaults(), null, Optional.of(agent.socket));
        assertEquals(List.of("agent (ssh-ed25519 key 'in-agent')", home.resolve(".ssh/id_ed25519").toString(),
            home.resolve(".ssh/id_ecdsa").toString()), logins.stream().map(SshKeys.Login::source).toList());
    }

    @Test
    void onlyTheAgentNoKeyFileAtAll() throws Exception {
        Path key = keygen("ed25519", "only-agent", "");
        agent.add(key);
        Files.delete(key);
        List<SshKeys.Login> logins = new SshKeys().logins("w1", defaults(), null, Optional.of(agent.socket));
        assertEquals(List.of("agent (ssh-ed25519 key 'only-agent')"), logins.stream().map(SshKeys.Login::source).toList());
    }

    @Test
    void aNamedKeyComesFirstThenTheAgentsKeys() throws Exception {
        agent.add(keygen("ed25519", "other", ""));
        Path named = keygen("ed25519", "named", "");
        for (KeyOrigin origin : List.of(KeyOrigin.INVENTORY, KeyOrigin.SSH_CONFIG)) {
            List<SshKeys.Login> logins = new SshKeys().logins("w1", settings(named, origin), null, Optional.of(agent.socket));
            assertEquals(List.of(named.toString(), "agent (ssh-ed25519 key 'other')"),
                logins.stream().map(SshKeys.Login::source).toList());
        }
    }

    @Test
    void anEncryptedNamedKeyTheAgentHoldsNeedsNoPassphrase() throws Exception {
        Path named = keygen("ed25519", "locked", "secret");
        // ssh-add would ask for the passphrase: add the agent a decrypted copy of the same key instead
        Path copy = dir.resolve("locked-copy");
        Files.copy(named, copy);
        Process p = new ProcessBuilder("ssh-keygen", "-q", "-p", "-P", "secret", "-N", "", "-f", copy.toString())
            .redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        assertEquals(0, p.waitFor());
        agent.add(copy);
        List<SshKeys.Login> logins = new SshKeys().logins("w1", settings(named, KeyOrigin.INVENTORY), null, Optional.of(agent.socket));
        assertEquals(List.of("agent (" + named + ")"), logins.stream().map(SshKeys.Login::source).toList());
        assertTrue(logins.get(0).agentKey().isPresent());

        // without the agent the same key needs its passphrase, and the message says how to use the agent
        RemoteException e = assertThrows(RemoteException.class,
            () -> new SshKeys().logins("w1", settings(named, KeyOrigin.INVENTORY), null, Optional.empty()));
        assertTrue(e.getMessage().contains("ssh-add " + named), e.getMessage());
        assertTrue(e.getMessage().contains("SSH_AUTH_SOCK"), e.getMessage());
    }

    @Test
    void noKeyAnywhereSaysWhereItLooked() {
        RemoteException none = assertThrows(RemoteException.class,
            () -> new SshKeys().logins("w1", defaults(), null, Optional.empty()));
        assertEquals(Kind.AUTH_FAILED, none.kind());
        assertTrue(none.getMessage().contains("w1: no key to log in with"), none.getMessage());
        assertTrue(none.getMessage().contains("SSH_AUTH_SOCK is not set"), none.getMessage());
        assertTrue(none.getMessage().contains(home.resolve(".ssh") + "/id_ed25519, id_ecdsa or id_rsa"), none.getMessage());
        RemoteException empty = assertThrows(RemoteException.class,
            () -> new SshKeys().logins("w1", defaults(), null, Optional.of(agent.socket)));
        assertTrue(empty.getMessage().contains("holds no keys"), empty.getMessage());
    }

    @Test
    void theAgentIsAskedOncePerRun() throws Exception {
        SshKeys keys = new SshKeys();
        assertEquals(List.of(), keys.agentKeys(Optional.of(agent.socket)));
        agent.add(keygen("ed25519", "later", ""));
        assertEquals(List.of(), keys.agentKeys(Optional.of(agent.socket)), "listed once, at the first host");
        assertEquals(1, new SshKeys().agentKeys(Optional.of(agent.socket)).size());
    }
}
