package dev.gpuctl.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.text.JsonText;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * Moving a running cluster to a new controlPlaneEndpoint (a single master's own address to a VIP or a site load
 * balancer), the way kubeadm's "Reconfiguring a kubeadm cluster" does it: what the cluster says now (kubeadm-config's
 * ClusterConfiguration, its control-plane nodes), whether the change is safe, and the edited texts. Pure: the answers
 * of commands in, texts and judgements out.
 */
public final class EndpointMigration {
    private EndpointMigration() {}

    /** Between the kubeadm-config ConfigMap and the node list in {@link View#parse}'s answer. */
    public static final String SEPARATOR = "--gpuctl-nodes--";

    /** A control-plane node as the cluster has it. */
    public record Master(String name, boolean ready) {}

    /**
     * What the cluster says: kubeadm-config's {@code controlPlaneEndpoint} ("" when the cluster was made without one)
     * and its control-plane nodes (label node-role.kubernetes.io/control-plane).
     */
    public record View(String endpoint, List<Master> masters) {
        public View { masters = List.copyOf(masters); }

        /**
         * The answer of {@code kubectl -n kube-system get cm kubeadm-config -o json; echo SEPARATOR; kubectl get nodes -o json};
         * empty for a blank answer (no cluster on the master yet).
         * @throws HostConfException when the answer is not those two JSON documents or the ClusterConfiguration is no YAML mapping
         */
        public static Optional<View> parse(String answer) {
            if (answer.isBlank()) return Optional.empty();
            int sep = answer.indexOf(SEPARATOR);
            if (sep < 0) throw new HostConfException("unexpected answer (no " + SEPARATOR + " line)");
            String endpoint = endpointOf(clusterConfiguration(answer.substring(0, sep)));
            JsonNode nodes = JsonText.parse(answer.substring(sep + SEPARATOR.length()), "kubectl get nodes -o json", "");
            List<Master> masters = new ArrayList<>();
            for (JsonNode n : nodes.path("items")) {
                if (!n.path("metadata").path("labels").has("node-role.kubernetes.io/control-plane")) continue;
                boolean ready = false;
                for (JsonNode c : n.path("status").path("conditions")) {
                    if (c.path("type").asText().equals("Ready")) ready = c.path("status").asText().equals("True");
                }
                masters.add(new Master(n.path("metadata").path("name").asText(), ready));
            }
            return Optional.of(new View(endpoint, masters));
        }
    }

    /** data.ClusterConfiguration of the kubeadm-config ConfigMap, as {@code kubectl get cm -o json} prints it. */
    public static String clusterConfiguration(String configMapJson) {
        JsonNode cm = JsonText.parse(configMapJson, "the kubeadm-config ConfigMap", "");
        JsonNode cc = cm.path("data").path("ClusterConfiguration");
        if (!cc.isTextual()) throw new HostConfException("the kubeadm-config ConfigMap has no data.ClusterConfiguration");
        return cc.asText();
    }

    /** controlPlaneEndpoint of a ClusterConfiguration (YAML); "" when it has none. */
    public static String endpointOf(String clusterConfigurationYaml) {
        Object v = mapping(clusterConfigurationYaml, "ClusterConfiguration").get("controlPlaneEndpoint");
        return v == null ? "" : v.toString().strip();
    }

    /**
     * The ClusterConfiguration without its controlPlaneEndpoint, as block YAML ending in a newline: the caller appends
     * the new {@code controlPlaneEndpoint:} line (which may hold a fact reference filled in on the host).
     */
    public static String withoutEndpoint(String clusterConfigurationYaml) {
        Map<String, Object> m = new LinkedHashMap<>(mapping(clusterConfigurationYaml, "ClusterConfiguration"));
        m.remove("controlPlaneEndpoint");
        m.putIfAbsent("apiVersion", "kubeadm.k8s.io/v1beta4");
        m.putIfAbsent("kind", "ClusterConfiguration");
        DumperOptions o = new DumperOptions();
        o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        String text = new Yaml(o).dump(m);
        return text.endsWith("\n") ? text : text + "\n";
    }

