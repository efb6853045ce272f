package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class FingerprintsTest {
    @Test
    void sha256IsWhatSshKeygenPrints() {
        assertEquals(TestKeys.ED25519_FP, Fingerprints.sha256(TestKeys.publicKey(TestKeys.ED25519_PUB)));
        assertEquals(TestKeys.ECDSA_FP, Fingerprints.sha256(TestKeys.publicKey(TestKeys.ECDSA_PUB)));
    }

    @Test
    void noBase64Padding() {
        // 32 bytes of digest are 43 base64 characters plus one '=' of padding, which OpenSSH leaves off
        String fp = Fingerprints.sha256(new byte[] {1, 2, 3});
        assertTrue(fp.startsWith("SHA256:"));
        assertEquals(7 + 43, fp.length());
        assertFalse(fp.endsWith("="));
    }

    @Test
    void keyOfKnownHostsLines() {
        assertEquals(TestKeys.ED25519_FP, Fingerprints.keyOfLine("host1,10.0.0.1 " + TestKeys.ED25519_PUB).orElseThrow().fingerprint());
        assertEquals(TestKeys.ED25519_FP, Fingerprints.keyOfLine(TestKeys.HASHED_2222).orElseThrow().fingerprint());
        assertEquals("ECDSA", Fingerprints.keyOfLine("@revoked h " + TestKeys.ECDSA_PUB).orElseThrow().label());
        assertTrue(Fingerprints.keyOfLine("# a comment").isEmpty());
        assertTrue(Fingerprints.keyOfLine("").isEmpty());
        assertTrue(Fingerprints.keyOfLine("host ssh-ed25519 !!notbase64!!").isEmpty());
    }

    @Test
    void namesAsOpenSshWritesThem() {
        assertEquals("10.0.0.1", Fingerprints.knownHostsName("10.0.0.1", 22));
        assertEquals("[10.0.0.1]:2222", Fingerprints.knownHostsName("10.0.0.1", 2222));
        assertEquals("10.0.0.1:22", Fingerprints.hostPort("10.0.0.1", 22));
        assertEquals("[fd00::1]:22", Fingerprints.hostPort("fd00::1", 22));
        assertEquals("ED25519", Fingerprints.typeLabel("ssh-ed25519"));
        assertEquals("ECDSA", Fingerprints.typeLabel("ecdsa-sha2-nistp384"));
        assertEquals("RSA", Fingerprints.typeLabel("ssh-rsa"));
    }

    @Test
    void acceptNewLineRoundTrips() {
        String line = Fingerprints.knownHostsLine("127.0.0.1", 2222, TestKeys.publicKey(TestKeys.ED25519_PUB));
        assertEquals("[127.0.0.1]:2222 " + TestKeys.ED25519_PUB.substring(0, TestKeys.ED25519_PUB.length() - 2), line);
    }
}
