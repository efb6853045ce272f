package dev.gpuctl.workload;

import dev.gpuctl.inventory.Names;
import dev.gpuctl.inventory.Problems;
import dev.gpuctl.inventory.Section;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.Tag;

/** The job spec's env section, for {@link JobSpecLoader}: plain values and values from a Secret of the job's namespace. */
final class JobSpecEnv {
    static final List<String> SECRET_REF_KEYS = List.of("secret", "key");
    /** A Secret's data key: letters, digits, '-', '_' and '.'. */
    private static final Pattern SECRET_KEY = Pattern.compile("[-._a-zA-Z0-9]{1,253}");
    private static final Pattern ENV_NAME = Pattern.compile("[-._a-zA-Z][-._a-zA-Z0-9]*");

    private JobSpecEnv() {}

    static void env(Node value, Problems problems, Map<String, String> env, Map<String, JobSpec.SecretRef> secretEnv) {
        if (!(value instanceof MappingNode mapping) || !value.getTag().equals(Tag.MAP)) {
            problems.at(value, "env: expected a mapping of variable names to values, got " + Section.describe(value));
            return;
        }
        Map<String, Node> first = new HashMap<>();
        for (NodeTuple t : mapping.getValue()) {
            Node k = t.getKeyNode();
            Node v = t.getValueNode();
            String key = Section.isPlainScalar(k) ? ((ScalarNode) k).getValue() : null;
            if (key == null || !ENV_NAME.matcher(key).matches()) {
                problems.at(k, "env: " + (key == null ? Section.describe(k) : "'" + key + "'")
                    + " is not a variable name (expected letters, digits, '_', '-' and '.', not starting with a digit)");
            } else if (first.putIfAbsent(key, k) != null) {
                problems.at(k, "duplicate key '" + key + "' in env (first at line " + Problems.line(first.get(key)) + ")");
            } else if (v instanceof MappingNode) {
                secretRef("env." + key, v, problems).ifPresent(ref -> secretEnv.put(key, ref));
            } else if (!(v instanceof ScalarNode sv) || !(Section.isPlainScalar(v) || Section.isNull(v))) {
                problems.at(v, "env." + key + ": expected a value (a string) or { secret: NAME, key: KEY }, got " + Section.describe(v));
            } else {
                env.put(key, Section.isNull(v) ? "" : sv.getValue());
            }
        }
    }

    /** { secret: NAME, key: KEY }: a key of a Secret in the job's namespace; its value never passes through gpuctl. */
    static Optional<JobSpec.SecretRef> secretRef(String path, Node v, Problems problems) {
        Optional<Section> m = Section.read(problems, path, v, SECRET_REF_KEYS,
            Map.of("name", "the Secret's name is secret:", "value", "a value from a Secret is { secret: NAME, key: KEY }; a plain value is written as it is"));
        if (m.isEmpty()) return Optional.empty();
        Optional<ScalarNode> secret = m.get().requiredScalar("secret", "the name of a Secret in the job's namespace");
        Optional<ScalarNode> key = m.get().requiredScalar("key", "a key of that Secret");
        secret.filter(n -> !Names.isDnsSubdomain(n.getValue())).ifPresent(n -> problems.at(n, path + ".secret: '" + n.getValue()
            + "' is not a Secret's name (expected lowercase letters, digits, '-' and '.')"));
        key.filter(n -> !SECRET_KEY.matcher(n.getValue()).matches()).ifPresent(n -> problems.at(n, path + ".key: '" + n.getValue()
            + "' is not a Secret key (expected letters, digits, '-', '_' and '.')"));
        if (secret.isEmpty() || key.isEmpty()) return Optional.empty();
        return Optional.of(new JobSpec.SecretRef(secret.get().getValue(), key.get().getValue()));
    }
}
