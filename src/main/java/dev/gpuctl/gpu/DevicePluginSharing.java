package dev.gpuctl.gpu;

import dev.gpuctl.text.HostConfException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.representer.Representer;

/**
 * GPU sharing through the NVIDIA device plugin, the way its Helm chart does it, applied to the static manifest: a
 * ConfigMap of named plugin configurations, a config manager beside the plugin (init container and sidecar) that
 * copies the one named by the node's {@value #CONFIG_LABEL} label to the plugin's config file, the RBAC the config
 * manager needs to read that label, and for MPS the MPS control daemon on nodes labelled {@value #MPS_LABEL}.
 *
 * <p>{@link #patch} is a pure function of the manifest and the configurations: it removes what an earlier patch added
 * and adds what is wanted now, so that patching an already patched manifest gives the same text, and a manifest that
 * never had anything added comes back unchanged when nothing is wanted.
 *
 * <p>Over 300 lines as one thing: what {@link #patch} adds and what it removes are the same objects, written and
 * recognised side by side so that a patch stays idempotent.
 */
public final class DevicePluginSharing {
    public static final String CONFIG_LABEL = "nvidia.com/device-plugin.config";
    public static final String MPS_LABEL = "nvidia.com/mps.capable";
    public static final String CONFIG_MAP = "nvidia-device-plugin-configs";
    public static final String SERVICE_ACCOUNT = "nvidia-device-plugin";
    /** The config every GPU node without sharing gets, and the config manager's default. */
    public static final String NO_SHARING = "none";
    static final String MANAGED_BY = "app.kubernetes.io/managed-by";
    static final String GPUCTL = "gpuctl";
    static final String INIT = "nvidia-device-plugin-init";
    static final String SIDECAR = "nvidia-device-plugin-sidecar";
    static final String MPS_DAEMON = "nvidia-device-plugin-mps-control-daemon";

    private DevicePluginSharing() {}

    /**
     * One named configuration: time-slicing or MPS with {@code replicas}, or none (replicas 1); {@code migStrategy}
     * the plugin's MIG strategy (none, single, mixed), only with mode none.
     */
    public record Config(String name, String mode, int replicas, String migStrategy) {
        public Config {
            if (!List.of("none", "time-slicing", "mps").contains(mode)) throw new IllegalArgumentException(mode);
            if (!List.of("none", "single", "mixed").contains(migStrategy)) throw new IllegalArgumentException(migStrategy);
            if (!migStrategy.equals("none") && !mode.equals("none")) throw new IllegalArgumentException("MIG with " + mode);
        }

        public Config(String name, String mode, int replicas) { this(name, mode, replicas, "none"); }

        public static Config none() { return new Config(NO_SHARING, "none", 1); }

        /** The config of a node whose GPUs are cut into MIG instances, advertised with {@code strategy}. */
        public static Config mig(String name, String strategy) { return new Config(name, "none", 1, strategy); }
    }

    /** The plugin's configuration file (its config format, version v1) for {@code c}. */
    public static String configFile(Config c) {
        StringBuilder sb = new StringBuilder("version: v1\nflags:\n  migStrategy: " + c.migStrategy() + "\n");
        if (c.mode().equals("none")) return sb.toString();
        sb.append("sharing:\n  ").append(c.mode().equals("mps") ? "mps" : "timeSlicing").append(":\n");
        if (c.mode().equals("time-slicing")) sb.append("    renameByDefault: false\n    failRequestsGreaterThanOne: false\n");
        sb.append("    resources:\n    - name: nvidia.com/gpu\n      replicas: ").append(c.replicas()).append('\n');
        return sb.toString();
    }

    /**
     * The manifest with sharing set up for {@code configs} (empty: no sharing, the manifest as upstream ships it).
     * Throws {@link HostConfException} when the manifest has no DaemonSet running the device plugin's image.
     */
    public static String patch(String manifest, Collection<Config> configs) {
        List<Object> docs = new ArrayList<>();
        for (Object d : yaml().loadAll(manifest)) if (d != null) docs.add(d);
        List<Object> kept = new ArrayList<>();
        boolean removed = false;
        for (Object d : docs) {
            if (ours(d)) removed = true;
            else kept.add(d);
        }
        if (configs.isEmpty() && !removed && !hasPluginDaemonSet(kept)) return manifest;
        Map<String, Object> ds = pluginDaemonSet(kept);
        removed |= stripConfigManager(podSpec(ds));
        if (configs.isEmpty()) return removed ? dump(kept) : manifest;
        Map<String, Config> byName = new TreeMap<>();
        byName.put(NO_SHARING, Config.none());
        for (Config c : configs) byName.put(c.name(), c);
        String image = image(ds);
        addConfigManager(podSpec(ds), image);
        kept.addAll(objects(namespace(ds), byName.values(), image));
        return dump(kept);
    }

