package dev.gpuctl.workload;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.representer.Represent;
import org.yaml.snakeyaml.representer.Representer;

/**
 * The guide's training Job (batch/v1) for a {@link JobSpec}: backoffLimit 0 (a failing run must not hold GPUs
 * through six retries), restartPolicy Never, nvidia.com/gpu in limits only (whole GPUs), the dataset export mounted
 * read-only and the checkpoint export read-write, both straight from the NFS server. The optional pod settings
 * ({@link JobSpec.Pod}) appear only when given: a spec without them renders as before. Values from Secrets are
 * secretKeyRefs (the Secret's name and key, never its value); {@code shm} is an emptyDir of medium Memory with that
 * sizeLimit mounted at /dev/shm. Pure: spec in, YAML text out: the Job is built as a tree of maps and lists and
 * written by the YAML library (block style), which quotes whatever a reader would take for something else and escapes
 * every character that is not printable.
 */
public final class JobManifest {
    public static final String MANAGED_BY = "app.kubernetes.io/managed-by";
    /** The volume that backs /dev/shm when the spec asks for shm. */
    public static final String SHM_VOLUME = "dshm";

    private JobManifest() {}

    public static String render(JobSpec spec) {
        // the library writes a byte order mark as itself even in double quotes (it counts as printable); every string
        // that holds one is double-quoted (EscapingRepresenter), so each is inside quotes, where \\uFEFF means it
        return yaml().dump(tree(spec)).replace("\uFEFF", "\\uFEFF");
    }

    /**
     * The Job for a team's queue: labelled with its LocalQueue ({@code kueue.x-k8s.io/queue-name}, which Kueue admits it
     * from), the person who submitted it when known ({@code gpuctl.dev/person}, for usage), and created suspended (Kueue's
     * webhook does the same; saying it here keeps the Job from starting before Kueue admits it whatever the webhook does).
     */
    public static String render(JobSpec spec, String queue, java.util.Optional<String> person) {
        Map<String, Object> tree = tree(spec);
        @SuppressWarnings("unchecked") Map<String, Object> md = (Map<String, Object>) tree.get("metadata");
        @SuppressWarnings("unchecked") Map<String, Object> labels = (Map<String, Object>) md.get("labels");
        labels.put(QUEUE_LABEL, queue);
        person.ifPresent(p -> labels.put(PERSON_LABEL, p));
        @SuppressWarnings("unchecked") Map<String, Object> jobSpec = (Map<String, Object>) tree.get("spec");
        Map<String, Object> suspended = new LinkedHashMap<>();
        suspended.put("suspend", true);
        suspended.putAll(jobSpec);
        tree.put("spec", suspended);
        return yaml().dump(tree).replace("\uFEFF", "\\uFEFF");
    }

    /** The label naming a Job's Kueue LocalQueue. */
    public static final String QUEUE_LABEL = "kueue.x-k8s.io/queue-name";
    /** The label naming who submitted a Job (a team member of the inventory). */
    public static final String PERSON_LABEL = dev.gpuctl.kube.UsageReport.PERSON_LABEL;

