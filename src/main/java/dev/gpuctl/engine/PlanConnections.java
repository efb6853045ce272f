package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.SshSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * How gpuctl reaches each host, as the inventory (over ~/.ssh/config, over the defaults) resolved it, and what the
 * plan warns about before anything runs. Pure: from the loaded {@link Inventory} and the warnings handed in.
 */
public final class PlanConnections {
    private PlanConnections() {}

    /**
     * One host's connection. For {@code connection: local} only {@code name} and {@code connection} are set.
     *
     * @param privilege         "root" (logged in as root) or "sudo -n" (another user, every command under sudo -n)
     * @param keySource         which keys log in, in the order offered ({@link #keySource})
     * @param bastion           "USER@ADDRESS:PORT" of the jump host, when there is one
     * @param sshConfigWarnings what ~/.ssh/config said for this host that gpuctl does not read, "FILE:LINE: what" each
     */
    public record Connection(String name, String connection, String user, String address, Integer port, String privilege,
                             String keySource, Optional<String> bastion, List<String> sshConfigWarnings) {
        public Connection { sshConfigWarnings = List.copyOf(sshConfigWarnings); }
    }

    /** Every node's connection, in inventory order. */
    public static List<Connection> of(Inventory inv) {
        List<Connection> out = new ArrayList<>();
        for (Node n : inv.nodes()) {
            if (n.isLocal()) {
                out.add(new Connection(n.name(), "local", null, null, null, null, null, Optional.empty(), List.of()));
                continue;
            }
            SshSettings s = n.ssh();
            out.add(new Connection(n.name(), "ssh", s.user(), n.address(), s.port(), s.isRoot() ? "root" : "sudo -n",
                keySource(s), s.bastion().map(b -> b.user() + "@" + b.address() + ":" + b.port()), inv.sshNotes(n)));
        }
        return out;
    }

    /**
     * Which keys a host is logged in with, in the order they are offered: the file the inventory names, the file
     * ~/.ssh/config names, or (neither naming one) the ssh-agent's keys, then ssh's default key files.
     */
    public static String keySource(SshSettings s) {
        return switch (s.keyOrigin()) {
            case INVENTORY -> "key " + s.identityFile();
            case SSH_CONFIG -> "key " + s.identityFile() + " (from ~/.ssh/config)";
            case DEFAULT -> {
                var files = s.keyFiles();
                StringBuilder sb = new StringBuilder("keys from the ssh-agent, then ").append(files.get(0));
                for (int i = 1; i < files.size(); i++) sb.append(", ").append(files.get(i).getFileName());
                yield sb.toString();
            }
        };
    }

    /** The warning for a node that is this machine: every root step for it runs here. */
    public static String localWarning(Node n) {
        return "CONNECTION: LOCAL: NODE " + n.name() + " IS THIS MACHINE. EVERY ROOT STEP FOR IT RUNS HERE AND RECONFIGURES IT;"
            + " COMMANDS THAT CHANGE HOSTS REFUSE IT WITHOUT --allow-local.";
    }

    /**
     * The plan's warnings, once each, in the order people must read them: each {@code connection: local} node first,
     * then {@code others} (e.g. a missing identity file at its FILE:LINE:COLUMN), then what ~/.ssh/config made gpuctl skip.
     */
    public static List<String> warnings(Inventory inv, List<String> others) {
        java.util.LinkedHashSet<String> all = new java.util.LinkedHashSet<>();
        inv.nodes().stream().filter(Node::isLocal).forEach(n -> all.add(localWarning(n)));
        all.addAll(others);
        all.addAll(inv.warnings());
        return List.copyOf(all);
    }
}
