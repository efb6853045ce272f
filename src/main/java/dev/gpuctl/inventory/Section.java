package dev.gpuctl.inventory;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * One YAML mapping of the inventory with a fixed set of keys. Reading it reports non-string keys,
 * merge keys, duplicate keys and unknown keys (with the closest known key as a suggestion); the
 * typed getters report values of the wrong type. A key whose value is empty (null) counts as absent.
 */
public final class Section {
    private static final Set<Tag> SCALAR_TAGS =
        Set.of(Tag.STR, Tag.INT, Tag.FLOAT, Tag.BOOL, Tag.NULL, Tag.TIMESTAMP);

    private final Problems problems;
    private final String path;
    private final MappingNode mapping;
    private final Map<String, NodeTuple> entries = new LinkedHashMap<>();

    private Section(Problems problems, String path, MappingNode mapping) {
        this.problems = problems;
        this.path = path;
        this.mapping = mapping;
    }

    /**
     * Reads a mapping whose keys must be among {@code keys}. {@code hints} maps a key that belongs
     * elsewhere to a note saying where ("it belongs under cluster:").
     */
    public static Optional<Section> read(Problems problems, String path, Node node, List<String> keys,
                                  Map<String, String> hints) {
        if (!(node instanceof MappingNode mapping) || !tagIs(node, Tag.MAP)) {
            problems.at(node, name(path) + ": expected a mapping, got " + describe(node));
            return Optional.empty();
        }
        Section section = new Section(problems, path, mapping);
        for (NodeTuple tuple : mapping.getValue()) section.addEntry(tuple, keys, hints);
        return Optional.of(section);
    }

    private void addEntry(NodeTuple tuple, List<String> keys, Map<String, String> hints) {
        Node keyNode = tuple.getKeyNode();
        if (keyNode.getTag().equals(Tag.MERGE)) {
            problems.at(keyNode, "merge keys ('<<') are not supported in " + where() + " (write the keys out)");
            return;
        }
        if (!(keyNode instanceof ScalarNode scalar) || !SCALAR_TAGS.contains(keyNode.getTag())) {
            problems.at(keyNode, "keys in " + where() + " must be plain strings, got " + describe(keyNode));
            return;
        }
        String key = scalar.getValue();
        NodeTuple first = entries.get(key);
        if (first != null) {
            problems.at(keyNode, "duplicate key '" + key + "' in " + where()
                + " (first at line " + Problems.line(first.getKeyNode()) + ")");
        } else if (!keys.contains(key)) {
            problems.at(keyNode, "unknown key '" + key + "' in " + where() + " (" + unknownKeyHint(key, keys, hints) + ")");
        } else {
            entries.put(key, tuple);
        }
    }

    private static String unknownKeyHint(String key, List<String> keys, Map<String, String> hints) {
        if (hints.containsKey(key)) return hints.get(key);
        return Suggestions.closest(key, keys)
            .map(k -> "did you mean '" + k + "'?")
            .orElse("expected one of: " + String.join(", ", keys));
    }

    /** "cluster.podCidr", or "cluster" for a key at the top level. */
    String child(String key) { return path.isEmpty() ? key : path + "." + key; }

    String path() { return path; }

    public MappingNode node() { return mapping; }

    public Problems problems() { return problems; }

    private String where() { return path.isEmpty() ? "the top level" : path; }

    private static String name(String path) { return path.isEmpty() ? "the inventory" : path; }

    /** The key's value, absent when the key is missing or its value is empty. */
    public Optional<Node> value(String key) {
        NodeTuple tuple = entries.get(key);
        if (tuple == null || isNull(tuple.getValueNode())) return Optional.empty();
        return Optional.of(tuple.getValueNode());
    }

    /** The key itself (for errors about the key as a whole, such as "the list is empty"). */
    Optional<Node> keyNode(String key) {
        return Optional.ofNullable(entries.get(key)).map(NodeTuple::getKeyNode);
    }