    /** The Job as YAML's data model: maps (in Kubernetes' field order), lists, strings, numbers and booleans. */
    static Map<String, Object> tree(JobSpec spec) {
        JobSpec.Pod pod = spec.pod();
        Map<String, Object> container = map("name", "trainer", "image", spec.image());
        if (!spec.command().isEmpty()) container.put("command", List.copyOf(spec.command()));
        if (!pod.args().isEmpty()) container.put("args", List.copyOf(pod.args()));
        pod.workingDir().ifPresent(w -> container.put("workingDir", w));
        if (!spec.env().isEmpty() || !pod.secretEnv().isEmpty()) {
            List<Object> env = new ArrayList<>();
            spec.env().forEach((name, value) -> env.add(map("name", name, "value", value)));
            pod.secretEnv().forEach((name, ref) -> env.add(map("name", name,
                "valueFrom", map("secretKeyRef", map("name", ref.secret(), "key", ref.key())))));
            container.put("env", env);
        }
        JobSpec.Resources r = pod.resources();
        Map<String, Object> limits = map(spec.gpuResource(), spec.gpus());
        r.cpuLimit().ifPresent(q -> limits.put("cpu", q));
        r.memoryLimit().ifPresent(q -> limits.put("memory", q));
        Map<String, Object> resources = map("limits", limits);
        if (r.anyRequest()) {
            Map<String, Object> requests = new LinkedHashMap<>();
            r.cpuRequest().ifPresent(q -> requests.put("cpu", q));
            r.memoryRequest().ifPresent(q -> requests.put("memory", q));
            resources.put("requests", requests);
        }
        container.put("resources", resources);

        Map<String, Object> podSpec = map("restartPolicy", "Never");
        if (!pod.nodeSelector().isEmpty()) podSpec.put("nodeSelector", new LinkedHashMap<String, Object>(pod.nodeSelector()));
        if (!pod.tolerations().isEmpty()) podSpec.put("tolerations", pod.tolerations().stream().map(JobManifest::toleration).toList());
        if (!pod.imagePullSecrets().isEmpty()) {
            podSpec.put("imagePullSecrets", pod.imagePullSecrets().stream().map(name -> (Object) map("name", name)).toList());
        }
        podSpec.put("containers", List.of(container));
        List<Volume> volumes = volumes(spec);
        if (!volumes.isEmpty() || pod.shm().isPresent()) {
            List<Object> mounts = new ArrayList<>();
            List<Object> podVolumes = new ArrayList<>();
            for (Volume v : volumes) {
                Map<String, Object> mount = map("name", v.name(), "mountPath", v.mount().mountPath());
                Map<String, Object> nfs = map("server", v.mount().server(), "path", v.mount().export().path());
                if (v.readOnly()) {
                    mount.put("readOnly", true);
                    nfs.put("readOnly", true);
                }
                mounts.add(mount);
                podVolumes.add(map("name", v.name(), "nfs", nfs));
            }
            pod.shm().ifPresent(size -> {
                mounts.add(map("name", SHM_VOLUME, "mountPath", "/dev/shm"));
                podVolumes.add(map("name", SHM_VOLUME, "emptyDir", map("medium", "Memory", "sizeLimit", size)));
            });
            container.put("volumeMounts", mounts);
            podSpec.put("volumes", podVolumes);
        }

        Map<String, Object> jobSpec = map("backoffLimit", 0);
        pod.activeDeadlineSeconds().ifPresent(s -> jobSpec.put("activeDeadlineSeconds", s));
        pod.ttlSecondsAfterFinished().ifPresent(s -> jobSpec.put("ttlSecondsAfterFinished", s));
        jobSpec.put("template", map("metadata", map("labels", map(MANAGED_BY, "gpuctl")), "spec", podSpec));
        return map("apiVersion", "batch/v1", "kind", "Job",
            "metadata", map("name", spec.name(), "namespace", spec.namespace(), "labels", map(MANAGED_BY, "gpuctl")),
            "spec", jobSpec);
    }

    private static Object toleration(JobSpec.Toleration t) {
        Map<String, Object> m = new LinkedHashMap<>();
        if (!t.key().isEmpty()) m.put("key", t.key());
        m.put("operator", t.operator());
        if (!t.value().isEmpty()) m.put("value", t.value());
        if (!t.effect().isEmpty()) m.put("effect", t.effect());
        t.seconds().ifPresent(s -> m.put("tolerationSeconds", s));
        return m;
    }

    /** An insertion-ordered map of the key-value pairs given. */
    private static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }

    /**
     * Block style, lists indented under their key, no line folded; every non-printable character (C0, DEL, C1, NEL,
     * the line and paragraph separators) written as an escape in a double-quoted string.
     */
    private static Yaml yaml() {
        DumperOptions o = new DumperOptions();
        o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        o.setIndent(2);
        o.setIndicatorIndent(2);
        o.setIndentWithIndicator(true);
        o.setSplitLines(false);
        o.setNonPrintableStyle(DumperOptions.NonPrintableStyle.ESCAPE);
        return new Yaml(new SafeConstructor(new LoaderOptions()), new EscapingRepresenter(o), o);
    }

    /**
     * Written as an escape inside double quotes: every control character, C0 but the line feed, DEL and C1
     * (U+0080-U+009F, NEL among them, which YAML 1.1 reads as a line break), the line and paragraph separators and the
     * byte order mark. The library would write some of them as themselves in a plain or single-quoted string.
     */
    static boolean escaped(char c) {
        return (c < 0x20 && c != '\n') || (c >= 0x7f && c <= 0x9f) || c == 0x2028 || c == 0x2029 || c == 0xfeff;
    }

    /** The library's strings, double-quoted (so escaped) when one holds a character {@link #escaped} names. */
    private static final class EscapingRepresenter extends Representer {
        EscapingRepresenter(DumperOptions o) {
            super(o);
            Represent strings = representers.get(String.class);
            representers.put(String.class, data -> {
                Node node = strings.representData(data);
                return node instanceof ScalarNode scalar && ((String) data).chars().anyMatch(c -> escaped((char) c))
                    ? new ScalarNode(scalar.getTag(), scalar.getValue(), null, null, DumperOptions.ScalarStyle.DOUBLE_QUOTED)
                    : node;
            });
        }
    }

    private record Volume(String name, JobSpec.Mount mount, boolean readOnly) {}

    private static List<Volume> volumes(JobSpec spec) {
        Optional<Volume> dataset = spec.dataset().map(m -> new Volume("dataset", m, true));
        Optional<Volume> ckpt = spec.checkpoint().map(m -> new Volume("ckpt", m, false));
        return Stream.of(dataset, ckpt).flatMap(Optional::stream).toList();
    }
}
