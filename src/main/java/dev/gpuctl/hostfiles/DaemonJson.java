package dev.gpuctl.hostfiles;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.text.JsonText;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Merges the settings gpuctl needs into docker's /etc/docker/daemon.json without clobbering the
 * site's own settings (registry mirrors, insecure registries, data-root, anything else).
 *
 * <p>What gpuctl requires, on every node:
 * <ul>
 *   <li>{@code exec-opts} contains {@code native.cgroupdriver=systemd}: any other
 *       {@code native.cgroupdriver=} entry (dockerd reads the key case-insensitively) is replaced in
 *       place, other exec-opts are kept;</li>
 *   <li>{@code log-driver} is {@code json-file} (what {@code kubectl logs} through cri-dockerd
 *       reads) and {@code log-opts.max-size} is {@code 100m}; other log-opts (max-file, ...) are kept;</li>
 *   <li>{@code storage-driver} is {@code overlay2}.</li>
 * </ul>
 * On a GPU node: {@code default-runtime} is {@code nvidia} (without it the device plugin sees no
 * GPU) and {@code runtimes.nvidia} runs {@code nvidia-container-runtime}. An existing
 * {@code runtimes.nvidia} whose {@code path} is that program (by name or absolute path, as
 * {@code nvidia-ctk runtime configure} writes it) is kept as it is, with any runtimeArgs; any
 * other nvidia entry is replaced. Other runtimes are kept.
 *
 * <p>On a node without a GPU a {@code default-runtime} of {@code nvidia} is <b>removed</b>: there
 * is no nvidia-container-runtime there, and that default makes every container on the node fail
 * to start. A {@code runtimes.nvidia} entry is left alone there: declared but unused, it harms nothing.
 *
 * <p>Output: two-space indented JSON, existing keys in their original order, new keys appended
 * in the order above, a final newline. {@code merge(merge(x)) equals merge(x)}.
 */
public final class DaemonJson {

    public static final String CGROUP_DRIVER_OPT = "native.cgroupdriver=systemd";
    public static final String LOG_DRIVER = "json-file";
    public static final String LOG_MAX_SIZE = "100m";
    public static final String STORAGE_DRIVER = "overlay2";
    public static final String NVIDIA = "nvidia";
    public static final String NVIDIA_RUNTIME_PATH = "nvidia-container-runtime";

    private static final String WHAT = "daemon.json";
    private static final String HINT = "fix or move it, gpuctl does not replace it";

    private DaemonJson() {
    }

    /**
     * Returns daemon.json with gpuctl's settings merged in.
     *
     * @param existingOrEmpty the current file; empty or blank stands for {@code {}}
     * @param gpuNode         whether this node has GPUs (and gets the nvidia default runtime)
     * @throws HostConfException when the text is not JSON (with line and column), not an object,
     *                           or a key gpuctl must edit has the wrong type
     */
    public static String merge(String existingOrEmpty, boolean gpuNode) {
        ObjectNode root = read(existingOrEmpty);
        JsonNodeFactory f = JsonNodeFactory.instance;

        ArrayNode execOpts = arrayOrNew(root, "exec-opts");
        ArrayNode merged = f.arrayNode();
        boolean placed = false;
        for (JsonNode opt : execOpts) {
            if (opt.isTextual() && isCgroupDriverOpt(opt.asText())) {
                if (!placed) merged.add(CGROUP_DRIVER_OPT);
                placed = true;
            } else {
                merged.add(opt);
            }
        }
        if (!placed) merged.add(CGROUP_DRIVER_OPT);
        root.set("exec-opts", merged);

        root.put("log-driver", LOG_DRIVER);
        objectOrNew(root, "log-opts").put("max-size", LOG_MAX_SIZE);
        root.put("storage-driver", STORAGE_DRIVER);

        if (gpuNode) {
            root.put("default-runtime", NVIDIA);
            ObjectNode runtimes = objectOrNew(root, "runtimes");
            if (!isNvidiaRuntimeEntry(runtimes.get(NVIDIA))) {
                ObjectNode nvidia = f.objectNode();
                nvidia.put("path", NVIDIA_RUNTIME_PATH);
                nvidia.set("args", f.arrayNode());
                runtimes.set(NVIDIA, nvidia);
            }
        } else if (NVIDIA.equals(textOf(root.get("default-runtime")))) {
            root.remove("default-runtime");
        }
        return JsonText.pretty(root);
    }

