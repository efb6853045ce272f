package dev.gpuctl.inventory;

import java.nio.file.Path;
import java.util.Optional;

/**
 * How to reach one node: the inventory's ssh defaults merged with the node's own `ssh:` block.
 * Paths are absolute, `~` already expanded. hostKey is only ever set per node.
 */
public record SshSettings(String user, int port, Path identityFile, Path knownHosts,
                          Optional<Bastion> bastion, Optional<String> hostKey) {
    public boolean isRoot() { return "root".equals(user); }
}
