package dev.gpuctl.remote;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.util.Base64;
import java.util.Locale;
import java.util.Optional;
import net.schmizz.sshj.common.Buffer;
import net.schmizz.sshj.common.KeyType;

/** Host key fingerprints and names written the way OpenSSH writes them. Pure functions. */
final class Fingerprints {
    private Fingerprints() {}

    /** A key as it sits in a known_hosts line: its type ("ssh-ed25519") and its wire-format blob. */
    record KeyBlob(String type, byte[] blob) {
        String fingerprint() { return sha256(blob); }
        String label() { return typeLabel(type); }
    }

    /** "SHA256:" and the unpadded base64 of the SHA-256 of the key blob, as {@code ssh-keygen -l} prints it. */
    static String sha256(byte[] blob) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(blob);
            return "SHA256:" + Base64.getEncoder().withoutPadding().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static KeyBlob blob(PublicKey key) {
        return new KeyBlob(KeyType.fromKey(key).toString(), new Buffer.PlainBuffer().putPublicKey(key).getCompactData());
    }

    static String sha256(PublicKey key) { return blob(key).fingerprint(); }

    /**
     * True when a pinned fingerprint (nodes[].ssh.hostKey) names the offered one: "SHA256:" is optional (in any
     * case), and so is base64's '=' padding, as people copy them from ssh-keygen -l or from other tools.
     */
    static boolean samePin(String pinned, String offered) {
        return bare(pinned).equals(bare(offered));
    }

    private static String bare(String fingerprint) {
        String f = fingerprint.strip();
        if (f.regionMatches(true, 0, "SHA256:", 0, 7)) f = f.substring(7);
        while (f.endsWith("=")) f = f.substring(0, f.length() - 1);
        return f;
    }

    /** "ED25519", "ECDSA", "RSA": the word OpenSSH uses in its messages. */
    static String typeLabel(String sshType) {
        if (sshType.equals("ssh-ed25519")) return "ED25519";
        if (sshType.startsWith("ecdsa-sha2-")) return "ECDSA";
        if (sshType.equals("ssh-rsa") || sshType.startsWith("rsa-sha2-")) return "RSA";
        if (sshType.equals("ssh-dss")) return "DSA";
        if (sshType.startsWith("sk-ssh-ed25519")) return "ED25519-SK";
        if (sshType.startsWith("sk-ecdsa")) return "ECDSA-SK";
        return sshType.toUpperCase(Locale.ROOT);
    }

    /** The host as known_hosts names it: "host" on port 22, else "[host]:port". */
    static String knownHostsName(String address, int port) {
        return port == 22 ? address : "[" + address + "]:" + port;
    }

    /** "host:port", with IPv6 addresses in brackets. */
    static String hostPort(String address, int port) {
        return (address.contains(":") ? "[" + address + "]" : address) + ":" + port;
    }

    /** The key of a known_hosts line ("[@marker] hosts type base64 [comment]"); empty for comments and junk. */
    static Optional<KeyBlob> keyOfLine(String line) {
        String[] f = line.strip().split("\\s+");
        int i = f.length > 0 && f[0].startsWith("@") ? 1 : 0;
        if (f.length < i + 3 || f[0].startsWith("#")) return Optional.empty();
        try {
            return Optional.of(new KeyBlob(f[i + 1], Base64.getDecoder().decode(f[i + 2])));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** The line that OpenSSH's accept-new appends (unhashed). */
    static String knownHostsLine(String address, int port, PublicKey key) {
        KeyBlob b = blob(key);
        return knownHostsName(address, port) + " " + b.type() + " " + Base64.getEncoder().encodeToString(b.blob());
    }
}
