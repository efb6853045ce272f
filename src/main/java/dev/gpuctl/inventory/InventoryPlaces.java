package dev.gpuctl.inventory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Places in an inventory file that a later check reports at ("FILE:LINE:COLUMN"): the file read again for a node
 * (an identity file, the control-plane VIP), after {@link InventoryLoader} has built the {@link Inventory} from it.
 */
public final class InventoryPlaces {
    private InventoryPlaces() {}

    /**
     * Every identity file the inventory names (a node's own ssh.identityFile, else the defaults') that does not exist on
     * this machine, each at its place in {@code file} (what plan reports offline; the connecting commands check more).
     */
    public static List<InventoryError> missingIdentityFiles(Inventory inv, Path file, Map<String, String> env) {
        String display = file.toString();
        Problems problems = new Problems(display);
        Optional<Node> root = YamlSource.compose(InventoryLoader.read(file, display), problems);
        if (root.isEmpty()) return List.of();
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (dev.gpuctl.inventory.Node n : inv.nodes()) {
            SshSettings ssh = n.ssh();
            if (n.isLocal() || ssh.keyOrigin() != SshSettings.KeyOrigin.INVENTORY || Files.exists(ssh.identityFile())) continue;
            Optional<Node> at = where(root.get(), "node " + n.name() + " ssh.identityFile").or(() -> where(root.get(), "ssh.identityFile"));
            String message = "ssh.identityFile: " + ssh.identityFile() + " does not exist (node " + n.name()
                + "; expected the private key gpuctl logs in with, e.g. ~/.ssh/id_ed25519)";
            String key = at.map(x -> x.getStartMark().getLine() + ":" + x.getStartMark().getColumn()).orElse("") + ssh.identityFile();
            if (!seen.add(key)) continue;
            at.ifPresentOrElse(x -> problems.at(x, message), () -> problems.whole(message));
        }
        return problems.sorted();
    }

    /**
     * Where {@code file} names the identity file node {@code nodeName} logs in with (its own ssh.identityFile, else the
     * defaults'), as "FILE:LINE:COLUMN"; empty when the file names none there (the key came from ~/.ssh/config or
     * the defaults) or cannot be read.
     */
    public static Optional<String> identityFilePlace(Path file, String nodeName) {
        String display = file.toString();
        Problems problems = new Problems(display);
        Optional<Node> root;
        try {
            root = YamlSource.compose(InventoryLoader.read(file, display), problems);
        } catch (RuntimeException e) {
            return Optional.empty();
        }
        return root.flatMap(r -> where(r, "node " + nodeName + " ssh.identityFile").or(() -> where(r, "ssh.identityFile")))
            .flatMap(n -> place(display, n));
    }

    /** Where {@code file} gives cluster.controlPlaneEndpoint.vip, as "FILE:LINE:COLUMN"; empty when it does not or cannot be read. */
    public static Optional<String> vipPlace(Path file) {
        String display = file.toString();
        Optional<Node> root;
        try {
            root = YamlSource.compose(InventoryLoader.read(file, display), new Problems(display));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
        return root.flatMap(r -> child(r, "cluster")).flatMap(c -> child(c, "controlPlaneEndpoint")).flatMap(e -> child(e, "vip"))
            .flatMap(n -> place(display, n));
    }

    /**
     * The YAML node a source names: "cluster.podCidr", "cluster.siteNetworks[2]", "node NAME address", "ssh.identityFile",
     * "node NAME ssh.identityFile".
     */
    static Optional<Node> where(Node root, String source) {
        if (source.equals("ssh.identityFile")) return child(root, "ssh").flatMap(c -> child(c, "identityFile"));
        java.util.regex.Matcher site = java.util.regex.Pattern.compile("cluster\\.siteNetworks\\[(\\d+)]").matcher(source);
        java.util.regex.Matcher node = java.util.regex.Pattern.compile("node (\\S+) (address|ssh\\.identityFile)").matcher(source);
        if (source.startsWith("cluster.") && !site.matches()) return child(root, "cluster").flatMap(c -> child(c, source.substring(8)));
        if (site.matches()) {
            return child(root, "cluster").flatMap(c -> child(c, "siteNetworks")).flatMap(l -> item(l, Integer.parseInt(site.group(1))));
        }
        if (node.matches()) {
            Optional<Node> list = child(root, "nodes");
            if (list.isEmpty() || !(list.get() instanceof org.yaml.snakeyaml.nodes.SequenceNode seq)) return Optional.empty();
            for (Node n : seq.getValue()) {
                Optional<Node> name = child(n, "name");
                if (name.isPresent() && name.get() instanceof org.yaml.snakeyaml.nodes.ScalarNode sc && sc.getValue().equals(node.group(1))) {
                    return node.group(2).equals("address") ? child(n, "address") : child(n, "ssh").flatMap(x -> child(x, "identityFile"));
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<Node> child(Node map, String key) {
        if (!(map instanceof org.yaml.snakeyaml.nodes.MappingNode m)) return Optional.empty();
        for (var t : m.getValue()) {
            if (t.getKeyNode() instanceof org.yaml.snakeyaml.nodes.ScalarNode k && k.getValue().equals(key)) return Optional.of(t.getValueNode());
        }
        return Optional.empty();
    }

    private static Optional<Node> item(Node list, int i) {
        if (!(list instanceof org.yaml.snakeyaml.nodes.SequenceNode s) || i >= s.getValue().size()) return Optional.empty();
        return Optional.of(s.getValue().get(i));
    }

    /** {@code node}'s place in the file, as "FILE:LINE:COLUMN" (1-based); empty for a node without one. */
    private static Optional<String> place(String display, Node n) {
        if (n.getStartMark() == null) return Optional.empty();
        return Optional.of(display + ":" + (n.getStartMark().getLine() + 1) + ":" + (n.getStartMark().getColumn() + 1));
    }
}