    /** Reports a required key that is missing (at this mapping) or empty (at the key). */
    public void missing(String key, String expected) {
        NodeTuple tuple = entries.get(key);
        if (tuple == null) {
            problems.at(mapping, "missing required key '" + key + "' in " + where() + " (expected " + expected + ")");
        } else {
            problems.at(tuple.getKeyNode(), child(key) + ": empty value (expected " + expected + ")");
        }
    }

    /** A scalar value of any plain type (string, number, boolean, date), as written. */
    public Optional<ScalarNode> scalar(String key) {
        return value(key).flatMap(node -> {
            if (node instanceof ScalarNode s && SCALAR_TAGS.contains(node.getTag())) return Optional.of(s);
            problems.at(node, child(key) + ": expected a string, got " + describe(node));
            return Optional.empty();
        });
    }

    public Optional<ScalarNode> requiredScalar(String key, String expected) {
        if (value(key).isEmpty()) missing(key, expected);
        return scalar(key);
    }

    public Optional<String> string(String key) { return scalar(key).map(ScalarNode::getValue); }

    public Optional<Section> section(String key, List<String> keys, Map<String, String> hints) {
        return value(key).flatMap(node -> read(problems, child(key), node, keys, hints));
    }

    public Optional<SequenceNode> list(String key) {
        return value(key).flatMap(node -> {
            if (node instanceof SequenceNode seq && tagIs(node, Tag.SEQ)) return Optional.of(seq);
            problems.at(node, child(key) + ": expected a list, got " + describe(node));
            return Optional.empty();
        });
    }

    /** true/false (YAML 1.1 also reads yes/no/on/off as booleans). */
    Optional<Boolean> bool(String key) {
        return value(key).flatMap(node -> {
            if (node instanceof ScalarNode s && node.getTag().equals(Tag.BOOL)) {
                return Optional.of(Set.of("true", "yes", "on").contains(s.getValue().toLowerCase(Locale.ROOT)));
            }
            problems.at(node, child(key) + ": expected true or false, got " + describe(node));
            return Optional.empty();
        });
    }

    /** A TCP port, 1..65535, written as a plain decimal number. */
    Optional<Integer> port(String key) {
        return value(key).flatMap(node -> {
            if (!(node instanceof ScalarNode s) || !node.getTag().equals(Tag.INT) || !s.getValue().matches("[0-9]{1,9}")) {
                problems.at(node, child(key) + ": expected a port number (1..65535), got " + describe(node));
                return Optional.empty();
            }
            int port = Integer.parseInt(s.getValue());
            if (port < 1 || port > 65535) {
                problems.at(node, child(key) + ": port " + port + " is out of range (expected 1..65535)");
                return Optional.empty();
            }
            return Optional.of(port);
        });
    }

    /** A scalar of a standard type other than null. */
    public static boolean isPlainScalar(Node node) {
        return node instanceof ScalarNode && SCALAR_TAGS.contains(node.getTag()) && !isNull(node);
    }

    public static boolean isNull(Node node) {
        return node instanceof ScalarNode && node.getTag().equals(Tag.NULL);
    }

    private static boolean tagIs(Node node, Tag expected) { return node.getTag().equals(expected); }

    /** For "expected X, got Y": "a mapping", "a list", "a number", "an empty value", "'!vault' (a YAML tag)". */
    public static String describe(Node node) {
        Tag tag = node.getTag();
        boolean standard = tag.equals(Tag.MAP) || tag.equals(Tag.SEQ) || SCALAR_TAGS.contains(tag);
        if (!standard) return "a value tagged '" + tag.getValue() + "' (YAML tags are not supported)";
        return switch (node.getNodeId()) {
            case mapping -> "a mapping";
            case sequence -> "a list";
            default -> {
                if (tag.equals(Tag.NULL)) yield "an empty value";
                if (tag.equals(Tag.INT) || tag.equals(Tag.FLOAT)) yield "a number (" + ((ScalarNode) node).getValue() + ")";
                if (tag.equals(Tag.BOOL)) yield "a boolean (" + ((ScalarNode) node).getValue() + ")";
                yield "a string ('" + ((ScalarNode) node).getValue() + "')";
            }
        };
    }
}
