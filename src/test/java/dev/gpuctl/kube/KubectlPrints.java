package dev.gpuctl.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;

/**
 * What kubectl prints for a {@link KubeFields.Query}'s jsonpath, given the {@code -o json} list it would otherwise
 * print (as client-go's jsonpath prints with missing keys allowed: a map or list as compact JSON, a string as it
 * is, nothing for a missing field, the matches of a {@code [*]} path separated by spaces). For tests that feed
 * recorded {@code -o json} answers to code that now asks for fields.
 */
public final class KubectlPrints {
    private static final ObjectMapper JSON = new ObjectMapper();

    private KubectlPrints() {}

    public static String fields(KubeFields.Query q, String listJson) {
        try {
            StringBuilder out = new StringBuilder();
            for (JsonNode item : JSON.readTree(listJson).path("items")) {
                List<String> values = new ArrayList<>();
                for (String path : q.paths()) values.add(value(item, path));
                out.append(String.join("\t", values)).append('\n');
            }
            return out.toString();
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /**
     * What kubectl prints for {@link ClusterView#COMMAND}, given the {@code -o json} lists of nodes and of pods it
     * would otherwise print: the nodes' lines (tagged N), then the pods' (tagged P).
     */
    public static String clusterView(String nodesJson, String podsJson) {
        try {
            StringBuilder out = new StringBuilder();
            tagged(out, "N", ClusterView.NODE_FIELDS, JSON.readTree(nodesJson));
            tagged(out, "P", ClusterView.POD_FIELDS, JSON.readTree(podsJson));
            return out.toString();
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static void tagged(StringBuilder out, String tag, List<String> paths, JsonNode list) {
        for (JsonNode item : list.path("items")) {
            out.append(tag);
            for (String path : paths) out.append('\t').append(value(item, path));
            out.append('\n');
        }
    }

    private static String value(JsonNode item, String path) {
        int star = path.indexOf("[*]");
        if (star < 0) return text(at(item, path));
        List<String> each = new ArrayList<>();
        for (JsonNode e : at(item, path.substring(0, star))) {
            JsonNode v = at(e, path.substring(star + 4));
            if (!v.isMissingNode()) each.add(text(v));
        }
        return String.join(" ", each);
    }

    private static JsonNode at(JsonNode n, String path) {
        for (String p : path.split("(?<!\\\\)\\.")) {
            java.util.regex.Matcher index = java.util.regex.Pattern.compile("(.*)\\[(\\d+)]").matcher(p);
            n = index.matches() ? n.path(index.group(1)).path(Integer.parseInt(index.group(2))) : n.path(p.replace("\\.", "."));
        }
        return n;
    }

    private static String text(JsonNode v) {
        if (v.isMissingNode() || v.isNull()) return "";
        return v.isContainerNode() ? v.toString() : v.asText();
    }
}