    private static boolean ours(Object doc) {
        return doc instanceof Map<?, ?> m && m.get("metadata") instanceof Map<?, ?> md && md.get("labels") instanceof Map<?, ?> l
            && GPUCTL.equals(l.get(MANAGED_BY));
    }

    private static boolean hasPluginDaemonSet(List<Object> docs) {
        try {
            pluginDaemonSet(docs);
            return true;
        } catch (HostConfException e) {
            return false;
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> pluginDaemonSet(List<Object> docs) {
        for (Object d : docs) {
            if (d instanceof Map<?, ?> m && "DaemonSet".equals(m.get("kind"))) {
                Map<String, Object> spec = podSpec((Map<String, Object>) m);
                for (Object c : list(spec, "containers")) {
                    if (c instanceof Map<?, ?> cm && String.valueOf(cm.get("image")).contains("k8s-device-plugin")) {
                        return (Map<String, Object>) m;
                    }
                }
            }
        }
        throw new HostConfException("the device plugin manifest has no DaemonSet running the k8s-device-plugin image, so"
            + " gpuctl cannot set up GPU sharing in it (use the upstream static manifest, or leave gpuSharing out)");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> podSpec(Map<String, Object> ds) {
        Map<String, Object> spec = (Map<String, Object>) ds.computeIfAbsent("spec", k -> new LinkedHashMap<>());
        Map<String, Object> tpl = (Map<String, Object>) spec.computeIfAbsent("template", k -> new LinkedHashMap<>());
        return (Map<String, Object>) tpl.computeIfAbsent("spec", k -> new LinkedHashMap<>());
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (v instanceof List<?> l) return (List<Object>) l;
        List<Object> l = new ArrayList<>();
        m.put(key, l);
        return l;
    }

    private static String namespace(Map<String, Object> ds) {
        return ds.get("metadata") instanceof Map<?, ?> md && md.get("namespace") instanceof String ns ? ns : "kube-system";
    }

    @SuppressWarnings("unchecked")
    private static String image(Map<String, Object> ds) {
        for (Object c : list(podSpec(ds), "containers")) {
            Map<String, Object> cm = (Map<String, Object>) c;
            if (String.valueOf(cm.get("image")).contains("k8s-device-plugin")) return String.valueOf(cm.get("image"));
        }
        throw new IllegalStateException("no plugin container");
    }

    private static boolean named(Object o, String name) {
        return o instanceof Map<?, ?> m && name.equals(m.get("name"));
    }

    /** Removes what {@link #addConfigManager} adds; whether anything was there. */
    @SuppressWarnings("unchecked")
    private static boolean stripConfigManager(Map<String, Object> spec) {
        boolean changed = false;
        for (String key : List.of("initContainers", "containers")) {
            if (!(spec.get(key) instanceof List<?> cs)) continue;
            changed |= cs.removeIf(c -> named(c, INIT) || named(c, SIDECAR));
            if (cs.isEmpty()) spec.remove(key);
            for (Object c : cs) {
                Map<String, Object> cm = (Map<String, Object>) c;
                if (cm.get("env") instanceof List<?> env) changed |= env.removeIf(e -> named(e, "CONFIG_FILE"));
                if (cm.get("volumeMounts") instanceof List<?> vm) changed |= vm.removeIf(v -> named(v, "available-configs") || named(v, "config"));
            }
        }
        if (spec.get("volumes") instanceof List<?> vs) changed |= vs.removeIf(v -> named(v, "available-configs") || named(v, "config"));
        if (spec.remove("shareProcessNamespace") != null) changed = true;
        if (SERVICE_ACCOUNT.equals(spec.get("serviceAccountName"))) {
            spec.remove("serviceAccountName");
            changed = true;
        }
        return changed;
    }

    @SuppressWarnings("unchecked")
    private static void addConfigManager(Map<String, Object> spec, String image) {
        spec.put("serviceAccountName", SERVICE_ACCOUNT);
        spec.put("shareProcessNamespace", true);
        list(spec, "initContainers").add(0, configManager(INIT, image, true, "nvidia-device-plugin"));
        List<Object> containers = list(spec, "containers");
        for (Object c : containers) {
            Map<String, Object> cm = (Map<String, Object>) c;
            if (!String.valueOf(cm.get("image")).contains("k8s-device-plugin")) continue;
            List<Object> env = list(cm, "env");
            env.add(map("name", "CONFIG_FILE", "value", "/config/config.yaml"));
            list(cm, "volumeMounts").addAll(configMounts());
        }
        containers.add(0, configManager(SIDECAR, image, false, "nvidia-device-plugin"));
        list(spec, "volumes").addAll(configVolumes());
    }

    private static Map<String, Object> configManager(String name, String image, boolean oneshot, String process) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("image", image);
        c.put("name", name);
        c.put("command", List.of("config-manager"));
        List<Object> env = new ArrayList<>();
        env.add(map("name", "ONESHOT", "value", String.valueOf(oneshot)));
        env.add(map("name", "KUBECONFIG", "value", ""));
        env.add(map("name", "NODE_NAME", "valueFrom", map("fieldRef", map("fieldPath", "spec.nodeName"))));
        env.add(map("name", "NODE_LABEL", "value", CONFIG_LABEL));
        env.add(map("name", "CONFIG_FILE_SRCDIR", "value", "/available-configs"));
        env.add(map("name", "CONFIG_FILE_DST", "value", "/config/config.yaml"));
        env.add(map("name", "DEFAULT_CONFIG", "value", NO_SHARING));
        env.add(map("name", "FALLBACK_STRATEGIES", "value", "named,single"));
        env.add(map("name", "SEND_SIGNAL", "value", String.valueOf(!oneshot)));
        env.add(map("name", "SIGNAL", "value", oneshot ? "" : "1"));
        env.add(map("name", "PROCESS_TO_SIGNAL", "value", oneshot ? "" : process));
        c.put("env", env);
        c.put("volumeMounts", configMounts());
        if (!oneshot) {
            c.put("securityContext", map("allowPrivilegeEscalation", false, "capabilities", map("drop", List.of("ALL"))));
        }
        return c;
    }

    private static List<Object> configMounts() {
        return new ArrayList<>(List.of(map("name", "available-configs", "mountPath", "/available-configs"),
            map("name", "config", "mountPath", "/config")));
    }

    private static List<Object> configVolumes() {
        return new ArrayList<>(List.of(map("name", "available-configs", "configMap", map("name", CONFIG_MAP)),
            map("name", "config", "emptyDir", map())));
    }

    private static Map<String, Object> meta(String name, String namespace) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        if (namespace != null) m.put("namespace", namespace);
        m.put("labels", map(MANAGED_BY, GPUCTL));
        return m;
    }

    private static Map<String, Object> object(String apiVersion, String kind, Map<String, Object> metadata) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("apiVersion", apiVersion);
        o.put("kind", kind);
        o.put("metadata", metadata);
        return o;
    }

