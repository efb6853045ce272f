package dev.gpuctl.inventory;

import dev.gpuctl.text.Secrets;
import dev.gpuctl.net.Cidr;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Reads the `cluster:` block and applies its defaults. See {@link InventoryLoader} for the rules. Its proxy and
 * controlPlaneEndpoint blocks are read by {@link ProxyReader} and {@link EndpointReader}, its manifest references by
 * {@link ManifestReader}; the rest are the block's keys checked against each other (version, runtime, CNI, CIDRs).
 */
final class ClusterReader {
    static final List<String> KEYS = List.of("name", "kubernetesVersion", "runtime", "cni", "podCidr",
        "serviceCidr", "siteNetworks", "timeServers", "packages", "cniManifest", "cniOperatorManifest", "devicePlugin",
        "controlPlaneSchedulable", "gpuDriver", "proxy", "gpuSharing", "controlPlaneEndpoint");
    static final List<String> ENDPOINT_KEYS = List.of("vip", "address", "port");
    static final List<String> GPU_DRIVER_KEYS = List.of("hold", "holdKernel", "persistenceMode");
    static final List<String> PROXY_KEYS = List.of("http", "https", "noProxy");
    static final List<String> DEVICE_PLUGIN_KEYS = List.of("version", "manifest");
    static final String DEFAULT_SERVICE_CIDR = "10.96.0.0/12";
    static final String DEFAULT_DEVICE_PLUGIN_VERSION = "v0.20.0";
    static final int OLDEST_MINOR = 31;

    private static final Pattern MINOR = Pattern.compile("1\\.(0|[1-9][0-9]{0,2})");
    private static final Pattern PATCH = Pattern.compile("1\\.(0|[1-9][0-9]{0,2})\\.[0-9]+");
    private static final Pattern RELEASE_TAG = Pattern.compile("v[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?");

    private final ReadContext ctx;
    private final Problems problems;
    /** Reads the block's manifest keys (cniManifest, cniOperatorManifest, devicePlugin's, kueue's). */
    private final ManifestReader manifests;
    /** The podCidr value, when the inventory gives one: the node count is checked against it later. */
    private Optional<ScalarNode> podCidrNode = Optional.empty();

    ClusterReader(ReadContext ctx) {
        this.ctx = ctx;
        this.problems = ctx.problems;
        this.endpointReader = new EndpointReader(problems);
        this.manifests = new ManifestReader(ctx);
    }

    Optional<ScalarNode> podCidrNode() { return podCidrNode; }

    /** controlPlaneEndpoint's reader: it keeps where its vip (or address) is written, for the checks against the nodes. */
    private final EndpointReader endpointReader;
    private Optional<Node> endpointKey = Optional.empty();

    Optional<ScalarNode> endpointNode() { return endpointReader.endpointNode(); }

    /** The `controlPlaneEndpoint` key, or empty when the inventory has none. */
    Optional<Node> endpointKey() { return endpointKey; }

