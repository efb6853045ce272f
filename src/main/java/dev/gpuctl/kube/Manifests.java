package dev.gpuctl.kube;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.net.Cidr;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.text.JsonText;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Puts the cluster's pod CIDR into a CNI manifest, changing nothing else in the file.
 *
 * <p>The YAML is only <em>composed</em> (snakeyaml's node tree, no objects constructed) to find
 * the exact character range of the one value to change; the new text is spliced into the original
 * file, so every other byte of the upstream manifest (comments, quoting, key order, the other
 * documents) stays as published.
 *
 * <p>Over 300 lines with two parts that change apart (the CNI CIDR splice; a manifest read and held to Kubernetes
 * objects, {@link #objects}): the second is the next to go to a class of its own.
 */
public final class Manifests {

    /** The largest manifest gpuctl reads: 16 MiB (Calico's operator manifest, the largest known, is under 2 MiB). */
    public static final int MAX_BYTES = 16 * 1024 * 1024;

    private static final Pattern NETWORK_VALUE = Pattern.compile("(\"Network\"\\s*:\\s*\")([^\"]*)(\")");

    private Manifests() {
    }

    /**
     * Sets {@code "Network"} in the {@code net-conf.json} of kube-flannel's ConfigMap
     * (kube-flannel.yml, flannel's IPv4 pod network).
     *
     * @param podCidr an IPv4 CIDR such as 10.244.0.0/16
     * @throws HostConfException when podCidr is not an IPv4 CIDR, when no ConfigMap with
     *                           {@code data.net-conf.json} is in the file, or when that JSON has no
     *                           (or more than one) {@code "Network"} string
     */
    public static String patchFlannelNetwork(String manifestYaml, String podCidr) {
        Cidr cidr = network(podCidr);
        if (cidr.isIpv6()) {
            throw new HostConfException("flannel's \"Network\" is its IPv4 pod network, and " + podCidr
                    + " is IPv6 (flannel puts that in \"IPv6Network\", which gpuctl does not set)");
        }
        List<ScalarNode> found = new ArrayList<>();
        for (Node doc : compose(manifestYaml, "the flannel manifest")) {
            if (!"ConfigMap".equals(scalar(doc, "kind").orElse(null))) continue;
            child(doc, "data").flatMap(d -> child(d, "net-conf.json"))
                    .filter(ScalarNode.class::isInstance).map(ScalarNode.class::cast).ifPresent(found::add);
        }
        if (found.isEmpty()) {
            throw new HostConfException("the flannel manifest has no ConfigMap with data.net-conf.json "
                    + "(is it kube-flannel.yml?); gpuctl cannot set the pod network in it");
        }
        if (found.size() > 1) {
            throw new HostConfException("the flannel manifest has " + found.size()
                    + " ConfigMaps with data.net-conf.json; gpuctl does not know which one flannel reads");
        }
        ScalarNode netConf = found.get(0);
        JsonNode json = JsonText.parse(netConf.getValue(), "net-conf.json in the flannel manifest", null);
        if (!json.path("Network").isTextual()) {
            throw new HostConfException("net-conf.json in the flannel manifest (line "
                    + (netConf.getStartMark().getLine() + 1) + ") has no \"Network\" string to set");
        }
        int from = offset(manifestYaml, netConf.getStartMark());
        int to = offset(manifestYaml, netConf.getEndMark());
        String block = manifestYaml.substring(from, to);
        Matcher m = NETWORK_VALUE.matcher(block);
        if (!m.find()) {
            throw new HostConfException("net-conf.json in the flannel manifest (line "
                    + (netConf.getStartMark().getLine() + 1) + ") writes \"Network\" in a form gpuctl does not edit");
        }
        int valueStart = from + m.start(2);
        int valueEnd = from + m.end(2);
        if (m.find()) {
            throw new HostConfException("net-conf.json in the flannel manifest has more than one \"Network\"");
        }
        return manifestYaml.substring(0, valueStart) + podCidr.strip() + manifestYaml.substring(valueEnd);
    }

    /**
     * Sets {@code spec.calicoNetwork.ipPools[*].cidr} of the {@code Installation} in Calico's
     * custom-resources.yaml, for every pool of podCidr's address family (an IPv6 pool of a
     * dual-stack file is left alone when podCidr is IPv4, and the other way round). The value's
     * quoting style is kept.
     *
     * @throws HostConfException when podCidr is not a CIDR, when there is no Installation, no
     *                           {@code spec.calicoNetwork.ipPools} list, or no pool of that family
     */
    public static String patchCalicoCidr(String customResourcesYaml, String podCidr) {
        Cidr cidr = network(podCidr);
        List<Node> installations = new ArrayList<>();
        for (Node doc : compose(customResourcesYaml, "the Calico custom resources")) {
            if ("Installation".equals(scalar(doc, "kind").orElse(null))) installations.add(doc);
        }
        if (installations.isEmpty()) {
            throw new HostConfException("the Calico custom resources have no kind: Installation; "
                    + "gpuctl cannot set the pod network in them");
        }
        List<ScalarNode> targets = new ArrayList<>();
        boolean anyPools = false;
        for (Node inst : installations) {
            Optional<Node> pools = child(inst, "spec").flatMap(s -> child(s, "calicoNetwork"))
                    .flatMap(c -> child(c, "ipPools"));
            if (pools.isEmpty() || !(pools.get() instanceof SequenceNode seq)) continue;
            anyPools = true;
            for (Node pool : seq.getValue()) {
                child(pool, "cidr").filter(ScalarNode.class::isInstance).map(ScalarNode.class::cast)
                        .filter(n -> Cidr.parse(n.getValue()).map(c -> c.isIpv6() == cidr.isIpv6()).orElse(false))
                        .ifPresent(targets::add);
            }
        }
        if (!anyPools) {
            throw new HostConfException("the Calico Installation has no spec.calicoNetwork.ipPools list; "
                    + "gpuctl cannot set the pod network in it");
        }
        if (targets.isEmpty()) {
            throw new HostConfException("the Calico Installation has no " + (cidr.isIpv6() ? "IPv6" : "IPv4")
                    + " pool with a cidr under spec.calicoNetwork.ipPools to set to " + podCidr);
        }
        StringBuilder out = new StringBuilder(customResourcesYaml);
        // splice from the end so that earlier offsets stay valid
        for (int i = targets.size() - 1; i >= 0; i--) {
            ScalarNode n = targets.get(i);
            int from = offset(customResourcesYaml, n.getStartMark());
            int to = offset(customResourcesYaml, n.getEndMark());
            String old = customResourcesYaml.substring(from, to);
            char q = old.isEmpty() ? ' ' : old.charAt(0);
            String value = (q == '"' || q == '\'') ? q + podCidr.strip() + q : podCidr.strip();
            out.replace(from, to, value);
        }
        return out.toString();
    }

    /**
     * A manifest file's text: at most {@link #MAX_BYTES}, strict UTF-8 (a BOM dropped), YAML that composes (every
     * document; nothing is constructed).
     *
     * @param what names the file in messages ("manifest /path/to/kube-flannel.yml")
     * @throws HostConfException saying which of these it is not, and where for YAML
     */
    public static String text(byte[] bytes, String what) {
        if (bytes.length > MAX_BYTES) {
            throw new HostConfException(what + " is " + bytes.length + " bytes (gpuctl reads at most 16 MiB)");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new HostConfException(what + " is not UTF-8 text (expected a YAML manifest)");
        }
        if (text.startsWith("\uFEFF")) text = text.substring(1);
        if (compose(text, what).isEmpty()) throw new HostConfException(what + " has no YAML document (expected a manifest)");
        return text;
    }

    /**
     * One Kubernetes object of a manifest, as the plan shows it.
     *
     * @param namespace empty when the object names none (cluster-scoped, or the default namespace)
     * @param name      {@code metadata.name}, or {@code metadata.generateName} followed by '*', or "?" when neither
     * @param line      the line of the manifest its document (or List item) starts on, from 1
     */
    public record KubeObject(String apiVersion, String kind, String namespace, String name, int line) {
        /** KIND/NAMESPACE/NAME, or KIND/NAME without a namespace. */
        public String label() { return kind + "/" + (namespace.isEmpty() ? "" : namespace + "/") + name; }
    }

    /** A private key in PEM (RSA, EC, OpenSSH, PKCS#8, encrypted or not), as text. */
    private static final Pattern PEM_PRIVATE_KEY = Pattern.compile("-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----");

    /**
     * Keys whose values are credentials: AWS's shared credentials file and environment, a kubeconfig's client key, a
     * GCP service account key's {@code private_key}; as a YAML or JSON key, an INI or env assignment. Names a Kubernetes
     * object's own fields never take (they are camelCase), so that an upstream manifest's schemas never match.
     */
    private static final Pattern CREDENTIAL_KEY = Pattern.compile(
        "(?i)(?<![\\w-])[\"']?(aws_secret_access_key|aws_session_token|client-key-data|private_key)[\"']?[ \\t]*[:=]");

    /** Base64 text long enough to hide a key or a credentials file (Secret data, client-key-data). */
    private static final Pattern BASE64 = Pattern.compile("[A-Za-z0-9+/\\s]{20,}={0,2}\\s*");

    /**
     * The objects of a manifest, in order, after refusing what must never be applied to a cluster as admin or
     * uploaded to its master: a document that is not a Kubernetes object (not a mapping, no {@code apiVersion} or
     * {@code kind}), a kubeconfig ({@code kind: Config}, or {@code clusters} and {@code users}), and anything that holds
     * a private key or cloud credentials (see {@link #CREDENTIAL_KEY}), as text or base64-encoded in a value (a
     * Secret's {@code data}). A {@code kind: List}'s items are its objects.
     *
     * @param what names the file in messages ("manifest /path/to/kube-flannel.yml")
     * @throws HostConfException naming the line (and column) of the manifest and what is wrong there
     */
    public static List<KubeObject> objects(String text, String what) {
        List<KubeObject> out = new ArrayList<>();
        int n = 0;
        for (Node doc : compose(text, what)) {
            n++;
            String where = what + ", document " + n + " (line " + line(doc) + ")";
            object(doc, where, out);
            if ("List".equals(scalar(doc, "kind").orElse(null))) {
                Optional<Node> items = child(doc, "items");
                if (items.isEmpty() || !(items.get() instanceof SequenceNode seq)) {
                    throw new HostConfException(where + ": kind: List without an items list (expected items: [ ...objects ])");
                }
                out.remove(out.size() - 1);
                for (Node item : seq.getValue()) object(item, what + ", item at line " + line(item), out);
            }
            encodedCredentials(doc, what);
        }
        credentials(text, 0, what, "");
        if (out.isEmpty()) throw new HostConfException(what + " holds no Kubernetes object (expected documents with apiVersion and kind)");
        return out;
    }

    private static void object(Node doc, String where, List<KubeObject> out) {
        if (!(doc instanceof MappingNode)) {
            throw new HostConfException(where + " is not a Kubernetes object (expected a mapping with apiVersion and kind, got "
                + (doc instanceof SequenceNode ? "a list" : "a scalar") + ")");
        }
        if (child(doc, "clusters").isPresent() && child(doc, "users").isPresent()
            || "Config".equals(scalar(doc, "kind").orElse(null))) {
            throw new HostConfException(where + " is a kubeconfig (kind: Config: a cluster's address and someone's credentials),"
                + " not a manifest: gpuctl would upload it to the master and apply it as cluster admin (expected the manifest's"
                + " own file, e.g. the device plugin's DaemonSet)");
        }
        String apiVersion = scalar(doc, "apiVersion").filter(v -> !v.isBlank()).orElseThrow(() -> new HostConfException(
            where + " has no apiVersion (expected a Kubernetes object: apiVersion, kind, metadata)"));
        String kind = scalar(doc, "kind").filter(v -> !v.isBlank()).orElseThrow(() -> new HostConfException(
            where + " has no kind (expected a Kubernetes object: apiVersion, kind, metadata)"));
        Optional<Node> meta = child(doc, "metadata");
        String namespace = meta.flatMap(m -> scalar(m, "namespace")).orElse("");
        String name = meta.flatMap(m -> scalar(m, "name")).filter(v -> !v.isBlank())
            .or(() -> meta.flatMap(m -> scalar(m, "generateName")).map(g -> g + "*")).orElse("?");
        out.add(new KubeObject(apiVersion, kind, namespace, name, line(doc)));
    }

    /**
     * Refuses a private key or a credential key in {@code text}: the manifest's own text ({@code valueLine} 0: the
     * match's line and column are named), or a value decoded from base64 at line {@code valueLine} of the manifest.
     */
    private static void credentials(String text, int valueLine, String what, String how) {
        for (Pattern p : List.of(PEM_PRIVATE_KEY, CREDENTIAL_KEY)) {
            Matcher m = p.matcher(text);
            if (!m.find()) continue;
            int lineStart = text.lastIndexOf('\n', m.start()) + 1;
            int lineNo = valueLine > 0 ? valueLine : 1 + (int) text.substring(0, m.start()).chars().filter(c -> c == '\n').count();
            String found = p == PEM_PRIVATE_KEY ? "a private key (" + m.group() + ")" : "credentials (" + m.group(1) + ")";
            throw new HostConfException(what + " line " + lineNo + (valueLine == 0 ? ", column " + (m.start() - lineStart + 1) : "")
                + ": holds " + found + how + ": gpuctl refuses to upload secrets to the master as a manifest (expected"
                + " Kubernetes objects without keys; give the cluster its secrets another way, e.g. kubectl create secret)");
        }
    }

    /** Refuses base64 values (a Secret's data, client-key-data) that decode to a private key or credentials. */
    private static void encodedCredentials(Node node, String what) {
        if (node instanceof MappingNode map) {
            for (NodeTuple t : map.getValue()) encodedCredentials(t.getValueNode(), what);
        } else if (node instanceof SequenceNode seq) {
            for (Node n : seq.getValue()) encodedCredentials(n, what);
        } else if (node instanceof ScalarNode sc && BASE64.matcher(sc.getValue()).matches()) {
            byte[] decoded;
            try {
                decoded = java.util.Base64.getMimeDecoder().decode(sc.getValue().strip());
            } catch (IllegalArgumentException e) {
                return;
            }
            credentials(new String(decoded, StandardCharsets.ISO_8859_1), line(node), what,
                " (base64-encoded in the value there)");
        }
    }

    private static int line(Node node) { return node.getStartMark().getLine() + 1; }

    private static List<Node> compose(String yaml, String what) {
        try {
            List<Node> docs = new ArrayList<>();
            LoaderOptions options = new LoaderOptions();
            options.setCodePointLimit(MAX_BYTES);
            options.setAllowRecursiveKeys(false);
            for (Node n : new Yaml(options).composeAll(new StringReader(yaml))) {
                if (n != null) docs.add(n);
            }
            return docs;
        } catch (org.yaml.snakeyaml.error.MarkedYAMLException e) {
            Mark at = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
            String where = at == null ? "" : " at line " + (at.getLine() + 1) + ", column " + (at.getColumn() + 1);
            String problem = e.getProblem() == null ? "syntax error" : e.getProblem().strip();
            throw new HostConfException(what + " is not valid YAML" + where + ": " + problem, e);
        } catch (YAMLException | StackOverflowError e) {
            throw new HostConfException(what + " is not valid YAML: "
                + String.valueOf(e.getMessage()).lines().findFirst().orElse(""), e);
        }
    }

    private static Optional<Node> child(Node node, String key) {
        if (!(node instanceof MappingNode map)) return Optional.empty();
        for (NodeTuple t : map.getValue()) {
            if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals(key)) return Optional.of(t.getValueNode());
        }
        return Optional.empty();
    }

    private static Optional<String> scalar(Node node, String key) {
        return child(node, key).filter(ScalarNode.class::isInstance).map(n -> ((ScalarNode) n).getValue());
    }

    /** snakeyaml's marks count code points; Java strings count UTF-16 units. */
    private static int offset(String text, Mark mark) {
        return text.offsetByCodePoints(0, mark.getIndex());
    }

    /** A network with an explicit prefix: a bare address would be read as a /32, never a pod network. */
    private static Cidr network(String podCidr) {
        if (podCidr == null || !podCidr.contains("/")) throw badCidr(podCidr);
        return Cidr.parse(podCidr).orElseThrow(() -> badCidr(podCidr));
    }

    private static HostConfException badCidr(String podCidr) {
        return new HostConfException("pod CIDR " + podCidr + " is not a network in CIDR notation (like 10.244.0.0/16)");
    }
}