    /** The ServiceAccount, its read access to nodes, the ConfigMap and, when a config uses MPS, the MPS daemon. */
    private static List<Object> objects(String ns, Collection<Config> configs, String image) {
        List<Object> out = new ArrayList<>();
        out.add(object("v1", "ServiceAccount", meta(SERVICE_ACCOUNT, ns)));
        Map<String, Object> role = object("rbac.authorization.k8s.io/v1", "ClusterRole", meta("gpuctl-nvidia-device-plugin", null));
        role.put("rules", List.of(map("apiGroups", List.of(""), "resources", List.of("nodes"), "verbs", List.of("get", "list", "watch"))));
        out.add(role);
        Map<String, Object> binding = object("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", meta("gpuctl-nvidia-device-plugin", null));
        binding.put("subjects", List.of(map("kind", "ServiceAccount", "name", SERVICE_ACCOUNT, "namespace", ns)));
        binding.put("roleRef", map("kind", "ClusterRole", "name", "gpuctl-nvidia-device-plugin", "apiGroup", "rbac.authorization.k8s.io"));
        out.add(binding);
        Map<String, Object> cm = object("v1", "ConfigMap", meta(CONFIG_MAP, ns));
        Map<String, Object> data = new LinkedHashMap<>();
        for (Config c : configs) data.put(c.name(), configFile(c));
        cm.put("data", data);
        out.add(cm);
        if (configs.stream().anyMatch(c -> c.mode().equals("mps"))) out.add(mpsDaemon(ns, image));
        return out;
    }