    Cluster read(Section c) {
        String name = c.requiredScalar("name", "a DNS-1123 label such as 'gpu-lab'")
            .filter(n -> check(Names.isDnsLabel(n.getValue()), n, c.child("name") + ": '" + n.getValue()
                + "' is not a valid cluster name (expected a DNS-1123 label: at most 63 lowercase letters,"
                + " digits and '-', starting and ending with a letter or digit)"))
            .map(ScalarNode::getValue).orElse("");
        String version = kubernetesVersion(c).orElse("");
        ContainerRuntime runtime = Choices.read(c, "runtime", "runtime", ContainerRuntime.values(), ContainerRuntime::key)
            .orElse(ContainerRuntime.CONTAINERD);
        Cni cni = Choices.read(c, "cni", "cni", Cni.values(), Cni::key).orElse(Cni.FLANNEL);
        podCidrNode = c.scalar("podCidr");
        Cidr podCidr = podCidrNode.flatMap(n -> clusterCidr(n, c.child("podCidr"), "pod"))
            .orElse(Cidr.parse(cni.defaultPodCidr()).orElseThrow());
        Cidr serviceCidr = c.scalar("serviceCidr").flatMap(n -> clusterCidr(n, c.child("serviceCidr"), "service"))
            .orElse(Cidr.parse(DEFAULT_SERVICE_CIDR).orElseThrow());
        List<Cidr> siteNetworks = new ArrayList<>();
        forEachScalar(c, "siteNetworks", (node, path) -> cidr(node, path).ifPresent(siteNetworks::add));
        List<String> timeServers = new ArrayList<>();
        forEachScalar(c, "timeServers", (node, path) -> {
            Optional<String> address = Names.canonicalAddress(node.getValue());
            if (address.isEmpty()) problems.at(node, path + ": '" + node.getValue() + "' is not a valid time server"
                + " (expected an IPv4 or IPv6 address, or a host name per RFC 1123)");
            address.ifPresent(a -> timeServers.add(node.getValue()));
        });
        PackageSource packages = Choices.read(c, "packages", "packages value", PackageSource.values(), PackageSource::key)
            .orElse(PackageSource.UPSTREAM);
        Optional<ManifestRef> givenCni = manifests.manifest(c, "cniManifest");
        ManifestRef cniManifest = givenCni.orElse(ManifestReader.pinned(ManifestReader.defaultCniManifest(cni)));
        ManifestRef operator = cniOperator(c, cni, cniManifest, givenCni.isPresent()).orElse(null);
        DevicePlugin devicePlugin = c.section("devicePlugin", DEVICE_PLUGIN_KEYS, Map.of())
            .map(this::devicePlugin).orElse(devicePlugin(DEFAULT_DEVICE_PLUGIN_VERSION, Optional.empty()));
        boolean schedulable = c.bool("controlPlaneSchedulable").orElse(false);
        GpuDriver gpuDriver = c.section("gpuDriver", GPU_DRIVER_KEYS, Map.of())
            .map(d -> new GpuDriver(d.bool("hold").orElse(true), d.bool("holdKernel").orElse(false), d.bool("persistenceMode")))
            .orElse(GpuDriver.DEFAULT);
        Optional<Proxy> proxy = c.section("proxy", PROXY_KEYS, Map.of("no_proxy", "write it as noProxy:", "noproxy", "write it as noProxy:"))
            .flatMap(new ProxyReader(problems)::read);
        GpuSharing sharing = GpuSharingReader.read(c, "gpuSharing").orElse(GpuSharing.NONE);
        endpointKey = c.keyNode("controlPlaneEndpoint");
        Optional<ControlPlaneEndpoint> endpoint = c.section("controlPlaneEndpoint", ENDPOINT_KEYS, Map.of())
            .flatMap(endpointReader::read);
        return new Cluster(name, version, runtime, cni, podCidr, serviceCidr, siteNetworks, timeServers,
            packages, cniManifest, operator, devicePlugin, schedulable, gpuDriver, proxy, sharing, endpoint);
    }

    static final String TIGERA_OPERATOR = "tigera-operator.yaml";

