package dev.gpuctl.inventory;

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
 * </pre>
 * The dataset is mounted read-only; the checkpoint export must not be readOnly in the inventory.
 */
public final class JobSpecLoader {
    static final List<String> KEYS = List.of("name", "namespace", "image", "command", "gpus", "env", "dataset", "checkpoint");
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
        List<String> command = s.list("command").map(l -> command(l, problems)).orElse(List.of());
        if (s.value("gpus").isEmpty()) s.missing("gpus", "the number of whole GPUs the job needs, at least 1");
        Optional<ScalarNode> gpusNode = s.value("gpus").flatMap(v -> gpus(v, problems));
        if (inv.nodes().stream().noneMatch(dev.gpuctl.inventory.Node::gpu)) {
            problems.at(gpusNode.map(Node.class::cast).orElse(root), "gpus: the inventory " + inv.file().getFileName()
                + " has no GPU node (every node has gpu: false)");
        }
        Map<String, String> env = s.value("env").map(v -> env(v, problems)).orElse(Map.of());
        Optional<JobSpec.Mount> dataset = mount(s, "dataset", "/data", problems, inv);
        Optional<JobSpec.Mount> checkpoint = mount(s, "checkpoint", "/ckpt", problems, inv);
        checkpoint.filter(c -> c.export().readOnly()).ifPresent(c -> problems.at(s.value("checkpoint").get(),
            "checkpoint: export " + c.export().path() + " is readOnly in the inventory; checkpoints need a read-write export"));
        if (dataset.isPresent() && checkpoint.isPresent() && dataset.get().mountPath().equals(checkpoint.get().mountPath())) {
            problems.at(s.value("checkpoint").get(), "checkpoint: mountPath " + checkpoint.get().mountPath()
                + " is the dataset's too (expected another directory)");
        }
        if (problems.any() || name.isEmpty() || image.isEmpty() || gpusNode.isEmpty()) return Optional.empty();
        ScalarNode g = gpusNode.get();
        String at = file + ":" + Problems.line(g) + ":" + (g.getStartMark().getColumn() + 1);
        return Optional.of(new JobSpec(name.get(), namespace.orElse("default"), image.get(), command,
            Integer.parseInt(g.getValue()), at, env, dataset, checkpoint));
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

    private static List<String> command(SequenceNode list, Problems problems) {
        List<String> words = new ArrayList<>();
        for (Node w : list.getValue()) {
            if (Section.isPlainScalar(w)) words.add(((ScalarNode) w).getValue());
            else problems.at(w, "command: expected a word (a string), got " + Section.describe(w));
        }
        if (list.getValue().isEmpty()) problems.at(list, "command: the list is empty (leave command out to run the image's entrypoint)");
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

    private static Map<String, String> env(Node value, Problems problems) {
        Map<String, String> env = new LinkedHashMap<>();
        if (!(value instanceof MappingNode mapping) || !value.getTag().equals(Tag.MAP)) {
            problems.at(value, "env: expected a mapping of variable names to values, got " + Section.describe(value));
            return env;
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
            } else if (!(v instanceof ScalarNode sv) || !(Section.isPlainScalar(v) || Section.isNull(v))) {
                problems.at(v, "env." + key + ": expected a value (a string), got " + Section.describe(v));
            } else {
                env.put(key, Section.isNull(v) ? "" : sv.getValue());
            }
        }
        return env;
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
        String server = inv.node(nfs.server()).map(dev.gpuctl.inventory.Node::address).orElse(nfs.server());
        return Optional.of(new JobSpec.Mount(server, found.get(0), mountPath));
    }
}
