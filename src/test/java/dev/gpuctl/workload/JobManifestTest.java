package dev.gpuctl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The rendered Job of the guide's training job (src/test/resources/jobs/detector-train.yaml with
 * inventory.example.yaml), compared with a reviewed golden file; after an intended change regenerate with
 * {@code mvn test -Dtest=JobManifestTest -Dgolden.update=true} and review the diff. Then what Kubernetes reads
 * from it, parsed back as YAML.
 */
class JobManifestTest {
    static final Path GOLDEN = Path.of("src/test/resources/golden/job-detector-train.yaml");
    static final Inventory EXAMPLE = InventoryLoader.load(Path.of("inventory.example.yaml"));

    static JobSpec guideJob() {
        return JobSpecLoader.load(Path.of("src/test/resources/jobs/detector-train.yaml"), EXAMPLE);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> parse(String yaml) {
        return (Map<String, Object>) new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
    }

    @SuppressWarnings("unchecked")
    static <T> T at(Object tree, Object... path) {
        Object o = tree;
        for (Object p : path) o = p instanceof Integer i ? ((List<Object>) o).get(i) : ((Map<String, Object>) o).get(p);
        return (T) o;
    }

    @Test void theGuidesJobMatchesTheReviewedGoldenFile() throws IOException {
        String actual = JobManifest.render(guideJob());
        if (Boolean.getBoolean("golden.update")) Files.writeString(GOLDEN, actual, StandardCharsets.UTF_8);
        assertEquals(Files.readString(GOLDEN, StandardCharsets.UTF_8), actual,
            "the rendered Job changed: if intended, regenerate with -Dgolden.update=true and review the diff");
    }

    @Test void whatKubernetesReadsFromIt() {
        Map<String, Object> job = parse(JobManifest.render(guideJob()));
        assertEquals("batch/v1", job.get("apiVersion"));
        assertEquals("Job", job.get("kind"));
        assertEquals(0, (int) at(job, "spec", "backoffLimit"));
        Map<String, Object> pod = at(job, "spec", "template", "spec");
        assertEquals("Never", pod.get("restartPolicy"));
        Map<String, Object> c = at(pod, "containers", 0);
        assertEquals(List.of("python", "train.py", "--cfg", "/cfg/exp01.yaml"), c.get("command"));
        assertEquals(Map.of("limits", Map.of("nvidia.com/gpu", 2)), c.get("resources"), "GPUs in limits only, a number");
        // env values are strings, whatever they look like; quotes and colons survive
        assertEquals(List.of(Map.of("name", "WANDB_MODE", "value", "offline"), Map.of("name", "SEED", "value", "42"),
            Map.of("name", "NOTE", "value", "lr: 3e-4, \"warm\" start"), Map.of("name", "EMPTY", "value", "")), c.get("env"));
        assertEquals(List.of(Map.of("name", "dataset", "mountPath", "/data", "readOnly", true),
            Map.of("name", "ckpt", "mountPath", "/ckpt")), c.get("volumeMounts"));
        assertEquals(List.of(
            Map.of("name", "dataset", "nfs", Map.of("server", "172.16.10.90", "path", "/export/dataset", "readOnly", true)),
            Map.of("name", "ckpt", "nfs", Map.of("server", "172.16.10.90", "path", "/export/ckpt"))), pod.get("volumes"));
    }

    static final Path FULL_GOLDEN = Path.of("src/test/resources/golden/job-detector-train-full.yaml");

    static JobSpec fullJob() {
        return JobSpecLoader.load(Path.of("src/test/resources/jobs/detector-train-full.yaml"), EXAMPLE);
    }

    @Test void everyPodSettingMatchesTheReviewedGoldenFile() throws IOException {
        String actual = JobManifest.render(fullJob());
        if (Boolean.getBoolean("golden.update")) Files.writeString(FULL_GOLDEN, actual, StandardCharsets.UTF_8);
        assertEquals(Files.readString(FULL_GOLDEN, StandardCharsets.UTF_8), actual,
            "the rendered Job changed: if intended, regenerate with -Dgolden.update=true and review the diff");
    }

    @Test void whatKubernetesReadsFromEveryPodSetting() {
        Map<String, Object> job = parse(JobManifest.render(fullJob()));
        assertEquals(86400, (int) at(job, "spec", "ttlSecondsAfterFinished"));
        assertEquals(172800, (int) at(job, "spec", "activeDeadlineSeconds"));
        Map<String, Object> pod = at(job, "spec", "template", "spec");
        assertEquals(Map.of("gpu-type", "a100", "topology.kubernetes.io/zone", "lab-1"), pod.get("nodeSelector"));
        assertEquals(List.of(Map.of("key", "dedicated", "operator", "Equal", "value", "training", "effect", "NoSchedule"),
            Map.of("key", "nvidia.com/gpu", "operator", "Exists"),
            Map.of("key", "node.kubernetes.io/unreachable", "operator", "Exists", "effect", "NoExecute", "tolerationSeconds", 300)),
            pod.get("tolerations"));
        assertEquals(List.of(Map.of("name", "regcred")), pod.get("imagePullSecrets"));
        Map<String, Object> c = at(pod, "containers", 0);
        assertEquals(List.of("python", "train.py"), c.get("command"));
        assertEquals(List.of("--cfg", "/cfg/exp01.yaml", "--epochs", "90"), c.get("args"), "args are strings, \"90\" too");
        assertEquals("/workspace", c.get("workingDir"));
        assertEquals(List.of(Map.of("name", "WANDB_MODE", "value", "offline"),
            Map.of("name", "WANDB_API_KEY", "valueFrom", Map.of("secretKeyRef", Map.of("name", "wandb", "key", "api-key")))), c.get("env"));
        assertEquals(Map.of("limits", Map.of("nvidia.com/gpu", 2, "cpu", "8500m", "memory", "32Gi"),
            "requests", Map.of("cpu", "4", "memory", "16Gi")), c.get("resources"));
        assertEquals(List.of(Map.of("name", "dataset", "mountPath", "/data", "readOnly", true),
            Map.of("name", "dshm", "mountPath", "/dev/shm")), c.get("volumeMounts"));
        assertEquals(Map.of("name", "dshm", "emptyDir", Map.of("medium", "Memory", "sizeLimit", "8Gi")), at(pod, "volumes", 1));
    }

    @Test void eachSettingAloneAddsOnlyItself() {
        JobSpec base = new JobSpec("probe", "default", "busybox", List.of(), 1, "job.yaml:4:7", Map.of(), Optional.empty(), Optional.empty());
        String plain = JobManifest.render(base);
        JobSpec.Pod shmOnly = new JobSpec.Pod(List.of(), Optional.empty(), Map.of(), List.of(), List.of(), JobSpec.Resources.NONE,
            Optional.of("1Gi"), Map.of(), Optional.empty(), Optional.empty());
        String shm = JobManifest.render(new JobSpec("probe", "default", "busybox", List.of(), 1, "job.yaml:4:7", Map.of(),
            Optional.empty(), Optional.empty(), shmOnly));
        Map<String, Object> pod = at(parse(shm), "spec", "template", "spec");
        assertEquals(List.of(Map.of("name", "dshm", "emptyDir", Map.of("medium", "Memory", "sizeLimit", "1Gi"))), pod.get("volumes"));
        assertEquals(List.of(Map.of("name", "dshm", "mountPath", "/dev/shm")), at(pod, "containers", 0, "volumeMounts"));
        assertFalse(plain.contains("dshm") || plain.contains("requests") || plain.contains("ttlSeconds"), plain);
        assertEquals(Map.of("limits", Map.of("nvidia.com/gpu", 1)), at(pod, "containers", 0, "resources"));
    }

    /** What YAML reads as something else, or breaks a hand-made quoting: every such value comes back exactly as given. */
    static final List<String> HOSTILE = List.of("yes", "No", "on", "null", "~", "1.5", "010", "0x1f", "1e3", "12:30", "-", "- x",
        "-1", "a b", "#x", "a #b", "a: b", "a:b", "key: value\nother: 1", "'q'", "\"dq\"", "it's \"both\"", "back\\slash", "tab\there",
        "new\nline", "trailing\n", " lead", "trail ", "{x}", "[1]", "{{ .Values.x }}", "*ref", "&a", "!tag", "%p", "@at", "`cmd`", "|",
        ">", "? q", "---", "...", "fd00::1", "", "1_000", "1:20", "190:20:30", "0o17", "0b101", "+1", ".5", "1.", "6.02e23", ".inf",
        ".NaN", "_x", "1.2.3", "172.16.10.90", "caf\u00e9 \u00a0x", "\u65e5\u672c\u8a9e", "emoji \ud83d\ude80", "rtl \u05e9\u05dc\u05d5\u05dd",
        "a\u0085b", "a\u2028b\u2029c", "bom\ufeff", "\u001b[2Jesc", "x\u009b31m", "del\u007f", "nul\u0000");

    /** Each hostile string in every free-text place of a Job; parsed back, each place holds it exactly. */
    @Test void hostileValuesRoundTripExactlyThroughTheYamlParser() {
        for (String s : HOSTILE) {
            JobSpec.Pod pod = new JobSpec.Pod(List.of("--x", s), Optional.of(s), Map.of("k", s),
                List.of(new JobSpec.Toleration("t", "Equal", s, "NoSchedule", Optional.empty())), List.of(), JobSpec.Resources.NONE,
                Optional.of(s), Map.of(), Optional.empty(), Optional.empty());
            JobSpec spec = new JobSpec("probe", "default", s, List.of("echo", s), 1, "job.yaml:4:7", Map.of("NOTE", s),
                Optional.empty(), Optional.empty(), pod);
            String yaml = JobManifest.render(spec);
            Map<String, Object> podSpec = at(parse(yaml), "spec", "template", "spec");
            Map<String, Object> c = at(podSpec, "containers", 0);
            String what = "value " + printable(s) + " in\n" + yaml;
            assertEquals(s, c.get("image"), what);
            assertEquals(List.of("echo", s), c.get("command"), what);
            assertEquals(List.of("--x", s), c.get("args"), what);
            assertEquals(s, c.get("workingDir"), what);
            assertEquals(List.of(Map.of("name", "NOTE", "value", s)), c.get("env"), what);
            assertEquals(Map.of("k", s), podSpec.get("nodeSelector"), what);
            assertEquals(s.isEmpty() ? null : s, at(podSpec, "tolerations", 0, "value"), "an empty value is no value: " + what);
            assertEquals(s, at(podSpec, "volumes", 0, "emptyDir", "sizeLimit"), what);
            assertEquals(JobManifest.tree(spec), parse(yaml), what);
        }
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) b.append(c >= 0x20 && c < 0x7f ? String.valueOf(c) : String.format("\\u%04x", (int) c));
        return b.toString();
    }