    /**
     * Calico's Tigera operator manifest: {@code cniOperatorManifest} when given; else beside the custom resources (the
     * same release directory of a URL, the same folder of a local file). Calico's custom resources are of kinds only
     * the operator's CRDs define: without the operator, kubectl fails late ("no matches for kind Installation ...
     * ensure CRDs are installed first"), so a local file with no operator beside it, or a checksummed URL whose
     * derived operator URL could not be checked, is refused here with the fix. Empty with flannel.
     */
    private Optional<ManifestRef> cniOperator(Section c, Cni cni, ManifestRef customResources, boolean given) {
        Optional<ManifestRef> explicit = manifests.manifest(c, "cniOperatorManifest");
        if (cni != Cni.CALICO) {
            c.value("cniOperatorManifest").ifPresent(n -> problems.at(n, c.child("cniOperatorManifest")
                + ": only calico has an operator manifest (expected no cniOperatorManifest with cni: " + cni.key() + ")"));
            return Optional.empty();
        }
        if (explicit.isPresent() || c.value("cniOperatorManifest").isPresent()) return explicit;
        Node at = c.value("cniManifest").orElse(null);
        if (customResources.isFile()) {
            Path sibling = customResources.file().resolveSibling(TIGERA_OPERATOR);
            if (Files.isRegularFile(sibling)) {
                Optional<String> unusable = ReadContext.unusableManifest(sibling);
                if (unusable.isEmpty()) return Optional.of(ManifestRef.ofFile(sibling));
                String message = c.child("cniManifest") + ": the Tigera operator beside Calico's custom resources: " + unusable.get();
                if (at != null) problems.at(at, message); else problems.whole(message);
                return Optional.empty();
            }
            String message = c.child("cniManifest") + ": Calico's custom resources " + customResources.file()
                + " have no " + TIGERA_OPERATOR + " beside them (" + sibling + " does not exist), and "
                + c.child("cniOperatorManifest") + " is not set: without the Tigera operator kubectl refuses the"
                + " custom resources (no matches for kind Installation). Put the operator manifest of the same Calico"
                + " release there, or set cniOperatorManifest to its file, URL or { url, sha256 }";
            if (at != null) problems.at(at, message); else problems.whole(message);
            return Optional.empty();
        }
        String url = customResources.url().toString();
        String derived = url.substring(0, url.lastIndexOf('/') + 1) + TIGERA_OPERATOR;
        if (given && customResources.checksum().isPresent()) {
            problems.at(at, c.child("cniManifest") + ": the custom resources are pinned by sha256, but the Tigera operator"
                + " beside them (" + Secrets.maskUrl(derived) + ") would be fetched unchecked (expected " + c.child("cniOperatorManifest")
                + ": { url: " + Secrets.maskUrl(derived) + ", sha256: ... } with the operator's sha256sum)");
            return Optional.empty();
        }
        return Optional.of(ManifestReader.pinned(derived));
    }

    private boolean check(boolean ok, Node node, String message) {
        if (!ok) problems.at(node, message);
        return ok;
    }

    /**
     * A quoted minor version, "1.31" or newer. An unquoted 1.35 is a YAML float (and 1.30 would
     * lose its zero in most YAML tools), "1.35.2" is a patch version.
     */
    private Optional<String> kubernetesVersion(Section c) {
        String path = c.child("kubernetesVersion");
        Optional<ScalarNode> node = c.requiredScalar("kubernetesVersion", "a quoted minor version such as \"1.35\"");
        if (node.isEmpty()) return Optional.empty();
        String text = node.get().getValue();
        if (node.get().getTag().equals(Tag.FLOAT) || node.get().getTag().equals(Tag.INT)) {
            problems.at(node.get(), path + ": " + text + " is a number in YAML (quote it: \"" + text + "\")");
            return Optional.empty();
        }
        if (PATCH.matcher(text).matches()) {
            problems.at(node.get(), path + ": '" + text + "' is a patch version (expected a minor version such as \""
                + text.substring(0, text.lastIndexOf('.')) + "\": gpuctl installs and holds its newest patch)");
            return Optional.empty();
        }
        Matcher m = MINOR.matcher(text);
        if (!m.matches()) {
            problems.at(node.get(), path + ": '" + text + "' is not a Kubernetes minor version (expected e.g. \"1.35\")");
            return Optional.empty();
        }
        if (Integer.parseInt(m.group(1)) < OLDEST_MINOR) {
            problems.at(node.get(), path + ": '" + text + "' is too old (expected 1." + OLDEST_MINOR
                + " or newer: gpuctl writes kubeadm.k8s.io/v1beta4 configuration)");
            return Optional.empty();
        }
        return Optional.of(text);
    }

    /** A network written with its prefix length and without host bits. */
    private Optional<Cidr> cidr(ScalarNode node, String path) {
        String text = node.getValue();
        Optional<Cidr> cidr = Cidr.parse(text);
        if (cidr.isEmpty() || !text.contains("/")) {
            String example = cidr.map(c -> " (expected a network with its prefix length, such as " + c + ")")
                .orElse(" (expected an IPv4 or IPv6 network such as 10.244.0.0/16)");
            problems.at(node, path + ": '" + text + "' is not a valid CIDR" + example);
            return Optional.empty();
        }
        if (Cidr.hasHostBits(text)) {
            problems.at(node, path + ": '" + text + "' has host bits set (expected the network address: " + cidr.get() + ")");
            return Optional.empty();
        }
        return cidr;
    }