    /** The servers a kubeconfig names (clusters[].cluster.server), in order. */
    public static List<String> servers(String kubeconfigYaml) {
        List<String> out = new ArrayList<>();
        Object clusters = mapping(kubeconfigYaml, "kubeconfig").get("clusters");
        if (clusters instanceof List<?> l) {
            for (Object c : l) {
                if (c instanceof Map<?, ?> e && e.get("cluster") instanceof Map<?, ?> cl && cl.get("server") != null) {
                    out.add(cl.get("server").toString());
                }
            }
        }
        return out;
    }

    /**
     * A ConfigMap holding a kubeconfig under {@code key} (kube-public/cluster-info's "kubeconfig", kube-proxy's
     * "kubeconfig.conf"): the servers it names; empty when the answer is kubectl's NotFound.
     */
    public static Optional<List<String>> configMapServers(String configMapJson, String key) {
        if (configMapJson.isBlank()) return Optional.empty();
        JsonNode data = JsonText.parse(configMapJson, "the ConfigMap", "").path("data").path(key);
        if (!data.isTextual()) throw new HostConfException("the ConfigMap has no data." + key);
        return Optional.of(servers(data.asText()));
    }

    /**
     * Whether kube-proxy's DaemonSet is back after its pods were deleted (kubeadm's "Reconfiguring a kubeadm cluster":
     * the pods load a changed kube-proxy ConfigMap only when they are made again): every pod of the DaemonSet Running,
     * each container ready, none being deleted, as many as the DaemonSet's {@code status.desiredNumberScheduled}.
     * {@code answer} is {@code {"ds": DAEMONSET, "pods": POD_LIST}} as kubectl printed them (-o json); blank when the
     * cluster has no kube-proxy DaemonSet (nothing to wait for). Empty when back, else what is missing.
     * @throws HostConfException when the answer is not that JSON
     */
    public static Optional<String> kubeProxyNotBack(String answer) {
        if (answer.isBlank()) return Optional.empty();
        JsonNode a = JsonText.parse(answer, "kube-proxy's DaemonSet and pods", "");
        JsonNode ds = a.path("ds");
        if (!ds.isObject()) throw new HostConfException("no DaemonSet in the answer");
        String uid = ds.path("metadata").path("uid").asText();
        int desired = ds.path("status").path("desiredNumberScheduled").asInt(0);
        int back = 0;
        List<String> notYet = new ArrayList<>();
        for (JsonNode p : a.path("pods").path("items")) {
            boolean owned = false;
            for (JsonNode o : p.path("metadata").path("ownerReferences")) owned |= o.path("uid").asText().equals(uid);
            if (!owned) continue;
            String phase = p.path("status").path("phase").asText("Pending");
            boolean ready = p.path("status").path("containerStatuses").size() > 0;
            for (JsonNode c : p.path("status").path("containerStatuses")) ready &= c.path("ready").asBoolean(false);
            String name = p.path("metadata").path("name").asText() + " on " + p.path("spec").path("nodeName").asText("(no node)");
            if (p.path("metadata").has("deletionTimestamp")) notYet.add(name + ": being deleted");
            else if (!phase.equals("Running")) notYet.add(name + ": " + phase);
            else if (!ready) notYet.add(name + ": Running, not ready");
            else back++;
        }
        if (back >= desired && notYet.isEmpty()) return Optional.empty();
        return Optional.of("kube-system/kube-proxy has " + back + " of " + desired + " pods Running and ready"
            + (notYet.isEmpty() ? "" : " (" + String.join(", ", notYet) + ")"));
    }

    /**
     * The ConfigMap with every server of its kubeconfig under {@code key} set to {@code server} (the rest of the
     * kubeconfig and the object kept; its resourceVersion too, so that {@code kubectl replace} refuses a concurrent edit).
     */
    public static String configMapWithServer(String configMapJson, String key, String server) {
        JsonNode cm = JsonText.parse(configMapJson, "the ConfigMap", "");
        JsonNode data = cm.path("data").path(key);
        if (!data.isTextual() || !(cm instanceof ObjectNode obj)) throw new HostConfException("the ConfigMap has no data." + key);
        Map<String, Object> kc = new LinkedHashMap<>(mapping(data.asText(), "kubeconfig"));
        Object clusters = kc.get("clusters");
        if (clusters instanceof List<?> l) {
            List<Object> copy = new ArrayList<>();
            for (Object c : l) {
                if (c instanceof Map<?, ?> e && e.get("cluster") instanceof Map<?, ?> cl) {
                    Map<Object, Object> ne = new LinkedHashMap<>(e);
                    Map<Object, Object> ncl = new LinkedHashMap<>(cl);
                    ncl.put("server", server);
                    ne.put("cluster", ncl);
                    copy.add(ne);
                } else {
                    copy.add(c);
                }
            }
            kc.put("clusters", copy);
        }
        DumperOptions o = new DumperOptions();
        o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        ((ObjectNode) obj.path("data")).put(key, new Yaml(o).dump(kc));
        ObjectNode md = (ObjectNode) obj.path("metadata");
        md.remove("managedFields");
        return obj.toString();
    }

