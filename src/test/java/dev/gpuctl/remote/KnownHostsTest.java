package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.RemoteException.Kind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** known_hosts with OpenSSH's semantics (sshd(8), SSH_KNOWN_HOSTS FILE FORMAT), and pinned fingerprints. */
class KnownHostsTest {
    static final PublicKey ED = TestKeys.publicKey(TestKeys.ED25519_PUB);
    static final String ED_KEY = TestKeys.ED25519_PUB.substring(0, TestKeys.ED25519_PUB.length() - 2);
    static final String OTHER = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFLXK46biy4MEbwMqmltug26iPCHoLYOVQFY88B4eSi5";

    @TempDir Path dir;

    /** Whether a host at address:port is trusted with the ED key by this known_hosts text (strict, no accept-new). */
    HostKeyCheck check(String knownHosts, String address, int port) throws Exception {
        Path kh = dir.resolve("known_hosts");
        Files.writeString(kh, knownHosts);
        HostKeyCheck c = new HostKeyCheck("h", address, port, kh, Optional.empty(), false);
        c.verify(address, port, ED);
        return c;
    }

    boolean trusted(String knownHosts, String address, int port) throws Exception {
        return check(knownHosts, address, port).problem() == null;
    }

    @Test void wildcardsStarAndQuestionMark() throws Exception {
        assertTrue(trusted("*.lab.example " + ED_KEY + "\n", "gpu1.lab.example", 22));
        assertTrue(trusted("gpu?.lab.example " + ED_KEY + "\n", "gpu7.lab.example", 22));
        assertFalse(trusted("gpu?.lab.example " + ED_KEY + "\n", "gpu10.lab.example", 22));
        assertTrue(trusted("10.0.0.* " + ED_KEY + "\n", "10.0.0.12", 22));
        assertTrue(KnownHosts.wildcard("*", ""));
        assertTrue(KnownHosts.wildcard("a*b*c", "axxbyyc"));
        assertFalse(KnownHosts.wildcard("a*b*c", "axxbyy"));
    }

    @Test void aNegatedPatternExcludesTheHostWhateverTheOthersSay() throws Exception {
        String line = "*.lab.example,!bastion.lab.example " + ED_KEY + "\n";
        assertTrue(trusted(line, "gpu1.lab.example", 22));
        HostKeyCheck c = check(line, "bastion.lab.example", 22);
        assertEquals(Kind.HOST_KEY_UNKNOWN, c.problem().kind(), "a negated host is not known by that line");
        assertFalse(KnownHosts.matches("!gpu1", "gpu1"));
        assertFalse(KnownHosts.matches("!gpu1", "gpu2"), "only negations: no positive match");
    }

    @Test void namesAreComparedCaseInsensitively() throws Exception {
        assertTrue(trusted("GPU1.Lab.Example " + ED_KEY + "\n", "gpu1.lab.example", 22));
        assertTrue(trusted("gpu1.lab.example " + ED_KEY + "\n", "GPU1.LAB.EXAMPLE", 22));
        // hashed names hold the lower-case name, as OpenSSH hashes it
        String hashed = "|1|R8FsVVlirSCpSoBDayjrWd9xucs=|h8WPp1G+c2jpt2m18YXduUECe+E=";
        assertTrue(KnownHosts.matches(hashed, "Gpu-Node.LAB"));
        assertFalse(KnownHosts.matches(hashed, "gpu-node.lab2"));
    }

    @Test void hashedNamesAndPortsInBrackets() throws Exception {
        assertTrue(trusted(TestKeys.HASHED_2222 + "\n", "127.0.0.1", 2222));
        assertEquals(Kind.HOST_KEY_UNKNOWN, check(TestKeys.HASHED_2222 + "\n", "127.0.0.1", 22).problem().kind());
        assertTrue(trusted("[gpu1.lab]:2222 " + ED_KEY + "\n", "gpu1.lab", 2222));
        assertTrue(trusted("[gpu*.lab]:2222 " + ED_KEY + "\n", "gpu1.lab", 2222));
        assertEquals(Kind.HOST_KEY_UNKNOWN, check("gpu1.lab " + ED_KEY + "\n", "gpu1.lab", 2222).problem().kind(),
            "a plain name is port 22 only");
        assertEquals(Kind.HOST_KEY_UNKNOWN, check("[gpu1.lab]:2222 " + ED_KEY + "\n", "gpu1.lab", 22).problem().kind());
    }