    /**
     * podCidr and serviceCidr: IPv4 only. kubeadm gives each node a /24 of the pod network, and
     * kube-apiserver takes at most 2^20 service addresses; kubeadm puts cluster DNS at the 10th.
     */
    private Optional<Cidr> clusterCidr(ScalarNode node, String path, String kind) {
        Optional<Cidr> cidr = cidr(node, path);
        if (cidr.isEmpty()) return cidr;
        Cidr c = cidr.get();
        if (c.isIpv6()) {
            problems.at(node, path + ": IPv6/dual-stack " + kind + " networks are not supported yet (expected an IPv4 CIDR)");
            return Optional.empty();
        }
        if (kind.equals("pod") && c.prefix() > 24) {
            problems.at(node, path + ": " + c + " is too small (kubeadm gives each node a /24 of it:"
                + " expected a prefix of /24 or shorter, such as /16)");
            return Optional.empty();
        }
        if (kind.equals("service") && c.prefix() < 12) {
            problems.at(node, path + ": " + c + " is too large (kube-apiserver takes at most 2^20 service"
                + " addresses: expected a prefix of /12 or longer)");
            return Optional.empty();
        }
        if (kind.equals("service") && c.prefix() > 28) {
            problems.at(node, path + ": " + c + " is too small (kubeadm puts the cluster DNS at its 10th"
                + " address: expected a prefix of /28 or shorter)");
            return Optional.empty();
        }
        return cidr;
    }

    static final List<String> KUEUE_KEYS = List.of("version", "manifest");

    /** {@code kueue: { version, manifest }} (top level, beside teams). */
    Kueue kueue(Section k) {
        String version = k.scalar("version").filter(n -> check(RELEASE_TAG.matcher(n.getValue()).matches(), n,
                k.child("version") + ": '" + n.getValue() + "' is not a release tag (expected e.g. \"" + Kueue.DEFAULT_VERSION + "\")"))
            .map(ScalarNode::getValue).orElse(Kueue.DEFAULT_VERSION);
        return new Kueue(version, manifests.manifest(k, "manifest").orElse(ManifestReader.pinned(Kueue.defaultManifest(version))));
    }

    private DevicePlugin devicePlugin(Section d) {
        String version = d.scalar("version").filter(n -> check(RELEASE_TAG.matcher(n.getValue()).matches(), n,
                d.child("version") + ": '" + n.getValue() + "' is not a release tag (expected e.g. \"v0.20.0\")"))
            .map(ScalarNode::getValue).orElse(DEFAULT_DEVICE_PLUGIN_VERSION);
        return devicePlugin(version, manifests.manifest(d, "manifest"));
    }

    private static DevicePlugin devicePlugin(String version, Optional<ManifestRef> manifest) {
        return new DevicePlugin(version, manifest.orElse(ManifestReader.pinned(ManifestReader.defaultDevicePluginManifest(version))));
    }

    interface ScalarVisitor { void visit(ScalarNode node, String path); }

    /** Each item of a list of scalars, with its path ("cluster.siteNetworks[2]"); other items are reported. */
    static void forEachScalar(Section section, String key, ScalarVisitor visitor) {
        Optional<SequenceNode> list = section.list(key);
        if (list.isEmpty()) return;
        List<Node> items = list.get().getValue();
        for (int i = 0; i < items.size(); i++) {
            String path = section.child(key) + "[" + i + "]";
            Node item = items.get(i);
            if (Section.isPlainScalar(item)) {
                ScalarNode s = (ScalarNode) item;
                visitor.visit(s, path);
            } else {
                section.problems().at(item, path + ": expected a string, got " + Section.describe(item));
            }
        }
    }
}
