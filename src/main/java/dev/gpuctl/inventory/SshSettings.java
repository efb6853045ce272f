package dev.gpuctl.inventory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * How to reach one node: the inventory's ssh defaults merged with the node's own `ssh:` block.
 * Paths are absolute, `~` already expanded. hostKey is only ever set per node.
 *
 * @param identityFile the key file named by {@code keyOrigin}; for {@link KeyOrigin#DEFAULT} the first of the default
 *                     files (~/.ssh/id_ed25519), its siblings {@link #DEFAULT_KEY_NAMES} tried after it
 * @param keyOrigin    who named the key: the inventory, ~/.ssh/config, or nobody (the agent's keys, then the defaults)
 */
public record SshSettings(String user, int port, Path identityFile, Path knownHosts,
                          Optional<Bastion> bastion, Optional<String> hostKey, KeyOrigin keyOrigin,
                          Duration connectTimeout) {
    /** How long connecting may take (TCP, the server's SSH banner, the key exchange) when the inventory says nothing. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(15);
    /** The longest connect timeout taken: a host that needs longer to say hello is broken. */
    public static final Duration MAX_CONNECT_TIMEOUT = Duration.ofMinutes(5);

    /** The key files ssh tries when none is configured, in its order (ssh(1), -i). */
    public static final List<String> DEFAULT_KEY_NAMES = List.of("id_ed25519", "id_ecdsa", "id_rsa");

    /** Where a node's key comes from. */
    public enum KeyOrigin {
        /** ssh.identityFile in the inventory (a node's own block or the defaults). */
        INVENTORY,
        /** IdentityFile in ~/.ssh/config, the inventory saying nothing. */
        SSH_CONFIG,
        /** Nobody named one: the keys of a running ssh-agent, then ~/.ssh/id_ed25519, id_ecdsa, id_rsa. */
        DEFAULT
    }

    public SshSettings {
        Objects.requireNonNull(keyOrigin, "keyOrigin");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
    }

    /** Settings with the default connect timeout. */
    public SshSettings(String user, int port, Path identityFile, Path knownHosts, Optional<Bastion> bastion,
                       Optional<String> hostKey, KeyOrigin keyOrigin) {
        this(user, port, identityFile, knownHosts, bastion, hostKey, keyOrigin, DEFAULT_CONNECT_TIMEOUT);
    }

    /** Settings whose key file was named in the inventory, with the default connect timeout. */
    public SshSettings(String user, int port, Path identityFile, Path knownHosts, Optional<Bastion> bastion,
                       Optional<String> hostKey) {
        this(user, port, identityFile, knownHosts, bastion, hostKey, KeyOrigin.INVENTORY);
    }

    /**
     * A connect timeout as written in the inventory or on the command line: whole seconds ("15"), or a number and a
     * unit ("15s", "1m", "1m30s"); from 1 s to {@link #MAX_CONNECT_TIMEOUT}.
     *
     * @throws IllegalArgumentException saying what is wrong and what is expected
     */
    public static Duration parseConnectTimeout(String text) {
        String t = text.strip();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?:(\\d{1,4})m)?(?:(\\d{1,6})s?)?").matcher(t);
        if (t.isEmpty() || !m.matches() || (m.group(1) == null && m.group(2) == null) || (m.group(1) != null
            && m.group(2) != null && !t.endsWith("s"))) {
            throw new IllegalArgumentException("'" + text + "' is not a timeout (expected seconds such as 15 or 15s, or"
                + " minutes such as 1m or 1m30s; from 1s to " + MAX_CONNECT_TIMEOUT.toMinutes() + "m)");
        }
        Duration d = Duration.ofMinutes(m.group(1) == null ? 0 : Long.parseLong(m.group(1)))
            .plusSeconds(m.group(2) == null ? 0 : Long.parseLong(m.group(2)));
        if (d.isZero()) throw new IllegalArgumentException("'" + text + "' is zero (expected at least 1s)");
        if (d.compareTo(MAX_CONNECT_TIMEOUT) > 0) {
            throw new IllegalArgumentException("'" + text + "' is too long (expected at most " + MAX_CONNECT_TIMEOUT.toMinutes()
                + "m: a host that needs longer to answer is broken)");
        }
        return d;
    }

    public boolean isRoot() { return "root".equals(user); }

    /** The key files to try in order: the named one, or the default ones beside ~/.ssh/id_ed25519. */
    public List<Path> keyFiles() {
        if (keyOrigin != KeyOrigin.DEFAULT) return List.of(identityFile);
        Path dir = identityFile.getParent();
        return DEFAULT_KEY_NAMES.stream().map(n -> dir == null ? Path.of(n) : dir.resolve(n)).toList();
    }
}
