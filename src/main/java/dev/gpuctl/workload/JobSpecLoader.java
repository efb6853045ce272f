package dev.gpuctl.workload;

import dev.gpuctl.hostconf.Mig;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryException;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.inventory.Names;
import dev.gpuctl.inventory.Nfs;
import dev.gpuctl.inventory.NfsExport;
import dev.gpuctl.inventory.Problems;
import dev.gpuctl.inventory.Quantity;
import dev.gpuctl.inventory.Section;
import dev.gpuctl.inventory.YamlSource;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Loads and validates a job spec the way {@link InventoryLoader} loads an inventory (the same YAML rules and limits,
 * every problem at once as {@code FILE:LINE:COLUMN: message} in an {@link InventoryException}), and checks it
 * against the inventory:
 * <pre>
 * name: detector-train                 # required: a DNS label (the Job's name)
 * namespace: default                   # optional, default "default"
 * image: registry.internal/trainer:cu118   # required
 * command: [python, train.py, --cfg, /cfg/exp01.yaml]   # optional: the image's entrypoint otherwise
 * gpus: 2                              # required: whole GPUs, at least 1
 * env: { WANDB_MODE: offline }         # optional
 * dataset: /export/dataset             # optional: an export of storage.nfs, by path or by its last part
 * checkpoint: { export: ckpt, mountPath: /ckpt }   # optional; mountPath defaults: /data and /ckpt
 * args: [--epochs, "90"]               # optional: the container's args
 * workingDir: /workspace               # optional: an absolute path
 * env: { WANDB_API_KEY: { secret: wandb, key: api-key } }   # a value from a Secret of the job's namespace
 * nodeSelector: { gpu-type: a100 }     # optional: node labels the pod needs
 * tolerations: [ { key: dedicated, operator: Equal, value: training, effect: NoSchedule } ]
 * imagePullSecrets: [ regcred ]        # optional: Secrets of the job's namespace
 * resources: { requests: { cpu: 4, memory: 16Gi }, limits: { cpu: 8, memory: 32Gi } }
 * shm: 8Gi                             # optional: a memory-backed /dev/shm of this size (PyTorch DataLoader workers)
 * ttlSecondsAfterFinished: 86400       # optional: a finished Job and its logs are deleted after this long
 * activeDeadlineSeconds: 172800        # optional: the Job is stopped (Failed, DeadlineExceeded) after this long
 * </pre>
 * The dataset is mounted read-only; the checkpoint export must not be readOnly in the inventory.
 */
public final class JobSpecLoader {
    static final List<String> KEYS = List.of("name", "namespace", "image", "command", "gpus", "env", "dataset", "checkpoint",
        "args", "workingDir", "nodeSelector", "tolerations", "imagePullSecrets", "resources", "shm", "ttlSecondsAfterFinished",
        "activeDeadlineSeconds", "migProfile");
    static final List<String> RESOURCE_KEYS = List.of("requests", "limits");
    static final List<String> QUANTITY_KEYS = List.of("cpu", "memory");
    static final List<String> TOLERATION_KEYS = List.of("key", "operator", "value", "effect", "tolerationSeconds");
    static final List<String> SECRET_REF_KEYS = List.of("secret", "key");
    static final List<String> EFFECTS = List.of("NoSchedule", "PreferNoSchedule", "NoExecute");
    /** A Secret's data key: letters, digits, '-', '_' and '.'. */
    private static final Pattern SECRET_KEY = Pattern.compile("[-._a-zA-Z0-9]{1,253}");
    static final List<String> MOUNT_KEYS = List.of("export", "mountPath");
    private static final Pattern ENV_NAME = Pattern.compile("[-._a-zA-Z][-._a-zA-Z0-9]*");

    private JobSpecLoader() {}

    public static JobSpec load(Path file, Inventory inv) {
        String display = file.toString();
        return parse(display, InventoryLoader.read(file, display), inv);
    }

