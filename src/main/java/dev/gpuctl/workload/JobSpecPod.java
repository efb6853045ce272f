package dev.gpuctl.workload;

import dev.gpuctl.inventory.Names;
import dev.gpuctl.inventory.Problems;
import dev.gpuctl.inventory.Quantity;
import dev.gpuctl.inventory.Section;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * The job spec's pod sections, for {@link JobSpecLoader}: resources, shm's quantity, nodeSelector, tolerations,
 * imagePullSecrets, and the whole numbers of seconds (ttlSecondsAfterFinished, activeDeadlineSeconds, a toleration's).
 */
final class JobSpecPod {
    static final List<String> RESOURCE_KEYS = List.of("requests", "limits");
    static final List<String> QUANTITY_KEYS = List.of("cpu", "memory");
    static final List<String> TOLERATION_KEYS = List.of("key", "operator", "value", "effect", "tolerationSeconds");
    static final List<String> EFFECTS = List.of("NoSchedule", "PreferNoSchedule", "NoExecute");

    private JobSpecPod() {}

    /** A whole number of seconds, at least {@code min}. */
    static Optional<Long> seconds(Section s, String key, long min, Problems problems) {
        return s.value(key).flatMap(v -> {
            if (!(v instanceof ScalarNode n) || !v.getTag().equals(Tag.INT) || !n.getValue().matches("[0-9]{1,10}")
                || Long.parseLong(n.getValue()) < min) {
                problems.at(v, key + ": expected a whole number of seconds (" + min + " or more), got " + Section.describe(v)
                    + " (e.g. 86400 for a day)");
                return Optional.empty();
            }
            return Optional.of(Long.parseLong(n.getValue()));
        });
    }

    /** A CPU or memory quantity as Kubernetes reads it, greater than zero. */
    static Optional<String> quantity(String key, ScalarNode n, Problems problems, String example) {
        String v = n.getValue();
        Optional<java.math.BigDecimal> q = Quantity.parse(v);
        if (q.isEmpty() || q.get().signum() <= 0) {
            problems.at(n, key + ": '" + v + "' is not a quantity greater than zero (expected " + example
                + "; suffixes Ki Mi Gi Ti, k M G T, m for thousandths)");
            return Optional.empty();
        }
        return Optional.of(v);
    }

    static JobSpec.Resources resources(Section r, Problems problems) {
        Map<String, Optional<String>> got = new HashMap<>();
        Map<String, Node> at = new HashMap<>();
        for (String kind : RESOURCE_KEYS) {
            r.section(kind, QUANTITY_KEYS, Map.of("nvidia.com/gpu", "GPUs are gpus: at the top level of the job spec"))
                .ifPresent(q -> {
                    for (String res : QUANTITY_KEYS) {
                        String example = res.equals("cpu") ? "cores such as 4 or 500m" : "bytes such as 16Gi or 512Mi";
                        q.scalar(res).ifPresent(n -> {
                            got.put(kind + "." + res, quantity("resources." + kind + "." + res, n, problems, example));
                            at.put(kind + "." + res, n);
                        });
                    }
                });
        }
        for (String res : QUANTITY_KEYS) {
            Optional<String> req = got.getOrDefault("requests." + res, Optional.empty());
            Optional<String> lim = got.getOrDefault("limits." + res, Optional.empty());
            if (req.isPresent() && lim.isPresent() && Quantity.parse(req.get()).get().compareTo(Quantity.parse(lim.get()).get()) > 0) {
                problems.at(at.get("requests." + res), "resources.requests." + res + ": " + req.get() + " is more than the limit "
                    + lim.get() + " (Kubernetes refuses a request above its limit; expected at most " + lim.get() + ")");
            }
        }
        return new JobSpec.Resources(got.getOrDefault("requests.cpu", Optional.empty()), got.getOrDefault("limits.cpu", Optional.empty()),
            got.getOrDefault("requests.memory", Optional.empty()), got.getOrDefault("limits.memory", Optional.empty()));
    }

    static Map<String, String> nodeSelector(Node value, Problems problems) {
        Map<String, String> out = new LinkedHashMap<>();
        if (!(value instanceof MappingNode mapping) || !value.getTag().equals(Tag.MAP)) {
            problems.at(value, "nodeSelector: expected a mapping of node labels to values, got " + Section.describe(value));
            return out;
        }
        for (NodeTuple t : mapping.getValue()) {
            Node k = t.getKeyNode();
            Node v = t.getValueNode();
            String key = Section.isPlainScalar(k) ? ((ScalarNode) k).getValue() : null;
            if (key == null || !Names.isLabelKey(key)) {
                problems.at(k, "nodeSelector: " + (key == null ? Section.describe(k) : "'" + key + "'") + " is not a label key"
                    + " (expected an optional DNS prefix and '/', then at most 63 letters, digits, '-', '_' and '.')");
            } else if (out.containsKey(key)) {
                problems.at(k, "duplicate key '" + key + "' in nodeSelector");
            } else if (!(v instanceof ScalarNode sv) || !Section.isPlainScalar(v) && !Section.isNull(v)
                || !Names.isLabelValue(Section.isNull(v) ? "" : sv.getValue())) {
                problems.at(v, "nodeSelector." + key + ": expected a label value (at most 63 letters, digits, '-', '_' and"
                    + " '.', starting and ending with a letter or digit), got " + Section.describe(v));
            } else {
                out.put(key, Section.isNull(v) ? "" : sv.getValue());
            }
        }
        return out;
    }

    static List<JobSpec.Toleration> tolerations(SequenceNode list, Problems problems) {
        List<JobSpec.Toleration> out = new ArrayList<>();
        for (int i = 0; i < list.getValue().size(); i++) {
            String path = "tolerations[" + i + "]";
            Optional<Section> t = Section.read(problems, path, list.getValue().get(i), TOLERATION_KEYS, Map.of());
            if (t.isEmpty()) continue;
            Section s = t.get();
            String key = s.string("key").orElse("");
            if (!key.isEmpty() && !Names.isLabelKey(key)) {
                problems.at(s.value("key").get(), path + ".key: '" + key + "' is not a taint key (expected a label key such as dedicated"
                    + " or nvidia.com/gpu)");
            }
            String operator = s.string("operator").orElse("Equal");
            if (!operator.equals("Equal") && !operator.equals("Exists")) {
                problems.at(s.value("operator").get(), path + ".operator: '" + operator + "' (expected Equal or Exists)");
            }
            String value = s.string("value").orElse("");
            if (operator.equals("Exists") && !value.isEmpty()) {
                problems.at(s.value("value").get(), path + ".value: operator Exists takes no value (leave value out, or use Equal)");
            } else if (!Names.isLabelValue(value)) {
                problems.at(s.value("value").get(), path + ".value: '" + value + "' is not a taint value (expected at most 63"
                    + " letters, digits, '-', '_' and '.')");
            }
            if (key.isEmpty() && !operator.equals("Exists")) {
                problems.at(s.node(), path + ": no key needs operator: Exists (which tolerates every taint); give key: or operator: Exists");
            }
            String effect = s.string("effect").orElse("");
            if (!effect.isEmpty() && !EFFECTS.contains(effect)) {
                problems.at(s.value("effect").get(), path + ".effect: '" + effect + "' (expected " + String.join(", ", EFFECTS)
                    + ", or leave it out for every effect)");
            }
            Optional<Long> seconds = seconds(s, "tolerationSeconds", 0, problems);
            if (seconds.isPresent() && !effect.equals("NoExecute")) {
                problems.at(s.value("tolerationSeconds").get(), path + ".tolerationSeconds: only with effect: NoExecute");
            }
            out.add(new JobSpec.Toleration(key, operator, value, effect, seconds));
        }
        return out;
    }

    static List<String> pullSecrets(SequenceNode list, Problems problems) {
        List<String> out = new ArrayList<>();
        for (Node n : list.getValue()) {
            String name = Section.isPlainScalar(n) ? ((ScalarNode) n).getValue() : null;
            if (name == null || !Names.isDnsSubdomain(name)) {
                problems.at(n, "imagePullSecrets: " + (name == null ? Section.describe(n) : "'" + name + "'")
                    + " is not a Secret's name (expected lowercase letters, digits, '-' and '.', such as regcred)");
            } else {
                out.add(name);
            }
        }
        return out;
    }
}