    @Test void aRevokedKeyIsRefusedEvenWhenAlsoListedAndCertAuthorityLinesVouchForNothing() throws Exception {
        HostKeyCheck revoked = check("gpu1.lab " + ED_KEY + "\n@revoked other.host " + ED_KEY + "\n", "gpu1.lab", 22);
        assertEquals(Kind.HOST_KEY_CHANGED, revoked.problem().kind());
        assertTrue(revoked.problem().getMessage().contains("marked @revoked (line 2)"), revoked.problem().getMessage());
        HostKeyCheck ca = check("@cert-authority *.lab " + ED_KEY + "\n", "gpu1.lab", 22);
        assertEquals(Kind.HOST_KEY_UNKNOWN, ca.problem().kind(), "a CA key is not the host's key");
        // a CA line for the host is not "another key on record" either: an unknown key, not a changed one
        assertEquals(Kind.HOST_KEY_UNKNOWN, check("@cert-authority gpu1.lab " + OTHER + "\n", "gpu1.lab", 22).problem().kind());
        // a line with a marker OpenSSH does not know is skipped
        assertEquals(Kind.HOST_KEY_UNKNOWN, check("@future gpu1.lab " + ED_KEY + "\n", "gpu1.lab", 22).problem().kind());
    }

    @Test void anotherKeyForAMatchingPatternIsAChangedKeyNamingItsLine() throws Exception {
        HostKeyCheck c = check("# site keys\n*.lab,!gpu2.lab " + OTHER + "\n", "gpu1.lab", 22);
        assertEquals(Kind.HOST_KEY_CHANGED, c.problem().kind());
        assertTrue(c.problem().getMessage().contains("(line 2)"), c.problem().getMessage());
        assertEquals(Kind.HOST_KEY_UNKNOWN, check("*.lab,!gpu2.lab " + OTHER + "\n", "gpu2.lab", 22).problem().kind());
    }

    @Test void theKeyTypesOnRecordFollowTheSameMatching() throws Exception {
        Path kh = dir.resolve("known_hosts");
        Files.writeString(kh, "*.lab,!gpu2.lab " + TestKeys.ECDSA_PUB + "\n");
        assertEquals(java.util.List.of("ecdsa-sha2-nistp256"),
            new HostKeyCheck("h", "gpu1.lab", 22, kh, Optional.empty(), false).findExistingAlgorithms("gpu1.lab", 22));
        assertEquals(java.util.List.of(),
            new HostKeyCheck("h", "gpu2.lab", 22, kh, Optional.empty(), false).findExistingAlgorithms("gpu2.lab", 22));
    }

    @Test void aPinnedFingerprintMatchesWithOrWithoutPrefixAndPadding() {
        String bare = TestKeys.ED25519_FP.substring("SHA256:".length());
        for (String pin : new String[] {TestKeys.ED25519_FP, bare, bare + "=", "sha256:" + bare + "="}) {
            HostKeyCheck c = new HostKeyCheck("h", "10.0.0.1", 22, dir.resolve("none"), Optional.of(pin), false);
            assertTrue(c.verify("10.0.0.1", 22, ED), pin);
        }
        assertFalse(Fingerprints.samePin(bare.toLowerCase(java.util.Locale.ROOT), TestKeys.ED25519_FP), "base64 is case-sensitive");
        assertFalse(new HostKeyCheck("h", "10.0.0.1", 22, dir.resolve("none"), Optional.of(TestKeys.ECDSA_FP), false).verify("10.0.0.1", 22, ED));
    }
}
