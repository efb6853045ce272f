package dev.gpuctl.kube;

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
 * {@link Kubeconfig}'s YAML: a kubeconfig's text read as a document (safely: no aliases bombs, no duplicate keys, no
 * types beyond YAML's own), its lists and entries, written back in kubectl's block style, and values from the master
 * shown without control characters. Split from Kubeconfig (what is taken from admin.conf and why) along that seam.
 */
final class KubeconfigYaml {
    private KubeconfigYaml() {}

    static boolean named(Map<String, Object> doc, String key, String name) {
        return list(doc, key, "the kubeconfig file").stream().anyMatch(e -> e instanceof Map<?, ?> m && name.equals(String.valueOf(m.get("name"))));
    }

    static String dump(Map<String, Object> doc) {
        DumperOptions o = new DumperOptions();
        o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        o.setSplitLines(false);
        return new Yaml(new SafeConstructor(new LoaderOptions()), new Representer(o), o).dump(doc);
    }

    /** A value from the master, shown without control characters (a terminal escape acts on the admin's terminal). */
    static String printable(String s) {
        String t = s.codePoints().map(c -> Character.isISOControl(c) ? '?' : c)
            .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append).toString();
        return t.length() > 100 ? t.substring(0, 97) + "..." : t;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> read(String text, String what) {
        LoaderOptions lo = new LoaderOptions();
        lo.setAllowDuplicateKeys(false);
        lo.setMaxAliasesForCollections(50);
        lo.setCodePointLimit(16 << 20);
        Object o;
        try {
            o = new Yaml(new SafeConstructor(lo)).load(text);
        } catch (RuntimeException e) {
            throw new Kubeconfig.Invalid(what + " is not valid YAML: " + printable(Optional.ofNullable(e.getMessage()).orElse(e.toString()).lines().findFirst().orElse("")));
        }
        if (o == null) return new LinkedHashMap<>();
        if (!(o instanceof Map<?, ?> m)) throw new Kubeconfig.Invalid(what + " is not a kubeconfig (its top level is not a mapping)");
        Object kind = m.get("kind");
        if (kind != null && !"Config".equals(kind)) throw new Kubeconfig.Invalid(what + " is not a kubeconfig (kind: " + printable(String.valueOf(kind)) + ", expected Config)");
        return new LinkedHashMap<>((Map<String, Object>) m);
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Map<String, Object> doc, String key, String what) {
        Object v = doc.get(key);
        if (v == null) return new ArrayList<>();
        if (!(v instanceof List<?> l)) throw new Kubeconfig.Invalid(what + ": '" + key + "' is not a list");
        return new ArrayList<>((List<Object>) l);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> only(Map<String, Object> doc, String key, String field, String what) {
        List<Object> l = list(doc, key, what);
        if (l.size() != 1 || !(l.get(0) instanceof Map<?, ?> e) || !(e.get(field) instanceof Map<?, ?> body)) {
            throw new Kubeconfig.Invalid(what + " does not hold exactly one entry under '" + key + "' with a '" + field + "'");
        }
        return new LinkedHashMap<>((Map<String, Object>) body);
    }

    /** Replaces the entry named {@code name} in the list {@code key} (in place), or adds it at the end. */
    static void put(Map<String, Object> doc, String key, String name, String field, Map<String, Object> body) {
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
