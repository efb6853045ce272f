package dev.gpuctl.workload;

import dev.gpuctl.gpu.Mig;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryException;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.inventory.Names;
import dev.gpuctl.inventory.Problems;
import dev.gpuctl.inventory.Quantity;
import dev.gpuctl.inventory.Section;
import dev.gpuctl.inventory.YamlSource;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

import static dev.gpuctl.workload.JobSpecEnv.env;
import static dev.gpuctl.workload.JobSpecMounts.mount;
import static dev.gpuctl.workload.JobSpecPod.*;

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

}
