package dev.gpuctl.workload;

import dev.gpuctl.inventory.JobSpec;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The guide's training Job (batch/v1) for a {@link JobSpec}: backoffLimit 0 (a failing run must not hold GPUs
 * through six retries), restartPolicy Never, nvidia.com/gpu in limits only (whole GPUs), the dataset export mounted
 * read-only and the checkpoint export read-write, both straight from the NFS server. Pure: spec in, YAML text out.
 */
public final class JobManifest {
    public static final String MANAGED_BY = "app.kubernetes.io/managed-by";
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
        y.append("spec:\n");
        y.append("  backoffLimit: 0\n");
        y.append("  template:\n");
        y.append("    metadata:\n");
        y.append("      labels:\n");
        y.append("        ").append(MANAGED_BY).append(": gpuctl\n");
        y.append("    spec:\n");
        y.append("      restartPolicy: Never\n");
        y.append("      containers:\n");
        y.append("        - name: trainer\n");
        y.append("          image: ").append(scalar(spec.image())).append('\n');
        if (!spec.command().isEmpty()) {
            y.append("          command: [").append(String.join(", ", spec.command().stream().map(JobManifest::quoted).toList())).append("]\n");
        }
        if (!spec.env().isEmpty()) {
            y.append("          env:\n");
            for (Map.Entry<String, String> e : spec.env().entrySet()) {
                y.append("            - { name: ").append(scalar(e.getKey())).append(", value: ").append(quoted(e.getValue())).append(" }\n");
            }
        }
        y.append("          resources:\n");
        y.append("            limits:\n");
        y.append("              nvidia.com/gpu: ").append(spec.gpus()).append('\n');
        List<Volume> volumes = volumes(spec);
        if (!volumes.isEmpty()) {
            y.append("          volumeMounts:\n");
            for (Volume v : volumes) {
                y.append("            - { name: ").append(v.name()).append(", mountPath: ").append(scalar(v.mount().mountPath()))
                    .append(v.readOnly() ? ", readOnly: true }\n" : " }\n");
            }
            y.append("      volumes:\n");
            for (Volume v : volumes) {
                y.append("        - name: ").append(v.name()).append('\n');
                y.append("          nfs: { server: ").append(scalar(v.mount().server())).append(", path: ")
                    .append(scalar(v.mount().export().path())).append(v.readOnly() ? ", readOnly: true }\n" : " }\n");
            }
        }
        return y.toString();
    }

    private record Volume(String name, JobSpec.Mount mount, boolean readOnly) {}

    private static List<Volume> volumes(JobSpec spec) {
        Optional<Volume> dataset = spec.dataset().map(m -> new Volume("dataset", m, true));
        Optional<Volume> ckpt = spec.checkpoint().map(m -> new Volume("ckpt", m, false));
        return java.util.stream.Stream.of(dataset, ckpt).flatMap(Optional::stream).toList();
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