    /** Validates spec text; {@code displayName} names the file in messages. */
    public static JobSpec parse(String displayName, String yamlText, Inventory inv) {
        return YamlSource.read(displayName, yamlText, "the job spec", "name:, image: and gpus:",
            (root, problems) -> spec(displayName, root, problems, inv));
    }

    private static Optional<JobSpec> spec(String file, Node root, Problems problems, Inventory inv) {
        if (!(root instanceof MappingNode)) {
            problems.at(root, "the job spec: expected a mapping, got " + Section.describe(root));
            return Optional.empty();
        }
        Optional<Section> top = Section.read(problems, "", root, KEYS, Map.of());
        if (top.isEmpty()) return Optional.empty();
        Section s = top.get();
        Optional<String> name = dnsLabel(s, "name", true);
        Optional<String> namespace = dnsLabel(s, "namespace", false);
        Optional<String> image = s.requiredScalar("image", "a container image such as registry.internal/trainer:cu118")
            .filter(i -> {
                boolean ok = !i.getValue().isBlank() && !i.getValue().matches(".*[\\s\\p{Cntrl}].*");
                if (!ok) problems.at(i, "image: '" + i.getValue() + "' is not an image reference (expected no spaces)");
                return ok;
            }).map(ScalarNode::getValue);
        List<String> command = s.list("command").map(l -> words("command", l, problems)).orElse(List.of());
        List<String> args = s.list("args").map(l -> words("args", l, problems)).orElse(List.of());
        if (s.value("gpus").isEmpty()) s.missing("gpus", "the number of whole GPUs the job needs, at least 1");
        Optional<ScalarNode> gpusNode = s.value("gpus").flatMap(v -> gpus(v, problems));
        if (inv.nodes().stream().noneMatch(dev.gpuctl.inventory.Node::gpu)) {
            problems.at(gpusNode.map(Node.class::cast).orElse(root), "gpus: the inventory " + inv.file().getFileName()
                + " has no GPU node (every node has gpu: false)");
        }
        Map<String, String> env = new LinkedHashMap<>();
        Map<String, JobSpec.SecretRef> secretEnv = new LinkedHashMap<>();
        s.value("env").ifPresent(v -> env(v, problems, env, secretEnv));
        Optional<JobSpec.Mount> dataset = mount(s, "dataset", "/data", problems, inv);
        Optional<JobSpec.Mount> checkpoint = mount(s, "checkpoint", "/ckpt", problems, inv);
        checkpoint.filter(c -> c.export().readOnly()).ifPresent(c -> problems.at(s.value("checkpoint").get(),
            "checkpoint: export " + c.export().path() + " is readOnly in the inventory; checkpoints need a read-write export"));
        if (dataset.isPresent() && checkpoint.isPresent() && dataset.get().mountPath().equals(checkpoint.get().mountPath())) {
            problems.at(s.value("checkpoint").get(), "checkpoint: mountPath " + checkpoint.get().mountPath()
                + " is the dataset's too (expected another directory)");
        }
        Optional<String> workingDir = s.scalar("workingDir").filter(w -> {
            boolean ok = w.getValue().startsWith("/") && !w.getValue().matches(".*\\p{Cntrl}.*");
            if (!ok) problems.at(w, "workingDir: '" + w.getValue() + "' is not an absolute path (expected a directory such as /workspace)");
            return ok;
        }).map(ScalarNode::getValue);
        Map<String, String> nodeSelector = s.value("nodeSelector").map(v -> nodeSelector(v, problems)).orElse(Map.of());
        List<JobSpec.Toleration> tolerations = s.list("tolerations").map(l -> tolerations(l, problems)).orElse(List.of());
        List<String> pullSecrets = s.list("imagePullSecrets").map(l -> pullSecrets(l, problems)).orElse(List.of());
        JobSpec.Resources resources = s.section("resources", RESOURCE_KEYS,
            Map.of("cpu", "write it under requests: or limits:, e.g. resources: { requests: { cpu: 4 } }",
                "memory", "write it under requests: or limits:, e.g. resources: { limits: { memory: 32Gi } }",
                "nvidia.com/gpu", "GPUs are gpus: at the top level"))
            .map(r -> resources(r, problems)).orElse(JobSpec.Resources.NONE);
        Optional<String> shm = s.scalar("shm").flatMap(n -> quantity("shm", n, problems, "a size such as 8Gi"));
        shm.ifPresent(size -> resources.memoryLimit().ifPresent(limit -> {
            if (Quantity.parse(size).get().compareTo(Quantity.parse(limit).get()) > 0) {
                problems.at(s.value("shm").get(), "shm: " + size + " is more than resources.limits.memory " + limit
                    + " (a memory-backed /dev/shm counts against the container's memory limit; expected at most " + limit + ")");
            }
        }));
        Optional<Long> ttl = seconds(s, "ttlSecondsAfterFinished", 0, problems);
        Optional<Long> deadline = seconds(s, "activeDeadlineSeconds", 1, problems);
        Optional<String> migProfile = s.scalar("migProfile").filter(p -> {
            boolean ok = Mig.PROFILE.matcher(p.getValue()).matches();
            if (!ok) problems.at(p, "migProfile: '" + p.getValue() + "' is not a MIG profile name (expected compute slices then memory,"
                + " such as 1g.18gb: the job's gpus are then MIG devices nvidia.com/mig-1g.18gb of nodes with gpuSharing.mig strategy mixed)");
            return ok;
        }).map(ScalarNode::getValue);
        if (problems.any() || name.isEmpty() || image.isEmpty() || gpusNode.isEmpty()) return Optional.empty();
        ScalarNode g = gpusNode.get();
        String at = file + ":" + Problems.line(g) + ":" + (g.getStartMark().getColumn() + 1);
        JobSpec.Pod pod = new JobSpec.Pod(args, workingDir, nodeSelector, tolerations, pullSecrets, resources, shm, secretEnv,
            ttl, deadline);
        return Optional.of(new JobSpec(name.get(), namespace.orElse("default"), image.get(), command,
            Integer.parseInt(g.getValue()), at, env, dataset, checkpoint, pod,
            migProfile.map(p -> "nvidia.com/mig-" + p).orElse(JobSpec.WHOLE_GPU)));
    }

