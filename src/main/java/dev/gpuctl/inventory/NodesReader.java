package dev.gpuctl.inventory;

import dev.gpuctl.net.Cidr;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/** Reads `nodes:` and checks the list as a whole. See {@link InventoryLoader} for the rules. */
final class NodesReader {
    static final List<String> KEYS = List.of("name", "address", "role", "gpu", "labels", "ssh", "connection", "nodeIp", "gpuSharing", "gpus", "gpuModel");
    static final List<String> CONNECTIONS = List.of("ssh", "local");
    private static final Map<String, String> HINTS = hints();

    private static Map<String, String> hints() {
        Map<String, String> hints = new HashMap<>();
        for (String key : SshReader.NODE_KEYS) hints.put(key, "it belongs under the node's ssh:");
        return hints;
    }

    private final Problems problems;
    private final SshReader ssh;
    private final SshConfig sshConfig;
    private final Set<String> warnings;
    private final java.util.Map<String, List<String>> sshNotes;

    NodesReader(ReadContext ctx) {
        this.problems = ctx.problems;
        this.sshConfig = ctx.sshConfig;
        this.warnings = ctx.warnings;
        this.sshNotes = ctx.sshNotes;
        this.ssh = new SshReader(ctx);
    }

    /** One node as read, with the YAML nodes that later checks point at. */
    private record Read(ScalarNode nameNode, ScalarNode addressNode, ScalarNode roleNode,
                        ScalarNode connectionNode, String canonicalAddress) {}

    List<dev.gpuctl.inventory.Node> read(Section top, SequenceNode list, SshReader.Partial defaults) {
        if (list.getValue().isEmpty()) {
            problems.at(list, "nodes: the list is empty (expected at least one node: 1, 3 or 5 masters and any number of workers)");
        }
        List<dev.gpuctl.inventory.Node> nodes = new ArrayList<>();
        List<Read> reads = new ArrayList<>();
        for (int i = 0; i < list.getValue().size(); i++) {
            String path = "nodes[" + i + "]";
            Section.read(problems, path, list.getValue().get(i), KEYS, HINTS)
                .ifPresent(s -> nodes.add(node(s, defaults, reads)));
        }
        checkMasters(top, reads);
        checkUnique(reads);
        return nodes;
    }

    private dev.gpuctl.inventory.Node node(Section n, SshReader.Partial defaults, List<Read> reads) {
        Optional<ScalarNode> nameNode = n.requiredScalar("name", "a node name such as 'worker-1'");
        nameNode.filter(s -> !Names.isDnsSubdomain(s.getValue())).ifPresent(s -> problems.at(s, n.child("name")
            + ": '" + s.getValue() + "' is not a valid node name (expected a DNS-1123 subdomain, as Kubernetes"
            + " needs for node names: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)"));
        Optional<ScalarNode> addressNode = n.requiredScalar("address", "the node's IP address or host name");
        Optional<String> canonical = addressNode.flatMap(s -> {
            Optional<String> a = Names.canonicalAddress(s.getValue());
            if (a.isEmpty()) problems.at(s, n.child("address") + ": " + SshReader.badAddress(s.getValue()));
            return a;
        });
        Optional<String> nodeIp = n.scalar("nodeIp").flatMap(s -> {
            Optional<byte[]> ip = Cidr.parseAddress(s.getValue());
            if (ip.isEmpty()) problems.at(s, n.child("nodeIp") + ": '" + s.getValue() + "' is not an IP address (expected the"
                + " IPv4 or IPv6 address the cluster uses for this node: kubeadm's advertise address, the kubelet's node-ip)");
            return ip.map(Cidr::formatAddress);
        });
        if (n.value("role").isEmpty()) n.missing("role", "master or worker");
        Optional<Role> role = Choices.read(n, "role", "role", Role.values(), Role::key);
        boolean gpu = n.bool("gpu").orElse(role.orElse(Role.WORKER) == Role.WORKER);
        Map<String, String> labels = n.value("labels").map(v -> labels(v, n.child("labels"))).orElse(Map.of());
        Optional<GpuSharing> sharing = GpuSharingReader.read(n, "gpuSharing");
        if (sharing.isPresent() && !gpu) {
            problems.at(n.keyNode("gpuSharing").orElseThrow(), n.child("gpuSharing") + ": node has no GPUs (gpu: false), so it has"
                + " nothing to share (remove gpuSharing, or set gpu: true)");
        }
        int gpus = n.scalar("gpus").map(c -> gpuCount(n, c, gpu)).orElse(0);
        String gpuModel = n.scalar("gpuModel").map(m -> gpuModel(n, m, gpu)).orElse("");
        SshReader.Partial own = n.section("ssh", SshReader.NODE_KEYS, Map.of()).map(ssh::read)
            .orElse(SshReader.Partial.NONE);
        Optional<ScalarNode> connectionNode = n.scalar("connection");
        String connection = connectionNode.map(ScalarNode::getValue).orElse("ssh");
        if (!CONNECTIONS.contains(connection)) {
            problems.at(connectionNode.orElseThrow(), n.child("connection") + ": unknown connection '" + connection
                + "' (expected one of: " + String.join(", ", CONNECTIONS) + ")");
        }
        reads.add(new Read(nameNode.orElse(null), addressNode.orElse(null),
            role.flatMap(r -> n.scalar("role")).orElse(null), connectionNode.orElse(null), canonical.orElse(null)));
        String address = addressNode.map(ScalarNode::getValue).orElse("");
        // ~/.ssh/config, as ssh reads it for this address, where the inventory says nothing; HostName replaces the address
        SshConfig.Host configured = connection.equals("ssh") ? sshConfig.lookup(address) : SshConfig.Host.NONE;
        if (connection.equals("ssh")) {
            List<String> notes = sshConfig.notes(address);
            warnings.addAll(notes);
            if (!notes.isEmpty()) nameNode.ifPresent(nn -> sshNotes.merge(nn.getValue(), notes, (a, b) -> java.util.stream.Stream.concat(a.stream(), b.stream()).toList()));
        }
        configured.hostName().filter(h -> Names.canonicalAddress(h).isEmpty()).ifPresent(h -> problems.at(addressNode.orElseThrow(),
            n.child("address") + ": ~/.ssh/config gives HostName '" + h + "' for '" + address + "', which is not a valid address"
                + " (expected an IP address or a host name)"));
        return new dev.gpuctl.inventory.Node(nameNode.map(ScalarNode::getValue).orElse(""),
            configured.hostName().orElse(address), role.orElse(Role.WORKER), gpu, labels,
            ssh.resolve(ssh.withConfig(own.over(defaults), configured)), connection, nodeIp.orElse(""), sharing, gpus, gpuModel);
    }

