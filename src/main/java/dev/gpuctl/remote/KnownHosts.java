package dev.gpuctl.remote;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * known_hosts read with OpenSSH's semantics (sshd(8), "SSH_KNOWN_HOSTS FILE FORMAT"). Pure functions.
 *
 * <p>A line is {@code [@revoked|@cert-authority] hostpatterns keytype base64-key [comment]}. Host patterns are
 * comma-separated; {@code *} and {@code ?} are wildcards; a pattern starting with {@code !} negates: a host that
 * matches it does not match the line, whatever the other patterns say. Names are compared case-insensitively. A
 * host on a port other than 22 is named {@code [host]:port}. A hashed field {@code |1|salt|hash} stands for one
 * name: the base64 HMAC-SHA1 of the name keyed with the salt. {@code @cert-authority} lines hold a CA that signs
 * host certificates: gpuctl accepts plain host keys only, so they never vouch for a host here (and never count as
 * another key on record). {@code @revoked} lines name a key that must never be accepted.
 */
final class KnownHosts {
    private KnownHosts() {}

    enum Marker { NONE, REVOKED, CERT_AUTHORITY }

    /** One usable line: its number in the file (from 1), marker, host field and key. */
    record Line(int number, Marker marker, String hosts, Fingerprints.KeyBlob key) {}

    /** The file's lines that hold a key; comments, blank lines, unknown markers and malformed lines are skipped. */
    static List<Line> parse(String text) {
        List<Line> out = new ArrayList<>();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String l = lines[i].strip();
            if (l.isEmpty() || l.startsWith("#")) continue;
            String[] f = l.split("\\s+");
            Marker marker = Marker.NONE;
            int at = 0;
            if (f[0].startsWith("@")) {
                if (f[0].equals("@revoked")) marker = Marker.REVOKED;
                else if (f[0].equals("@cert-authority")) marker = Marker.CERT_AUTHORITY;
                else continue; // OpenSSH skips a line with a marker it does not know
                at = 1;
            }
            if (f.length < at + 3) continue;
            try {
                out.add(new Line(i + 1, marker, f[at], new Fingerprints.KeyBlob(f[at + 1], Base64.getDecoder().decode(f[at + 2]))));
            } catch (IllegalArgumentException e) {
                // not base64: OpenSSH skips such a line too
            }
        }
        return out;
    }

    /** The name a host has in known_hosts: the address on port 22, else "[address]:port". */
    static String name(String address, int port) {
        return Fingerprints.knownHostsName(address, port);
    }

    /** True when the line's host field names {@code name} ("host" or "[host]:port"), per OpenSSH. */
    static boolean matches(String hostsField, String name) {
        String host = name.toLowerCase(Locale.ROOT);
        if (hostsField.startsWith("|1|")) return hashedMatch(hostsField, host);
        boolean positive = false;
        for (String pattern : hostsField.split(",")) {
            boolean negated = pattern.startsWith("!");
            String p = (negated ? pattern.substring(1) : pattern).toLowerCase(Locale.ROOT);
            if (p.isEmpty() || !wildcard(p, host)) continue;
            if (negated) return false;
            positive = true;
        }
        return positive;
    }

    /** {@code |1|base64(salt)|base64(HMAC-SHA1(salt, name))}, as ssh-keygen -H writes it. */
    static boolean hashedMatch(String field, String name) {
        String[] p = field.split("\\|", -1);
        if (p.length != 4 || !p[1].equals("1")) return false;
        try {
            byte[] salt = Base64.getDecoder().decode(p[2]);
            byte[] expected = Base64.getDecoder().decode(p[3]);
            return MessageDigest.isEqual(hmacSha1(salt, name), expected);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    static byte[] hmacSha1(byte[] salt, String name) {
        try {
            Mac mac = Mac.getInstance("HmacSHA1");
            mac.init(new SecretKeySpec(salt, "HmacSHA1"));
            return mac.doFinal(name.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException(e);
        }
    }

    /** OpenSSH's match_pattern: '*' any run of characters (also none), '?' exactly one; the whole name must match. */
    static boolean wildcard(String pattern, String s) {
        int p = 0;
        int i = 0;
        int star = -1;
        int mark = 0;
        while (i < s.length()) {
            if (p < pattern.length() && (pattern.charAt(p) == '?' || pattern.charAt(p) == s.charAt(i))) {
                p++;
                i++;
            } else if (p < pattern.length() && pattern.charAt(p) == '*') {
                star = p++;
                mark = i;
            } else if (star >= 0) {
                p = star + 1;
                i = ++mark;
            } else {
                return false;
            }
        }
        while (p < pattern.length() && pattern.charAt(p) == '*') p++;
        return p == pattern.length();
    }

    /** The first line whose key is this one and that revokes it, whatever its host patterns (revoked is revoked). */
    static Optional<Line> revoked(List<Line> lines, byte[] blob) {
        return lines.stream().filter(l -> l.marker() == Marker.REVOKED && Arrays.equals(l.key().blob(), blob)).findFirst();
    }

    /** The plain key lines (no marker) that name this host. */
    static List<Line> forHost(List<Line> lines, String name) {
        return lines.stream().filter(l -> l.marker() == Marker.NONE && matches(l.hosts(), name)).toList();
    }
}