    /** A whole number of seconds, at least {@code min}. */
    private static Optional<Long> seconds(Section s, String key, long min, Problems problems) {
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
    private static Optional<String> quantity(String key, ScalarNode n, Problems problems, String example) {
        String v = n.getValue();
        Optional<java.math.BigDecimal> q = Quantity.parse(v);
        if (q.isEmpty() || q.get().signum() <= 0) {
            problems.at(n, key + ": '" + v + "' is not a quantity greater than zero (expected " + example
                + "; suffixes Ki Mi Gi Ti, k M G T, m for thousandths)");
            return Optional.empty();
        }
        return Optional.of(v);
    }

    private static JobSpec.Resources resources(Section r, Problems problems) {
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

    private static Map<String, String> nodeSelector(Node value, Problems problems) {
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

    private static List<JobSpec.Toleration> tolerations(SequenceNode list, Problems problems) {
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

    private static List<String> pullSecrets(SequenceNode list, Problems problems) {
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

    private static Optional<String> dnsLabel(Section s, String key, boolean required) {
        Optional<ScalarNode> node = required ? s.requiredScalar(key, "a name such as detector-train") : s.scalar(key);
        return node.filter(n -> {
            if (Names.isDnsLabel(n.getValue())) return true;
            s.problems().at(n, key + ": '" + n.getValue() + "' is not a valid name (expected at most 63 lowercase"
                + " letters, digits and '-', starting and ending with a letter or digit)");
            return false;
        }).map(ScalarNode::getValue);
    }

    private static List<String> words(String key, SequenceNode list, Problems problems) {
        List<String> words = new ArrayList<>();
        for (Node w : list.getValue()) {
            if (Section.isPlainScalar(w)) words.add(((ScalarNode) w).getValue());
            else problems.at(w, key + ": expected a word (a string), got " + Section.describe(w));
        }
        if (list.getValue().isEmpty()) {
            problems.at(list, key + ": the list is empty (leave " + key + " out to run the image's "
                + (key.equals("command") ? "entrypoint)" : "default arguments)"));
        }
        return words;
    }

    private static Optional<ScalarNode> gpus(Node v, Problems problems) {
        if (!(v instanceof ScalarNode s) || !v.getTag().equals(Tag.INT) || !s.getValue().matches("[0-9]{1,6}")) {
            problems.at(v, "gpus: expected a whole number of GPUs (1 or more), got " + Section.describe(v)
                + " (GPUs are not shared: a job gets whole GPUs)");
            return Optional.empty();
        }
        if (Integer.parseInt(s.getValue()) < 1) {
            problems.at(v, "gpus: " + s.getValue() + " (expected at least 1: a job without GPUs does not belong on GPU nodes)");
            return Optional.empty();
        }
        return Optional.of(s);
    }

    private static void env(Node value, Problems problems, Map<String, String> env, Map<String, JobSpec.SecretRef> secretEnv) {
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
    private static Optional<JobSpec.SecretRef> secretRef(String path, Node v, Problems problems) {
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

    /** dataset or checkpoint: an export by path or last part, or { export, mountPath }. */
    private static Optional<JobSpec.Mount> mount(Section s, String key, String defaultPath, Problems problems, Inventory inv) {
        Optional<Node> value = s.value(key);
        if (value.isEmpty()) return Optional.empty();
        Optional<ScalarNode> exportNode;
        String mountPath = defaultPath;
        if (value.get() instanceof MappingNode) {
            Optional<Section> m = Section.read(problems, key, value.get(), MOUNT_KEYS,
                Map.of("path", "name the export with export: and its path or name, e.g. export: /export/ckpt"));
            if (m.isEmpty()) return Optional.empty();
            exportNode = m.get().requiredScalar("export", "an export of storage.nfs, by path or name");
            Optional<ScalarNode> path = m.get().scalar("mountPath");
            if (path.isPresent()) {
                Optional<String> why = NfsExport.pathProblem(path.get().getValue());
                if (why.isPresent()) {
                    problems.at(path.get(), key + ".mountPath: '" + path.get().getValue() + "' is not usable: " + why.get()
                        + " (expected an absolute path other than /, of " + NfsExport.SAFE_CHARACTERS
                        + ", without '.' or '..' parts, '//' or a trailing '/')");
                    return Optional.empty();
                }
                mountPath = path.get().getValue();
            }
        } else {
            exportNode = s.scalar(key);
        }
        if (exportNode.isEmpty()) return Optional.empty();
        ScalarNode ref = exportNode.get();
        if (inv.nfs().isEmpty()) {
            problems.at(ref, key + ": the inventory " + inv.file().getFileName() + " has no storage.nfs (add the NFS"
                + " server and its exports there, e.g. storage: { nfs: { server: master, exports: [ { path: /export/dataset } ] } })");
            return Optional.empty();
        }
        Nfs nfs = inv.nfs().get();
        List<NfsExport> found = nfs.exports().stream().filter(e -> e.path().equals(ref.getValue())).toList();
        if (found.isEmpty()) {
            found = nfs.exports().stream().filter(e -> e.path().substring(e.path().lastIndexOf('/') + 1).equals(ref.getValue())).toList();
        }
        List<String> known = nfs.exports().stream().map(NfsExport::path).toList();
        if (found.size() != 1) {
            problems.at(ref, key + ": " + (found.isEmpty() ? "no export '" + ref.getValue() + "'" : "'" + ref.getValue()
                + "' names " + found.size() + " exports, give the path") + " (storage.nfs exports: " + String.join(", ", known) + ")");
            return Optional.empty();
        }
        String server = nfs.address(inv);
        return Optional.of(new JobSpec.Mount(server, found.get(0), mountPath));
    }
}