    /** The largest GPU count a node may state (a typo guard: the largest servers have 8 or 16). */
    static final int MAX_GPUS = 64;

    private int gpuCount(Section n, ScalarNode c, boolean gpu) {
        if (!c.getTag().equals(Tag.INT) || !c.getValue().matches("[0-9]{1,3}") || Integer.parseInt(c.getValue()) < 1
            || Integer.parseInt(c.getValue()) > MAX_GPUS) {
            problems.at(c, n.child("gpus") + ": '" + c.getValue() + "' is not a GPU count (expected a whole number 1.." + MAX_GPUS
                + ": the GPUs nvidia-smi lists on the node)");
            return 0;
        }
        if (!gpu) {
            problems.at(c, n.child("gpus") + ": node has no GPUs (gpu: false), so it has no GPU count (remove gpus, or set gpu: true)");
            return 0;
        }
        return Integer.parseInt(c.getValue());
    }

    private String gpuModel(Section n, ScalarNode m, boolean gpu) {
        if (!Names.isDnsLabel(m.getValue())) {
            problems.at(m, n.child("gpuModel") + ": '" + m.getValue() + "' is not a GPU model name (expected a DNS-1123 label such"
                + " as h200 or a100-80gb: lowercase letters, digits and '-'; it names the node's label, the Kueue ResourceFlavor"
                + " and the key of teams' quotas)");
            return "";
        }
        if (!gpu) {
            problems.at(m, n.child("gpuModel") + ": node has no GPUs (gpu: false), so it has no GPU model (remove gpuModel, or set gpu: true)");
            return "";
        }
        return m.getValue();
    }

