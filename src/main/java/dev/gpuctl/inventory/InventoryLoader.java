package dev.gpuctl.inventory;

import dev.gpuctl.net.CidrCheck;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Loads and validates an inventory file (see docs/inventory.md). Every problem is reported at
 * once, in file order, as {@code FILE:LINE:COLUMN: what is wrong (what was expected)} in an
 * {@link InventoryException}; a file that cannot be read at all gives {@code FILE: cannot read: why}.
 * No other exception escapes.
 *
 * <h2>YAML</h2>
 * Parsed with snakeyaml's node API only (no object is ever constructed from the file), at most
 * 1 MiB, one document, at most 50 aliases (*name) in all, nesting depth at most 32. Duplicate keys, unknown keys
 * (with the closest known key suggested), merge keys ({@code <<}) and YAML tags other than the
 * standard scalar types are errors. A key with an empty value counts as absent.
 *
 * <h2>cluster</h2>
 * <ul>
 * <li>{@code name} (required): a DNS-1123 label.</li>
 * <li>{@code kubernetesVersion} (required): a quoted minor version, "1.31" or newer (gpuctl writes
 *     kubeadm.k8s.io/v1beta4, which needs kubeadm 1.31). An unquoted 1.35 is a YAML number and is
 *     refused with "quote it"; a patch version such as "1.35.2" is refused.</li>
 * <li>{@code runtime}: docker | containerd, default containerd. {@code cni}: flannel | calico,
 *     default flannel. {@code packages}: upstream | system, default upstream.</li>
 * <li>{@code podCidr}: default the cni's (flannel 10.244.0.0/16, calico 192.168.0.0/16), a /24 or
 *     larger (kubeadm gives each node a /24), with room for a /24 per node. {@code serviceCidr}:
 *     default 10.96.0.0/12, between /12 and /28. Both IPv4.</li>
 * <li>{@code siteNetworks}: CIDRs, IPv4 or IPv6. Every CIDR needs its prefix length and no host bits.</li>
 * <li>{@code timeServers}: IP addresses or host names; empty means the distribution's pool.</li>
 * <li>{@code cniManifest}, {@code devicePlugin.manifest}: an http(s) URL, or else a local file that
 *     must exist, relative to the inventory's directory, and hold Kubernetes objects only (every document with
 *     apiVersion and kind; no kubeconfig, private key or cloud credentials: see
 *     {@link dev.gpuctl.kube.ManifestObjects#objects}). Defaults: the pinned upstream manifests
 *     ({@link ManifestReader#defaultCniManifest}, {@link ManifestReader#defaultDevicePluginManifest}).
 *     {@code devicePlugin.version}: a release tag such as v0.20.0 (the default).</li>
 * </ul>
 *
 * <h2>ssh (defaults) and nodes[].ssh (overrides, key by key)</h2>
 * {@code user} (default root; a safe login name), {@code port} (default 22, 1..65535),
 * {@code identityFile} (default ~/.ssh/id_ed25519), {@code knownHosts} (default ~/.ssh/known_hosts),
 * {@code bastion} {address (required), user (default: the node's user), port (default 22)}. Paths:
 * '~' and '~/' expand to HOME, relative paths are relative to the inventory's directory; whether the
 * files exist is preflight's business. {@code hostKey} only per node: "SHA256:" and 43 base64
 * characters, as ssh-keygen -lf prints it.
 *
 * <h2>nodes</h2>
 * A non-empty list. {@code name} (required): a DNS-1123 subdomain, as Kubernetes needs for node
 * names; unique. {@code address} (required): an IPv4 or IPv6 literal or an RFC 1123 host name;
 * unique. {@code role} (required): master | worker; 1, 3 or 5 masters (more than one needs cluster.controlPlaneEndpoint). {@code gpu}: default true
 * for workers, false for the master (a master with gpu: true has GPUs). {@code labels}: Kubernetes
 * label keys and values. {@code connection}: ssh (default) | local; at most one node is local.
 *
 * <h2>storage</h2>
 * {@code nfs.server} (required) names a node; {@code nfs.exports} (required, non-empty): each a
 * {@code path} (absolute, normalized, unique, of letters, digits, '.', '_', '-', '+' and '@' only: nothing that
 * /etc/exports, awk or a shell would decode), {@code readOnly} (default false) and {@code rootSquash} (default true
 * on every export; false writes {@code no_root_squash}, which lets root on every node, and so any pod running as root,
 * act as root on the export: plant root-owned setuid files in it; plan warns about each such export).
 *
 * <h2>teams (optional)</h2>
 * Each team: {@code name} (required; a DNS label of at most 58: its ClusterQueue's name, and team-NAME its namespace's;
 * unique), {@code gpus} (required: a GPU count, or per GPU model {@code { h200: 2, a100: 1 }}, which a cluster with
 * several models needs; a model no GPU node has, or more GPUs than the cluster has of it, is an error), {@code members}
 * (people, each in one team at most), {@code borrowing} (true, the default: any idle GPU of the other teams; false:
 * none; N: at most N). With teams, every GPU node states {@code gpus} (its GPU count, 1..64) and either every GPU node
 * or none its {@code gpuModel} (a DNS label); nodes cutting GPUs into MIG instances are refused. {@code kueue}
 * {version (a release tag, default {@link Kueue#DEFAULT_VERSION}), manifest (as cniManifest; default the release's
 * manifests.yaml)}: what bootstrap installs when there are teams.
 *
 * <h2>IPv6</h2>
 * Node addresses, bastion addresses, time servers and site networks may be IPv6. The pod and
 * service networks must be IPv4: kubeadm dual-stack and IPv6-only clusters are not supported yet.
 */
public final class InventoryLoader {
    static final List<String> TOP_KEYS = List.of("cluster", "ssh", "nodes", "storage", "teams", "kueue");
    /** Files larger than this are refused before they are read. */
    static final long MAX_BYTES = 1024 * 1024;
    private static final Map<String, String> TOP_HINTS = topHints();

    private InventoryLoader() {}

    private static Map<String, String> topHints() {
        Map<String, String> hints = new HashMap<>();
        for (String key : ClusterReader.KEYS) hints.put(key, "it belongs under cluster:");
        for (String key : SshReader.KEYS) hints.put(key, "it belongs under ssh:");
        hints.put("nfs", "it belongs under storage:");
        hints.put("hostKey", "it belongs under a node's ssh:");
        return hints;
    }

    /** Reads and validates the file; HOME comes from the environment (or the user.home property). */
    public static Inventory load(Path file) { return load(file, Map.of()); }

    /** Reads and validates the file; HOME comes from {@code given}, else the environment (or the user.home property). */
    public static Inventory load(Path file, Map<String, String> given) {
        String display = file.toString();
        String text = read(file, display);
        Path absolute = file.toAbsolutePath().normalize();
        Map<String, String> env = new HashMap<>(System.getenv());
        env.putAll(given);
        env.putIfAbsent("HOME", System.getProperty("user.home", ""));
        return parse(absolute, display, text, absolute.getParent(), env);
    }

    /**
     * Validates inventory text. {@code displayName} names the file in messages; relative paths in the
     * inventory are resolved against {@code baseDir}; {@code env} gives HOME for '~'.
     */
    public static Inventory parse(String displayName, String yamlText, Path baseDir, Map<String, String> env) {
        Path file;
        try {
            file = baseDir.resolve(Objects.requireNonNullElse(Path.of(displayName).getFileName(), Path.of("inventory.yaml")));
        } catch (InvalidPathException e) {
            file = baseDir.resolve("inventory.yaml");
        }
        return parse(file, displayName, yamlText, baseDir, env);
    }

    private static Inventory parse(Path file, String displayName, String yamlText, Path baseDir,
                                   Map<String, String> env) {
        return YamlSource.read(displayName, yamlText, "the inventory", "cluster:, ssh:, nodes:, storage:, teams: and kueue:", (root, problems) ->
            inventory(file, root, new ReadContext(problems, baseDir, Optional.ofNullable(env.get("HOME")))));
    }

    private static Optional<Inventory> inventory(Path file, Node root, ReadContext ctx) {
        Optional<Section> top = Section.read(ctx.problems, "", root, TOP_KEYS, TOP_HINTS);
        if (top.isEmpty()) return Optional.empty();
        Section t = top.get();
        ClusterReader clusterReader = new ClusterReader(ctx);
        if (t.value("cluster").isEmpty()) t.missing("cluster", "a mapping with name and kubernetesVersion");
        Optional<Cluster> cluster = t.section("cluster", ClusterReader.KEYS, Map.of()).map(clusterReader::read);
        SshReader.Partial defaults = t.section("ssh", SshReader.KEYS, SshReader.DEFAULTS_HINTS)
            .map(new SshReader(ctx)::read).orElse(SshReader.Partial.NONE);
        if (t.value("nodes").isEmpty()) t.missing("nodes", "a list of nodes");
        List<dev.gpuctl.inventory.Node> nodes = t.list("nodes")
            .map(list -> new NodesReader(ctx).read(t, list, defaults)).orElse(new ArrayList<>());
        Optional<Nfs> nfs = t.section("storage", StorageReader.KEYS, Map.of())
            .flatMap(s -> new StorageReader(ctx.problems).read(s, nodes));
        List<Team> teams = t.list("teams").map(list -> new TeamsReader(ctx.problems).read(t, list, nodes, cluster)).orElse(List.of());
        Kueue kueue = t.section("kueue", ClusterReader.KUEUE_KEYS, Map.of()).map(clusterReader::kueue).orElse(Kueue.defaults());
        cluster.ifPresent(c -> checkPodCidrSize(c, nodes.size(), clusterReader, ctx.problems));
        cluster.ifPresent(c -> checkEndpoint(c, nodes, clusterReader, t, ctx.problems));
        if (cluster.isEmpty() || ctx.problems.any()) return Optional.empty();
        Inventory inv = new Inventory(file, cluster.get(), nodes, nfs, List.copyOf(ctx.warnings), ctx.sshNotes, teams, kueue);
        checkStaticCidrs(inv, root, ctx.problems);
        if (ctx.problems.any()) return Optional.empty();
        return Optional.of(inv);
    }

    /**
     * controlPlaneEndpoint against the nodes: more than one master needs one (the first master's own address would
     * leave the others unreachable when it is down); a VIP must be no node's address and lie in neither the pod nor the
     * service network (whether it is in a master's subnet is checked on the masters, where the subnets are known).
     */
    private static void checkEndpoint(Cluster c, List<dev.gpuctl.inventory.Node> nodes, ClusterReader reader, Section top,
                                      Problems problems) {
        long masters = nodes.stream().filter(dev.gpuctl.inventory.Node::isMaster).count();
        if (masters > 1 && masters % 2 == 1 && masters <= NodesReader.MAX_MASTERS && c.controlPlaneEndpoint().isEmpty() && reader.endpointKey().isEmpty()) {
            problems.at(top.keyNode("cluster").orElse(top.node()), "cluster: " + masters + " masters need a"
                + " controlPlaneEndpoint (expected controlPlaneEndpoint: { vip: IP } for a virtual IP that gpuctl keeps on"
                + " the masters, or { address: NAME_OR_IP, port: 6443 } for a load balancer you run)");
        }
        Optional<ControlPlaneEndpoint> endpoint = c.controlPlaneEndpoint().filter(ControlPlaneEndpoint::isVip);
        Optional<ScalarNode> at = reader.endpointNode();
        if (endpoint.isEmpty() || at.isEmpty()) return;
        String vip = endpoint.get().host();
        byte[] bytes = dev.gpuctl.net.Cidr.parseAddress(vip).orElseThrow();
        dev.gpuctl.net.Cidr single = new dev.gpuctl.net.Cidr(bytes, bytes.length * 8);
        for (var range : List.of(Map.entry("cluster.podCidr", c.podCidr()), Map.entry("cluster.serviceCidr", c.serviceCidr()))) {
            if (range.getValue().contains(single)) {
                problems.at(at.get(), "cluster.controlPlaneEndpoint.vip: " + vip + " is inside " + range.getKey() + " "
                    + range.getValue() + " (expected a free address in the masters' subnet, outside the pod and service networks)");
            }
        }
        for (dev.gpuctl.inventory.Node n : nodes) {
            for (String a : List.of(n.address(), n.nodeIp())) {
                if (dev.gpuctl.net.Cidr.parseAddress(a).map(dev.gpuctl.net.Cidr::formatAddress).filter(vip::equals).isPresent()) {
                    problems.at(at.get(), "cluster.controlPlaneEndpoint.vip: " + vip + " is node '" + n.name() + "''s address"
                        + " (expected a free address: keepalived moves the VIP between the masters, so no host may own it)");
                    break;
                }
            }
        }
    }

    /**
     * The CIDR check on what the inventory alone tells (pod and service networks, node addresses, site networks): an
     * overlap is an error of the file, at the first range of each pair that the file gives (a default has no place).
     */
    private static void checkStaticCidrs(Inventory inv, Node root, Problems problems) {
        for (CidrCheck.Conflict c : CidrCheck.check(inv.staticRanges())) {
            String message = c.message() + " (pick a podCidr/serviceCidr that matches your CNI"
                + " and overlaps no host address or site network)";
            Optional<Node> at = InventoryPlaces.where(root, c.first().source()).or(() -> InventoryPlaces.where(root, c.second().source()));
            at.ifPresentOrElse(n -> problems.at(n, message), () -> problems.whole(message));
        }
    }

    /** kubeadm's controller manager gives each node a /24 of the pod network: it must have enough. */
    private static void checkPodCidrSize(Cluster cluster, int nodeCount, ClusterReader reader, Problems problems) {
        int prefix = cluster.podCidr().prefix();
        if (prefix > 24 || cluster.podCidr().isIpv6()) return;
        long room = 1L << (24 - prefix);
        if (room < nodeCount) {
            String message = "cluster.podCidr: " + cluster.podCidr() + " has room for " + room + " node"
                + (room == 1 ? "" : "s") + " (kubeadm gives each node a /24), but the inventory has " + nodeCount
                + " (expected a shorter prefix, such as /16)";
            reader.podCidrNode().ifPresentOrElse(n -> problems.at(n, message), () -> problems.whole(message));
        }
    }

    /** The file's text, strictly UTF-8; anything that stops that is one "cannot read" error. */
    public static String read(Path file, String display) {
        try {
            if (Files.isDirectory(file)) throw cannotRead(display, "it is a directory");
            if (!Files.exists(file)) throw cannotRead(display, "no such file");
            if (!Files.isRegularFile(file)) throw cannotRead(display, "not a regular file");
            long size = Files.size(file);
            if (size > MAX_BYTES) throw cannotRead(display, "it is " + size + " bytes (gpuctl reads at most 1 MiB)");
            byte[] bytes = Files.readAllBytes(file);
            return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (InventoryException e) {
            throw e;
        } catch (CharacterCodingException e) {
            throw cannotRead(display, "not UTF-8 text");
        } catch (NoSuchFileException e) {
            throw cannotRead(display, "no such file");
        } catch (AccessDeniedException e) {
            throw cannotRead(display, "permission denied");
        } catch (IOException | RuntimeException e) {
            throw cannotRead(display, e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    private static InventoryException cannotRead(String display, String reason) {
        return new InventoryException(List.of(new InventoryError(display, 0, 0, "cannot read: " + reason)));
    }
}