    /** The MPS control daemon, as the plugin's Helm chart runs it: on nodes labelled {@value #MPS_LABEL}=true. */
    private static Map<String, Object> mpsDaemon(String ns, String image) {
        Map<String, Object> ds = object("apps/v1", "DaemonSet", meta(MPS_DAEMON, ns));
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("selector", map("matchLabels", map("name", MPS_DAEMON)));
        Map<String, Object> pod = new LinkedHashMap<>();
        pod.put("serviceAccountName", SERVICE_ACCOUNT);
        pod.put("shareProcessNamespace", true);
        pod.put("priorityClassName", "system-node-critical");
        pod.put("nodeSelector", map(MPS_LABEL, "true"));
        pod.put("tolerations", List.of(map("key", "nvidia.com/gpu", "operator", "Exists", "effect", "NoSchedule")));
        Map<String, Object> mounts = new LinkedHashMap<>();
        mounts.put("image", image);
        mounts.put("name", "mps-control-daemon-mounts");
        mounts.put("command", List.of("mps-control-daemon", "mount-shm"));
        mounts.put("securityContext", map("privileged", true));
        mounts.put("volumeMounts", List.of(map("name", "mps-root", "mountPath", "/mps", "mountPropagation", "Bidirectional")));
        pod.put("initContainers", List.of(mounts, configManager("mps-control-daemon-init", image, true, "")));
        Map<String, Object> daemon = new LinkedHashMap<>();
        daemon.put("image", image);
        daemon.put("name", "mps-control-daemon-ctr");
        daemon.put("command", List.of("mps-control-daemon"));
        daemon.put("env", List.of(map("name", "NODE_NAME", "valueFrom", map("fieldRef", map("fieldPath", "spec.nodeName"))),
            map("name", "CONFIG_FILE", "value", "/config/config.yaml"),
            map("name", "NVIDIA_VISIBLE_DEVICES", "value", "all"),
            map("name", "NVIDIA_DRIVER_CAPABILITIES", "value", "compute,utility")));
        daemon.put("securityContext", map("privileged", true));
        List<Object> daemonMounts = new ArrayList<>(List.of(map("name", "mps-shm", "mountPath", "/dev/shm"),
            map("name", "mps-root", "mountPath", "/mps")));
        daemonMounts.addAll(configMounts());
        daemon.put("volumeMounts", daemonMounts);
        pod.put("containers", List.of(configManager("mps-control-daemon-sidecar", image, false, "/usr/bin/mps-control-daemon"), daemon));
        List<Object> volumes = new ArrayList<>(List.of(
            map("name", "mps-root", "hostPath", map("path", "/run/nvidia/mps", "type", "DirectoryOrCreate")),
            map("name", "mps-shm", "hostPath", map("path", "/run/nvidia/mps/shm"))));
        volumes.addAll(configVolumes());
        pod.put("volumes", volumes);
        spec.put("template", map("metadata", map("labels", map("name", MPS_DAEMON)), "spec", pod));
        ds.put("spec", spec);
        return ds;
    }

    /** A map in the order given (Map.of's order changes from one JVM to the next, and the dump must not). */
    private static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }

    private static Yaml yaml() {
        LoaderOptions lo = new LoaderOptions();
        lo.setMaxAliasesForCollections(50);
        lo.setAllowDuplicateKeys(false);
        DumperOptions o = new DumperOptions();
        o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        o.setSplitLines(false);
        return new Yaml(new SafeConstructor(lo), new Representer(o), o, lo);
    }

    private static String dump(List<Object> docs) {
        return yaml().dumpAll(docs.stream().map(Objects::requireNonNull).iterator());
    }
}