    /** Kubernetes labels: a mapping of label keys to label values, both strings. */
    private Map<String, String> labels(Node value, String path) {
        if (!(value instanceof MappingNode mapping) || !value.getTag().equals(Tag.MAP)) {
            problems.at(value, path + ": expected a mapping of label keys to values, got " + Section.describe(value));
            return Map.of();
        }
        Map<String, String> labels = new LinkedHashMap<>();
        Map<String, Node> firstKeys = new HashMap<>();
        for (NodeTuple t : mapping.getValue()) {
            Node k = t.getKeyNode();
            Node v = t.getValueNode();
            if (!Section.isPlainScalar(k)) {
                problems.at(k, path + ": expected a label key, got " + Section.describe(k));
                continue;
            }
            String key = ((ScalarNode) k).getValue();
            if (firstKeys.containsKey(key)) {
                problems.at(k, "duplicate key '" + key + "' in " + path + " (first at line " + Problems.line(firstKeys.get(key)) + ")");
                continue;
            }
            firstKeys.put(key, k);
            if (!Names.isLabelKey(key)) {
                problems.at(k, path + ": '" + key + "' is not a valid label key (expected [prefix/]name: a name of at"
                    + " most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit,"
                    + " and an optional DNS subdomain prefix)");
            }
            Names.reservedLabelPrefix(key).ifPresent(reserved -> problems.at(k, path + ": '" + key + "' uses the reserved prefix "
                + reserved + " (Kubernetes, its node roles and the NVIDIA device plugin own those labels; expected your own prefix,"
                + " such as team or example.com/team)"));
            if (!Section.isPlainScalar(v)) {
                problems.at(v, path + "." + key + ": expected a label value (a string), got " + Section.describe(v));
                continue;
            }
            String text = ((ScalarNode) v).getValue();
            if (!Names.isLabelValue(text)) {
                problems.at(v, path + "." + key + ": '" + text + "' is not a valid label value (expected at most 63"
                    + " letters, digits, '-', '_' and '.', starting and ending with a letter or digit)");
            }
            labels.put(key, text);
        }
        return labels;
    }

    /**
     * One, three or five masters (each master is an etcd member and etcd needs a majority of them: an even number
     * survives no more losses than one master fewer). None is reported at `nodes`; an even count at the last master's
     * role; more than five at the sixth master's role.
     */
    private void checkMasters(Section top, List<Read> reads) {
        List<Read> masters = reads.stream()
            .filter(r -> r.roleNode() != null && r.roleNode().getValue().equals(Role.MASTER.key())).toList();
        boolean complete = reads.stream().allMatch(r -> r.roleNode() != null);
        if (masters.isEmpty() && complete && !reads.isEmpty()) {
            problems.at(top.keyNode("nodes").orElse(top.node()),
                "nodes: no node has role master (expected 1, 3 or 5 masters)");
        }
        if (masters.size() > MAX_MASTERS) {
            Read extra = masters.get(MAX_MASTERS);
            problems.at(extra.roleNode(), "nodes: " + masters.size() + " masters, " + nameOf(extra) + " is the "
                + (MAX_MASTERS + 1) + "th (expected at most " + MAX_MASTERS + ": each master is an etcd member and every"
                + " write waits for a majority of them)");
        } else if (masters.size() % 2 == 0 && !masters.isEmpty()) {
            Read last = masters.get(masters.size() - 1);
            problems.at(last.roleNode(), "nodes: " + masters.size() + " masters, an even number (" + nameOf(masters.get(0))
                + " at line " + Problems.line(masters.get(0).roleNode()) + " is the first; expected 1, 3 or 5: etcd needs a"
                + " majority of the masters, so " + masters.size() + " survive no more losses than " + (masters.size() - 1) + ")");
        }
    }

    static final int MAX_MASTERS = 5;

    /** Node names, addresses and local connections are unique; the second of a pair is reported. */
    private void checkUnique(List<Read> reads) {
        Map<String, Read> names = new HashMap<>();
        Map<String, Read> addresses = new HashMap<>();
        Read local = null;
        for (Read r : reads) {
            if (r.nameNode() != null) {
                Read first = names.putIfAbsent(r.nameNode().getValue(), r);
                if (first != null) problems.at(r.nameNode(), "duplicate node name '" + r.nameNode().getValue()
                    + "' (first at line " + Problems.line(first.nameNode()) + ")");
            }
            if (r.canonicalAddress() != null) {
                Read first = addresses.putIfAbsent(r.canonicalAddress(), r);
                if (first != null) problems.at(r.addressNode(), "duplicate node address '" + r.addressNode().getValue()
                    + "' (" + nameOf(first) + " at line " + Problems.line(first.addressNode()) + " has it too)");
            }
            if (r.connectionNode() != null && r.connectionNode().getValue().equals("local")) {
                if (local != null) problems.at(r.connectionNode(), "a second node with connection: local (only the"
                    + " machine gpuctl runs on can be local, and " + nameOf(local) + " at line "
                    + Problems.line(local.connectionNode()) + " is already)");
                else local = r;
            }
        }
    }

    private static String nameOf(Read r) {
        return r.nameNode() == null ? "the node" : "node '" + r.nameNode().getValue() + "'";
    }
}
