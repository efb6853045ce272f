package dev.gpuctl.kube;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.net.Cidr;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.text.JsonText;
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
 * A manifest file read and held to Kubernetes objects is {@link ManifestObjects}'s.
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


    /** Every YAML document of {@code yaml}, composed (nothing constructed); invalid YAML names its line and column. */
    static List<Node> compose(String yaml, String what) {
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

    static Optional<Node> child(Node node, String key) {
        if (!(node instanceof MappingNode map)) return Optional.empty();
        for (NodeTuple t : map.getValue()) {
            if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals(key)) return Optional.of(t.getValueNode());
        }
        return Optional.empty();
    }

    static Optional<String> scalar(Node node, String key) {
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