    /** No control character (see {@link JobManifest#escaped}) reaches the Job's text as itself, and each is read back as itself. */
    @Test void everyControlCharacterIsEscapedAndReadBackAsItself() {
        List<String> values = new ArrayList<>();
        for (char c = 0; c < 0xa0; c++) if (c < 0x20 || c >= 0x7f) values.add("a" + c + "b");
        for (char c : new char[] {0x2028, 0x2029, 0xfeff}) values.add("a" + c + "b");
        JobSpec s = new JobSpec("probe", "default", "busybox", values, 1, "job.yaml:4:7", Map.of("NOTE", "a\u0085b\u001b[2J"),
            Optional.empty(), Optional.empty());
        String yaml = JobManifest.render(s);
        for (char c : yaml.toCharArray()) assertFalse(c != '\n' && JobManifest.escaped(c), () -> "raw U+" + Integer.toHexString(c) + " in\n" + yaml);
        var container = (Map<?, ?>) at(parse(yaml), "spec", "template", "spec", "containers", 0);
        assertEquals(values, container.get("command"));
        assertEquals(List.of(Map.of("name", "NOTE", "value", "a\u0085b\u001b[2J")), container.get("env"));
    }

    @Test void aJobWithoutMountsOrCommand() {
        JobSpec s = new JobSpec("probe", "default", "busybox", List.of(), 1, "job.yaml:4:7", Map.of(), Optional.empty(), Optional.empty());
        String yaml = JobManifest.render(s);
        assertFalse(yaml.contains("volumes"), yaml);
        assertFalse(yaml.contains("command"), yaml);
        assertEquals(1, (int) at(parse(yaml), "spec", "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"));
    }

    @Test void aJobMustFitOnOneNode() {
        JobSpec s = guideJob();
        assertEquals(Optional.empty(), JobSubmit.unfit(s, Map.of("worker-1", 1, "worker-2", 2), "the cluster"));
        assertEquals(Optional.of("src/test/resources/jobs/detector-train.yaml:5:7: gpus: 2 is more than any node has: the largest,"
                + " worker-2, has 1 GPU (the cluster); a pod runs on one node, so the job would wait forever (expected at most 1)"),
            JobSubmit.unfit(s, Map.of("worker-1", 0, "worker-2", 1), "the cluster"));
        assertTrue(JobSubmit.unfit(s, Map.of("master", 0), "the cluster").orElseThrow().contains("no node offers nvidia.com/gpu"));
        assertEquals("/etc/kubernetes/gpuctl/jobs/default.detector-train.yaml", JobSubmit.path(s));
    }
}
