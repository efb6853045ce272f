package dev.gpuctl.workload;

import dev.gpuctl.inventory.JobSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The guide's training Job (batch/v1) for a {@link JobSpec}: backoffLimit 0 (a failing run must not hold GPUs
 * through six retries), restartPolicy Never, nvidia.com/gpu in limits only (whole GPUs), the dataset export mounted
 * read-only and the checkpoint export read-write, both straight from the NFS server. The optional pod settings
 * ({@link JobSpec.Pod}) appear only when given: a spec without them renders as before. Values from Secrets are
 * secretKeyRefs (the Secret's name and key, never its value); {@code shm} is an emptyDir of medium Memory with that
 * sizeLimit mounted at /dev/shm. Pure: spec in, YAML text out.
 */
public final class JobManifest {
    public static final String MANAGED_BY = "app.kubernetes.io/managed-by";
    /** The volume that backs /dev/shm when the spec asks for shm. */
    public static final String SHM_VOLUME = "dshm";
    /** A scalar that YAML reads back as the same string when written plain: no quotes needed. */
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9_/][A-Za-z0-9._/@+-]*(:[A-Za-z0-9._/@+-]+)*");
    /** What YAML 1.1 reads as a boolean, null or number (ints, floats, sexagesimals, 0x/0o/0b). */
    private static final Pattern SPECIAL = Pattern.compile("(?i)y|n|yes|no|true|false|on|off|null|~"
        + "|[-+]?([0-9][0-9_]*)?\\.?[0-9_]*([eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\\.[0-9_]*)?|0[xob][0-9a-f_]+");

    private JobManifest() {}

    public static String render(JobSpec spec) {
        StringBuilder y = new StringBuilder();
        y.append("apiVersion: batch/v1\n");
        y.append("kind: Job\n");
        y.append("metadata:\n");
        y.append("  name: ").append(spec.name()).append('\n');
        y.append("  namespace: ").append(spec.namespace()).append('\n');
        y.append("  labels:\n");
        y.append("    ").append(MANAGED_BY).append(": gpuctl\n");
        JobSpec.Pod pod = spec.pod();
        y.append("spec:\n");
        y.append("  backoffLimit: 0\n");
        pod.activeDeadlineSeconds().ifPresent(s -> y.append("  activeDeadlineSeconds: ").append(s).append('\n'));
        pod.ttlSecondsAfterFinished().ifPresent(s -> y.append("  ttlSecondsAfterFinished: ").append(s).append('\n'));
        y.append("  template:\n");
        y.append("    metadata:\n");
        y.append("      labels:\n");
        y.append("        ").append(MANAGED_BY).append(": gpuctl\n");
        y.append("    spec:\n");
        y.append("      restartPolicy: Never\n");
        if (!pod.nodeSelector().isEmpty()) {
            y.append("      nodeSelector:\n");
            pod.nodeSelector().forEach((k, v) -> y.append("        ").append(scalar(k)).append(": ").append(quoted(v)).append('\n'));
        }
        if (!pod.tolerations().isEmpty()) {
            y.append("      tolerations:\n");
            for (JobSpec.Toleration t : pod.tolerations()) {
                List<String> f = new ArrayList<>();
                if (!t.key().isEmpty()) f.add("key: " + scalar(t.key()));
                f.add("operator: " + t.operator());
                if (!t.value().isEmpty()) f.add("value: " + quoted(t.value()));
                if (!t.effect().isEmpty()) f.add("effect: " + t.effect());
                t.seconds().ifPresent(s -> f.add("tolerationSeconds: " + s));
                y.append("        - { ").append(String.join(", ", f)).append(" }\n");
            }
        }
        if (!pod.imagePullSecrets().isEmpty()) {
            y.append("      imagePullSecrets:\n");
            for (String name : pod.imagePullSecrets()) y.append("        - name: ").append(scalar(name)).append('\n');
        }
        y.append("      containers:\n");
        y.append("        - name: trainer\n");
        y.append("          image: ").append(scalar(spec.image())).append('\n');
        if (!spec.command().isEmpty()) {
            y.append("          command: [").append(String.join(", ", spec.command().stream().map(JobManifest::quoted).toList())).append("]\n");
        }
        if (!pod.args().isEmpty()) {
            y.append("          args: [").append(String.join(", ", pod.args().stream().map(JobManifest::quoted).toList())).append("]\n");
        }
        pod.workingDir().ifPresent(w -> y.append("          workingDir: ").append(quoted(w)).append('\n'));
        if (!spec.env().isEmpty() || !pod.secretEnv().isEmpty()) {
            y.append("          env:\n");
            for (Map.Entry<String, String> e : spec.env().entrySet()) {
                y.append("            - { name: ").append(scalar(e.getKey())).append(", value: ").append(quoted(e.getValue())).append(" }\n");
            }
            for (Map.Entry<String, JobSpec.SecretRef> e : pod.secretEnv().entrySet()) {
                y.append("            - { name: ").append(scalar(e.getKey())).append(", valueFrom: { secretKeyRef: { name: ")
                    .append(scalar(e.getValue().secret())).append(", key: ").append(scalar(e.getValue().key())).append(" } } }\n");
            }
        }
        JobSpec.Resources r = pod.resources();
        y.append("          resources:\n");
        y.append("            limits:\n");
        y.append("              ").append(spec.gpuResource()).append(": ").append(spec.gpus()).append('\n');
        r.cpuLimit().ifPresent(q -> y.append("              cpu: ").append(quoted(q)).append('\n'));
        r.memoryLimit().ifPresent(q -> y.append("              memory: ").append(quoted(q)).append('\n'));
        if (r.anyRequest()) {
            y.append("            requests:\n");
            r.cpuRequest().ifPresent(q -> y.append("              cpu: ").append(quoted(q)).append('\n'));
            r.memoryRequest().ifPresent(q -> y.append("              memory: ").append(quoted(q)).append('\n'));
        }
        List<Volume> volumes = volumes(spec);
        if (!volumes.isEmpty() || pod.shm().isPresent()) {
            y.append("          volumeMounts:\n");
            for (Volume v : volumes) {
                y.append("            - { name: ").append(v.name()).append(", mountPath: ").append(scalar(v.mount().mountPath()))
                    .append(v.readOnly() ? ", readOnly: true }\n" : " }\n");
            }
            if (pod.shm().isPresent()) y.append("            - { name: ").append(SHM_VOLUME).append(", mountPath: /dev/shm }\n");
            y.append("      volumes:\n");
            for (Volume v : volumes) {
                y.append("        - name: ").append(v.name()).append('\n');
                y.append("          nfs: { server: ").append(scalar(v.mount().server())).append(", path: ")
                    .append(scalar(v.mount().export().path())).append(v.readOnly() ? ", readOnly: true }\n" : " }\n");
            }
            pod.shm().ifPresent(size -> {
                y.append("        - name: ").append(SHM_VOLUME).append('\n');
                y.append("          emptyDir: { medium: Memory, sizeLimit: ").append(quoted(size)).append(" }\n");
            });
        }
        return y.toString();
    }

    private record Volume(String name, JobSpec.Mount mount, boolean readOnly) {}

    private static List<Volume> volumes(JobSpec spec) {
        Optional<Volume> dataset = spec.dataset().map(m -> new Volume("dataset", m, true));
        Optional<Volume> ckpt = spec.checkpoint().map(m -> new Volume("ckpt", m, false));
        return Stream.of(dataset, ckpt).flatMap(Optional::stream).toList();
    }

    /** Plain when YAML reads it back as this very string, else double-quoted. */
    static String scalar(String s) {
        return PLAIN.matcher(s).matches() && !SPECIAL.matcher(s).matches() ? s : quoted(s);
    }

    /**
     * Written as an escape inside quotes: every control character, C0, DEL and C1 (U+0080-U+009F, NEL among them,
     * which YAML 1.1 reads as a line break), the line and paragraph separators and the byte order mark.
     */
    static boolean escaped(char c) {
        return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x2028 || c == 0x2029 || c == 0xfeff;
    }

    /** A double-quoted YAML string (JSON escapes, which YAML shares); see {@link #escaped} for what is escaped. */
    static String quoted(String s) {
        StringBuilder q = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> q.append("\\\"");
                case '\\' -> q.append("\\\\");
                case '\n' -> q.append("\\n");
                case '\t' -> q.append("\\t");
                case '\r' -> q.append("\\r");
                default -> {
                    if (escaped(c)) q.append(String.format("\\u%04x", (int) c));
                    else q.append(c);
                }
            }
        }
        return q.append('"').toString();
    }
}
