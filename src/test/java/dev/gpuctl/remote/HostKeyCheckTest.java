package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.RemoteException.Kind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.PublicKey;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostKeyCheckTest {
    static final PublicKey ED = TestKeys.publicKey(TestKeys.ED25519_PUB);
    static final PublicKey EC = TestKeys.publicKey(TestKeys.ECDSA_PUB);

    @TempDir Path dir;

    HostKeyCheck check(Path kh, Optional<String> pin, boolean acceptNew) {
        return new HostKeyCheck("w1", "127.0.0.1", 2222, kh, pin, acceptNew);
    }

    @Test
    void unknownKeyIsRefusedWithItsFingerprint() {
        Path kh = dir.resolve("missing/known_hosts");
        HostKeyCheck c = check(kh, Optional.empty(), false);
        assertFalse(c.verify("127.0.0.1", 2222, ED));
        assertEquals(Kind.HOST_KEY_UNKNOWN, c.problem().kind());
        assertTrue(c.problem().getMessage().contains(TestKeys.ED25519_FP), c.problem().getMessage());
        assertFalse(Files.exists(kh), "a refused key must not be written");
    }

    @Test
    void acceptNewAppendsLikeOpenSshAndCreatesPrivateFiles() throws Exception {
        Path kh = dir.resolve("ssh/known_hosts");
        assertTrue(check(kh, Optional.empty(), true).verify("127.0.0.1", 2222, ED));
        assertEquals("[127.0.0.1]:2222 " + TestKeys.ED25519_PUB.substring(0, TestKeys.ED25519_PUB.length() - 2) + "\n",
            Files.readString(kh));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(kh)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(kh.getParent())));
        // now known: accepted without accept-new, and nothing more is appended
        HostKeyCheck strict = check(kh, Optional.empty(), false);
        assertTrue(strict.verify("127.0.0.1", 2222, ED));
        assertNull(strict.problem());
        assertEquals(1, Files.readAllLines(kh).size());
        // an existing file without a final newline keeps its last line intact
        Path other = dir.resolve("other");
        Files.writeString(other, "# mine");
        assertTrue(new HostKeyCheck("w2", "10.1.1.1", 22, other, Optional.empty(), true).verify("10.1.1.1", 22, EC));
        assertEquals("# mine", Files.readAllLines(other).get(0));
        assertTrue(Files.readAllLines(other).get(1).startsWith("10.1.1.1 ecdsa-sha2-nistp256 "));
    }

    @Test
    void changedKeyIsRefusedEvenWithAcceptNewAndShowsBothFingerprints() throws Exception {
        Path kh = dir.resolve("known_hosts");
        Files.writeString(kh, "# comment\n\n[127.0.0.1]:2222 " + TestKeys.ED25519_PUB + "\n");
        PublicKey other = TestKeys.publicKey("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFLXK46biy4MEbwMqmltug26iPCHoLYOVQFY88B4eSi5");
        HostKeyCheck c = check(kh, Optional.empty(), true);
        assertFalse(c.verify("127.0.0.1", 2222, other));
        assertEquals(Kind.HOST_KEY_CHANGED, c.problem().kind());
        String m = c.problem().getMessage();
        assertTrue(m.contains("ED25519 key " + TestKeys.ED25519_FP + " (line 3)"), m);
        assertTrue(m.contains(Fingerprints.sha256(other)), m);
        assertTrue(m.contains("ssh-keygen -R '[127.0.0.1]:2222' -f " + kh), m);
        assertEquals(3, Files.readAllLines(kh).size(), "a changed key must never be appended");
    }

    @Test
    void keyOfAnotherTypeOnRecordIsRefusedToo() throws Exception {
        Path kh = dir.resolve("known_hosts");
        Files.writeString(kh, "[127.0.0.1]:2222 " + TestKeys.ECDSA_PUB + "\n");
        HostKeyCheck c = check(kh, Optional.empty(), true);
        assertFalse(c.verify("127.0.0.1", 2222, ED));
        assertEquals(Kind.HOST_KEY_CHANGED, c.problem().kind());
        assertTrue(c.problem().getMessage().contains(TestKeys.ECDSA_FP));
    }

    @Test
    void hashedEntriesAndOtherPortsAndHosts() throws Exception {
        Path kh = dir.resolve("known_hosts");
        Files.writeString(kh, TestKeys.HASHED_2222 + "\n127.0.0.1 " + TestKeys.ECDSA_PUB + "\n");
        assertTrue(check(kh, Optional.empty(), false).verify("127.0.0.1", 2222, ED));
        // port 22 of the same address is another host to known_hosts: there ECDSA is known, so ED25519 is refused
        HostKeyCheck p22 = new HostKeyCheck("w1", "127.0.0.1", 22, kh, Optional.empty(), false);
        assertFalse(p22.verify("127.0.0.1", 22, ED));
        assertEquals(Kind.HOST_KEY_CHANGED, p22.problem().kind());
        HostKeyCheck elsewhere = new HostKeyCheck("w9", "127.0.0.9", 2222, kh, Optional.empty(), false);
        assertFalse(elsewhere.verify("127.0.0.9", 2222, ED));
        assertEquals(Kind.HOST_KEY_UNKNOWN, elsewhere.problem().kind());
    }

    @Test
    void revokedKeyIsRefused() throws Exception {
        Path kh = dir.resolve("known_hosts");
        Files.writeString(kh, "@revoked * " + TestKeys.ED25519_PUB + "\n[127.0.0.1]:2222 " + TestKeys.ED25519_PUB + "\n");
        HostKeyCheck c = check(kh, Optional.empty(), true);
        assertFalse(c.verify("127.0.0.1", 2222, ED));
        assertTrue(c.problem().getMessage().contains("marked @revoked (line 1)"), c.problem().getMessage());
    }

    @Test
    void pinnedFingerprintDecidesAloneWhenSet() throws Exception {
        Path kh = dir.resolve("known_hosts");
        Files.writeString(kh, "[127.0.0.1]:2222 " + TestKeys.ECDSA_PUB + "\n");
        assertTrue(check(kh, Optional.of(TestKeys.ED25519_FP), false).verify("127.0.0.1", 2222, ED));
        HostKeyCheck bad = check(dir.resolve("none"), Optional.of(TestKeys.ECDSA_FP), true);
        assertFalse(bad.verify("127.0.0.1", 2222, ED));
        assertEquals(Kind.HOST_KEY_CHANGED, bad.problem().kind());
        assertTrue(bad.problem().getMessage().contains("pins hostKey " + TestKeys.ECDSA_FP), bad.problem().getMessage());
        assertTrue(bad.problem().getMessage().contains("offers ED25519 key " + TestKeys.ED25519_FP));
        assertFalse(Files.exists(dir.resolve("none")), "a pinned key never writes known_hosts");
    }
}
