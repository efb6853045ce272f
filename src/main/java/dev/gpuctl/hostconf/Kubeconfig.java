package dev.gpuctl.hostconf;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.representer.Representer;

/**
 * A cluster's admin kubeconfig merged into a user's kubeconfig file, the way {@code kubectl config} keeps one:
 * the cluster, user and context entries are named after the cluster (the context may be named otherwise), an entry
 * of the same name is replaced, every other entry and setting stays. current-context is set only when the file
 * has none. Pure: text in, text out.
 */
public final class Kubeconfig {
    private Kubeconfig() {}

    /** A kubeconfig that cannot be read as one: what is wrong, for a person. */
    public static final class Invalid extends RuntimeException {
        public Invalid(String message) { super(message); }
    }

    /** What a merge made: the new file's text, and whether it set current-context. */
    public record Merged(String text, boolean setCurrentContext) {}

    /**
     * {@code admin} (kubeadm's admin.conf: one cluster, one user, one context) merged into {@code existing} (empty
     * when the file does not exist yet) as cluster {@code clusterName}, user {@code clusterName-admin} and context
     * {@code context}.
     */
    public static Merged merge(String existing, String admin, String clusterName, String context) {
        Map<String, Object> adminDoc = read(admin, "the master's admin.conf");
        Map<String, Object> cluster = only(adminDoc, "clusters", "cluster", "the master's admin.conf");
        Map<String, Object> user = only(adminDoc, "users", "user", "the master's admin.conf");
        String userName = clusterName + "-admin";

        Map<String, Object> doc = existing.isBlank() ? new LinkedHashMap<>() : read(existing, "the kubeconfig file");
        doc.putIfAbsent("apiVersion", "v1");
        doc.putIfAbsent("kind", "Config");
        put(doc, "clusters", clusterName, "cluster", cluster);
        put(doc, "users", userName, "user", user);
        Map<String, Object> ctx = new LinkedHashMap<>();
        ctx.put("cluster", clusterName);
        ctx.put("user", userName);
        put(doc, "contexts", context, "context", ctx);
        Object current = doc.get("current-context");
        boolean set = current == null || current.toString().isEmpty();
        if (set) doc.put("current-context", context);
        DumperOptions o = new DumperOptions();
        o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        o.setSplitLines(false);
        return new Merged(new Yaml(new SafeConstructor(new LoaderOptions()), new Representer(o), o).dump(doc), set);
    }

    /** The names of the contexts in a kubeconfig's text (empty when it has none). */
    public static List<String> contexts(String text) {
        if (text.isBlank()) return List.of();
        List<String> names = new ArrayList<>();
        for (Object e : list(read(text, "the kubeconfig file"), "contexts", "the kubeconfig file")) {
            if (e instanceof Map<?, ?> m && m.get("name") != null) names.add(m.get("name").toString());
        }
        return names;
    }

    /**
     * The base64 {@code client-certificate-data} of the current context's user (or of the only user when no context
     * is current); empty when that user has none (a token, a certificate file).
     */
    public static Optional<String> currentClientCertificateData(String text) {
        Map<String, Object> doc = read(text, "the kubeconfig file");
        List<Object> users = list(doc, "users", "the kubeconfig file");
        String user = null;
        Object current = doc.get("current-context");
        for (Object e : list(doc, "contexts", "the kubeconfig file")) {
            if (e instanceof Map<?, ?> m && current != null && current.toString().equals(String.valueOf(m.get("name")))
                && m.get("context") instanceof Map<?, ?> c && c.get("user") != null) user = c.get("user").toString();
        }
        for (Object e : users) {
            if (e instanceof Map<?, ?> m && (user == null ? users.size() == 1 : user.equals(String.valueOf(m.get("name"))))
                && m.get("user") instanceof Map<?, ?> u && u.get("client-certificate-data") != null) {
                return Optional.of(u.get("client-certificate-data").toString());
            }
        }
        return Optional.empty();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> read(String text, String what) {
        LoaderOptions lo = new LoaderOptions();
        lo.setAllowDuplicateKeys(false);
        lo.setMaxAliasesForCollections(50);
        lo.setCodePointLimit(16 << 20);
        Object o;
        try {
            o = new Yaml(new SafeConstructor(lo)).load(text);
        } catch (RuntimeException e) {
            throw new Invalid(what + " is not valid YAML: " + Optional.ofNullable(e.getMessage()).orElse(e.toString()).lines().findFirst().orElse(""));
        }
        if (o == null) return new LinkedHashMap<>();
        if (!(o instanceof Map<?, ?> m)) throw new Invalid(what + " is not a kubeconfig (its top level is not a mapping)");
        Object kind = m.get("kind");
        if (kind != null && !"Config".equals(kind)) throw new Invalid(what + " is not a kubeconfig (kind: " + kind + ", expected Config)");
        return new LinkedHashMap<>((Map<String, Object>) m);
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Map<String, Object> doc, String key, String what) {
        Object v = doc.get(key);
        if (v == null) return new ArrayList<>();
        if (!(v instanceof List<?> l)) throw new Invalid(what + ": '" + key + "' is not a list");
        return new ArrayList<>((List<Object>) l);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> only(Map<String, Object> doc, String key, String field, String what) {
        List<Object> l = list(doc, key, what);
        if (l.size() != 1 || !(l.get(0) instanceof Map<?, ?> e) || !(e.get(field) instanceof Map<?, ?> body)) {
            throw new Invalid(what + " does not hold exactly one entry under '" + key + "' with a '" + field + "'");
        }
        return new LinkedHashMap<>((Map<String, Object>) body);
    }

    /** Replaces the entry named {@code name} in the list {@code key} (in place), or adds it at the end. */
    private static void put(Map<String, Object> doc, String key, String name, String field, Map<String, Object> body) {
        List<Object> l = list(doc, key, "the kubeconfig file");
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("name", name);
        entry.put(field, body);
        int at = -1;
        for (int i = 0; i < l.size(); i++) {
            if (l.get(i) instanceof Map<?, ?> m && name.equals(String.valueOf(m.get("name")))) at = i;
        }
        if (at >= 0) l.set(at, entry); else l.add(entry);
        doc.put(key, l);
    }
}
