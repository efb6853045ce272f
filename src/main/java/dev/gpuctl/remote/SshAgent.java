package dev.gpuctl.remote;

import com.jcraft.jsch.AgentIdentityRepository;
import com.jcraft.jsch.AgentProxyException;
import com.jcraft.jsch.Identity;
import com.jcraft.jsch.SSHAgentConnector;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The keys a running ssh-agent holds (the socket in SSH_AUTH_SOCK), listed once per run. The agent protocol
 * (draft-miller-ssh-agent: REQUEST_IDENTITIES, SIGN_REQUEST with the rsa-sha2 flags) is JSch's client over
 * Java's Unix domain sockets; the private keys never leave the agent.
 */
final class SshAgent {
    /** One key the agent holds: its public key blob (RFC 4253 §6.6), its type, its comment. */
    record Key(byte[] blob, String type, String comment, Identity identity) {
        /** "ssh-ed25519 key 'me@laptop'", for messages; never the key itself. */
        String describe() {
            return type + " key" + (comment == null || comment.isBlank() ? "" : " '" + comment + "'");
        }

        /**
         * The signature over {@code data} in RFC 4253's encoding (string algorithm, string signature), or null when
         * the agent refuses (a key added with confirmation that the user declined, a locked agent).
         */
        byte[] sign(byte[] data, String algorithm) { return identity.getSignature(data, algorithm); }

        @Override public boolean equals(Object o) { return o instanceof Key k && Arrays.equals(blob, k.blob); }
        @Override public int hashCode() { return Arrays.hashCode(blob); }
        @Override public String toString() { return describe(); }
    }

    private SshAgent() {}

    /**
     * The keys of the agent at {@code socket}; empty when nothing answers there (a stale SSH_AUTH_SOCK) or the agent
     * holds none. Never throws: an unusable agent is the same as no agent, and the key files are tried next.
     */
    static List<Key> keys(Path socket) {
        try {
            SSHAgentConnector connector = new SSHAgentConnector(socket);
            if (!connector.isAvailable()) return List.of();
            return new AgentIdentityRepository(connector).getIdentities().stream()
                .map(i -> new Key(i.getPublicKeyBlob(), keyType(i.getPublicKeyBlob()).orElse(i.getAlgName()),
                    i.getName(), i))
                .toList();
        } catch (AgentProxyException | RuntimeException e) {
            return List.of();
        }
    }

    /** The key type that opens a public key blob (its first SSH string); empty when the blob is malformed. */
    static Optional<String> keyType(byte[] blob) {
        if (blob == null || blob.length < 4) return Optional.empty();
        int len = ByteBuffer.wrap(blob, 0, 4).getInt();
        if (len <= 0 || len > blob.length - 4 || len > 64) return Optional.empty();
        return Optional.of(new String(blob, 4, len, StandardCharsets.US_ASCII));
    }

    /**
     * The public key blob of an OpenSSH public key line ("TYPE BASE64 [comment]", as in FILE.pub); empty when the line
     * is not one.
     */
    static Optional<byte[]> publicBlob(String line) {
        String[] f = line.strip().split("\\s+");
        if (f.length < 2) return Optional.empty();
        try {
            byte[] blob = Base64.getDecoder().decode(f[1]);
            return keyType(blob).filter(f[0]::equals).map(t -> blob);
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    static String hex(byte[] b) { return HexFormat.of().formatHex(b); }
}