    /**
     * What differs from what gpuctl needs, one sentence each, empty when nothing does. Exactly the
     * things {@link #merge} would change; {@code problems(merge(x, g), g)} is empty.
     */
    public static List<String> problems(String daemonJson, boolean gpuNode) {
        ObjectNode root = read(daemonJson);
        List<String> found = new ArrayList<>();

        JsonNode execOpts = root.get("exec-opts");
        List<String> drivers = new ArrayList<>();
        if (execOpts != null && execOpts.isArray()) {
            execOpts.forEach(o -> {
                if (o.isTextual() && isCgroupDriverOpt(o.asText())) drivers.add(o.asText());
            });
        } else if (!absent(execOpts)) {
            throw wrongType("exec-opts", "a list of strings", execOpts);
        }
        if (!drivers.equals(List.of(CGROUP_DRIVER_OPT))) {
            found.add(drivers.isEmpty()
                    ? "exec-opts lacks " + CGROUP_DRIVER_OPT + " (docker would use cgroupfs, kubelet uses systemd)"
                    : "exec-opts has " + String.join(", ", drivers) + ", gpuctl needs exactly " + CGROUP_DRIVER_OPT);
        }
        expect(found, root, "log-driver", LOG_DRIVER);
        JsonNode logOpts = root.get("log-opts");
        if (!absent(logOpts) && !logOpts.isObject()) throw wrongType("log-opts", "an object", logOpts);
        String maxSize = absent(logOpts) ? null : textOf(logOpts.get("max-size"));
        if (!LOG_MAX_SIZE.equals(maxSize)) {
            found.add(maxSize == null ? "log-opts.max-size is not set, gpuctl sets " + quote(LOG_MAX_SIZE)
                    : "log-opts.max-size is " + quote(maxSize) + ", gpuctl sets " + quote(LOG_MAX_SIZE));
        }
        expect(found, root, "storage-driver", STORAGE_DRIVER);

        String defaultRuntime = textOf(root.get("default-runtime"));
        if (gpuNode) {
            expect(found, root, "default-runtime", NVIDIA);
            JsonNode runtimes = root.get("runtimes");
            if (!absent(runtimes) && !runtimes.isObject()) throw wrongType("runtimes", "an object", runtimes);
            if (absent(runtimes) || !isNvidiaRuntimeEntry(runtimes.get(NVIDIA))) {
                found.add("runtimes.nvidia does not run " + NVIDIA_RUNTIME_PATH);
            }
        } else if (NVIDIA.equals(defaultRuntime)) {
            found.add("default-runtime is \"nvidia\" on a node without GPUs: every container there would fail to start");
        }
        return List.copyOf(found);
    }

    /** True when an exec-opt sets the cgroup driver (key compared as dockerd does: trimmed, any case). */
    static boolean isCgroupDriverOpt(String opt) {
        int eq = opt.indexOf('=');
        return eq >= 0 && opt.substring(0, eq).strip().toLowerCase(Locale.ROOT).equals("native.cgroupdriver");
    }

    private static boolean isNvidiaRuntimeEntry(JsonNode entry) {
        if (entry == null || !entry.isObject()) return false;
        String path = textOf(entry.get("path"));
        if (path == null || path.isBlank()) return false;
        Path name = Path.of(path.strip()).getFileName();
        return name != null && name.toString().equals(NVIDIA_RUNTIME_PATH);
    }

    private static void expect(List<String> found, ObjectNode root, String key, String wanted) {
        String actual = textOf(root.get(key));
        if (!wanted.equals(actual)) {
            found.add(actual == null ? key + " is not set, gpuctl sets " + quote(wanted)
                    : key + " is " + quote(actual) + ", gpuctl sets " + quote(wanted));
        }
    }

    private static ObjectNode read(String text) {
        if (text == null || text.isBlank()) return JsonNodeFactory.instance.objectNode();
        JsonNode node = JsonText.parse(text, WHAT, HINT);
        if (!node.isObject()) {
            throw new HostConfException(WHAT + " holds " + JsonText.typeName(node)
                    + " where docker expects an object ({ ... }); " + HINT);
        }
        return (ObjectNode) node;
    }

    private static ArrayNode arrayOrNew(ObjectNode root, String key) {
        JsonNode n = root.get(key);
        if (n == null || n.isNull()) return JsonNodeFactory.instance.arrayNode();
        if (!n.isArray()) throw wrongType(key, "a list of strings", n);
        return (ArrayNode) n;
    }

    private static ObjectNode objectOrNew(ObjectNode root, String key) {
        JsonNode n = root.get(key);
        if (n != null && n.isObject()) return (ObjectNode) n;
        if (n != null && !n.isNull()) throw wrongType(key, "an object", n);
        ObjectNode created = JsonNodeFactory.instance.objectNode();
        root.set(key, created);
        return created;
    }

    private static HostConfException wrongType(String key, String expected, JsonNode actual) {
        return new HostConfException(WHAT + " key \"" + key + "\" is " + JsonText.typeName(actual)
                + ", docker expects " + expected + "; " + HINT);
    }

    private static boolean absent(JsonNode n) {
        return n == null || n.isNull();
    }

    private static String textOf(JsonNode n) {
        return n != null && n.isTextual() ? n.asText() : null;
    }

    private static String quote(String s) {
        return "\"" + s + "\"";
    }
}
