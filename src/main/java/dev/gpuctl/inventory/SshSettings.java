package dev.gpuctl.inventory;

import java.nio.file.Path;
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
                          Optional<Bastion> bastion, Optional<String> hostKey, KeyOrigin keyOrigin) {
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
    }

    /** Settings whose key file was named in the inventory. */
    public SshSettings(String user, int port, Path identityFile, Path knownHosts, Optional<Bastion> bastion,
                       Optional<String> hostKey) {
        this(user, port, identityFile, knownHosts, bastion, hostKey, KeyOrigin.INVENTORY);
    }

    public boolean isRoot() { return "root".equals(user); }

    /** The key files to try in order: the named one, or the default ones beside ~/.ssh/id_ed25519. */
    public List<Path> keyFiles() {
        if (keyOrigin != KeyOrigin.DEFAULT) return List.of(identityFile);
        Path dir = identityFile.getParent();
        return DEFAULT_KEY_NAMES.stream().map(n -> dir == null ? Path.of(n) : dir.resolve(n)).toList();
    }
}