    private static final Pattern SAN = Pattern.compile("(?:DNS|IP Address):([^,\\s]+)");

    /** The DNS names and IPs of {@code openssl x509 -noout -ext subjectAltName}'s answer. */
    public static Set<String> subjectAltNames(String opensslText) {
        Set<String> out = new java.util.LinkedHashSet<>();
        Matcher m = SAN.matcher(opensslText);
        while (m.find()) out.add(m.group(1));
        return out;
    }

    /** The host of HOST:PORT (an IPv6 address without its brackets). */
    public static String host(String hostPort) {
        String s = hostPort.strip();
        if (s.startsWith("[")) {
            int end = s.indexOf(']');
            return end > 0 ? s.substring(1, end) : s;
        }
        int colon = s.lastIndexOf(':');
        return colon > 0 && s.indexOf(':') == colon ? s.substring(0, colon) : s;
    }

    /**
     * Whether bootstrap may change the cluster's control plane as the inventory asks, from what the cluster says; the
     * refusal when not.
     *
     * @param view          what the cluster says
     * @param masters       the inventory's masters, by node name
     * @param wanted        the endpoint the inventory gives (HOST:PORT)
     * @param ownEndpoint   the first master's own address and 6443 (what a cluster without an endpoint talks to)
     * @param inventory     the inventory file, as the commands name it
     */
    public static Optional<String> refusal(View view, List<String> masters, String wanted, String ownEndpoint, String inventory) {
        List<String> orphaned = view.masters().stream().map(Master::name).filter(n -> !masters.contains(n)).toList();
        if (!orphaned.isEmpty()) {
            return Optional.of("the cluster has control-plane node(s) " + String.join(", ", orphaned) + " that the inventory does not list"
                + " as masters; gpuctl does not shrink a control plane by an inventory edit (its etcd member would be left behind):"
                + " remove it first (gpuctl remove-node " + orphaned.get(0) + " " + inventory + ") or list it again with role: master");
        }
        String now = view.endpoint().isEmpty() ? ownEndpoint : view.endpoint();
        boolean endpointChanges = !now.equals(wanted);
        boolean mastersAdded = masters.stream().anyMatch(m -> view.masters().stream().noneMatch(v -> v.name().equals(m)));
        if (!endpointChanges && !mastersAdded) return Optional.empty();
        List<String> down = view.masters().stream().filter(m -> !m.ready()).map(Master::name).toList();
        if (!down.isEmpty()) {
            return Optional.of("master " + String.join(", ", down) + " is not Ready; gpuctl changes no control plane (the endpoint "
                + (endpointChanges ? now + " to " + wanted : "kept") + ", masters added) while a master is down: bring it back"
                + " (kubectl get nodes; journalctl -u kubelet on it), then run bootstrap again");
        }
        if (endpointChanges && (!now.equals(ownEndpoint) || view.masters().size() > 1)) {
            return Optional.of("the cluster's controlPlaneEndpoint is " + now + " and the inventory asks for " + wanted + "; gpuctl"
                + " moves only a single master's own address (" + ownEndpoint + ") to a VIP or a site load balancer: the"
                + " certificates of the other masters and every node joined through " + now + " name it, and they would be"
                + " orphaned; put controlPlaneEndpoint back to " + now + " in the inventory");
        }
        return Optional.empty();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> mapping(String yaml, String what) {
        Object doc;
        try {
            doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
        } catch (YAMLException e) {
            throw new HostConfException(what + " is not YAML: " + e.getMessage().lines().findFirst().orElse(""));
        }
        if (doc == null) return Map.of();
        if (!(doc instanceof Map<?, ?> m)) throw new HostConfException(what + " is not a YAML mapping");
        return (Map<String, Object>) m;
    }
}
