package dev.gpuctl.gpu;

import dev.gpuctl.kube.ClusterView;
import dev.gpuctl.text.ShellWords;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * NVIDIA's documented fix for containers that lose their GPUs ("Failed to initialize NVML: Unknown Error") at a
 * {@code systemctl daemon-reload}: runc names a container's devices to systemd by their {@code /dev/char/MAJOR:MINOR}
 * path, the NVIDIA driver makes no such link for its device nodes, and systemd drops the rule of a device whose path is
 * missing when it re-applies the container's unit. {@code nvidia-ctk system create-dev-char-symlinks --create-all} makes
 * the links; a udev rule runs it whenever the driver binds (at every boot). A container that already lost its GPUs
 * keeps them lost until it is deleted and started again (NVIDIA/nvidia-docker#1730; the container toolkit's
 * troubleshooting page). Pure: parses the hosts' {@code ls -l} and the pods' {@code nvidia-smi -L} answers.
 */
public final class DevChar {
    private DevChar() {}

    /** Where NVIDIA says the rule belongs. */
    public static final String RULE_FILE = "/lib/udev/rules.d/71-nvidia-dev-char.rules";
    /** The command the rule runs, and the repair and bootstrap run once. */
    public static final String CREATE = "/usr/bin/nvidia-ctk system create-dev-char-symlinks --create-all";
    /** NVIDIA's rule, as published. */
    public static final String RULE = "# This will create /dev/char symlinks to all device nodes\n"
        + "ACTION==\"add\", DEVPATH==\"/bus/pci/drivers/nvidia\", RUN+=\"" + CREATE + "\"\n";
    /** What NVML says in a container that lost its GPUs' device access. */
    public static final String LOST = "Failed to initialize NVML: Unknown Error";

    /** The driver's device nodes, then the /dev/char links ({@code ls -l}, C locale: fixed columns). */
    public static final String LISTING = "LC_ALL=C ls -l /dev/nvidia* 2>/dev/null; echo '--- /dev/char'; LC_ALL=C ls -l /dev/char 2>&1; true";

    /** One NVIDIA character device node and its link. */
    public record Device(String path, int major, int minor, boolean linked) {
        public String number() { return major + ":" + minor; }
    }

    /**
     * The NVIDIA character devices of {@link #LISTING}'s answer (the driver's nodes, {@code /dev/nvidia-caps/*} included),
     * each with whether {@code /dev/char/MAJOR:MINOR} links to it (a relative or absolute target).
     */
    public static List<Device> parse(String listing) {
        int cut = listing.indexOf("--- /dev/char");
        String nodes = cut < 0 ? listing : listing.substring(0, cut);
        String links = cut < 0 ? "" : listing.substring(cut);
        List<String[]> devs = new ArrayList<>();
        String dir = "/dev";
        for (String line : nodes.split("\\R")) {
            String l = line.strip();
            if (l.endsWith(":") && l.startsWith("/dev/")) {
                dir = l.substring(0, l.length() - 1);
                continue;
            }
            String[] f = l.split("\\s+");
            if (f.length < 10 || !f[0].startsWith("c") || !f[4].endsWith(",") || !f[4].matches("\\d{1,4},") || !f[5].matches("\\d{1,7}")) continue;
            String name = f[9];
            String path = name.startsWith("/") ? name : dir + "/" + name;
            if (!path.startsWith("/dev/nvidia")) continue;
            devs.add(new String[] {path, f[4].substring(0, f[4].length() - 1), f[5]});
        }
        java.util.Map<String, String> linked = new java.util.LinkedHashMap<>();
        for (String line : links.split("\\R")) {
            String[] f = line.strip().split("\\s+");
            if (f.length >= 11 && f[0].startsWith("l") && f[9].equals("->") && f[8].matches("\\d{1,4}:\\d{1,7}")) linked.put(f[8], resolve(f[10]));
        }
        List<Device> out = new ArrayList<>();
        for (String[] d : devs) {
            int major = Integer.parseInt(d[1]);
            int minor = Integer.parseInt(d[2]);
            out.add(new Device(d[0], major, minor, d[0].equals(linked.get(major + ":" + minor))));
        }
        return out;
    }

    /** A link target in /dev/char as an absolute path ("../nvidia0" → "/dev/nvidia0"). */
    static String resolve(String target) {
        if (target.startsWith("/")) return java.nio.file.Path.of(target).normalize().toString();
        return java.nio.file.Path.of("/dev/char").resolve(target).normalize().toString();
    }

    /** What is wrong with the links: the devices without one; empty when every NVIDIA device node has its link. */
    public static Optional<String> linksProblem(String listing) {
        List<Device> devs = parse(listing);
        if (devs.isEmpty()) return Optional.of("no NVIDIA device node in /dev (the driver is not loaded: nvidia-smi loads it)");
        List<String> missing = devs.stream().filter(d -> !d.linked()).map(d -> "/dev/char/" + d.number() + " => " + d.path()).toList();
        if (missing.isEmpty()) return Optional.empty();
        return Optional.of(missing.size() + " of " + devs.size() + " NVIDIA device node(s) without their /dev/char link: " + String.join(", ", missing)
            + " (a systemctl daemon-reload takes these GPUs from running containers: \"" + LOST + "\")");
    }

    // ---- pods that lost their GPUs

    /** One running GPU pod and what {@code nvidia-smi -L} in it answered. */
    public record PodNvml(String pod, String node, String owner, int exit, String firstLine) {
        /** Its container lost the GPUs' device access (a daemon-reload without the links). */
        public boolean lost() { return firstLine.contains(LOST); }
        /** A controller makes a new pod when this one is deleted (a Job's or a bare pod's deletion ends its run). */
        public boolean recreated() { return List.of("ReplicaSet", "StatefulSet", "DaemonSet").contains(owner); }
    }

    /**
     * The running GPU pods ("NAMESPACE NAME NODE PHASE OWNERKIND/GPUS" lines from kubectl) and {@code nvidia-smi -L}
     * in each: "NAMESPACE/NAME NODE OWNERKIND EXIT FIRST-LINE" lines (kubectl's own "command terminated with exit code N"
     * left out). The owner kind is "-" for a bare pod.
     */
    public static String podsCommand(java.util.function.UnaryOperator<String> kubectl) {
        return kubectl.apply("get pods -A -o 'jsonpath={range .items[*]}{.metadata.namespace}{\" \"}{.metadata.name}{\" \"}{.spec.nodeName}"
                + "{\" \"}{.status.phase}{\" \"}{.metadata.ownerReferences[0].kind}{\"/\"}{.spec.containers[*].resources.limits.nvidia\\.com/gpu}{\"\\n\"}{end}'")
            + " | while read -r ns pod node phase og rest; do gpus=${og#*/}; kind=${og%%/*};"
            + " [ \"$phase\" = Running ] && [ -n \"$gpus\" ] && [ \"$gpus\" != 0 ] || continue;"
            + " out=$(" + kubectl.apply("exec -n \"$ns\" \"$pod\" -- nvidia-smi -L") + " </dev/null 2>&1); rc=$?;"
            + " printf '%s %s %s %s %s\\n' \"$ns/$pod\" \"$node\" \"${kind:--}\" \"$rc\" \"$(printf '%s\\n' \"$out\" | grep -v '^command terminated with exit code' | head -1)\"; done";
    }

    /** A namespace, pod or node name as Kubernetes allows it (DNS-1123 subdomain): anything else is not put in a command. */
    private static final java.util.regex.Pattern OBJECT_NAME = java.util.regex.Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
    private static final java.util.regex.Pattern KIND = java.util.regex.Pattern.compile("[A-Za-z][A-Za-z0-9]{0,62}");

    /** {@link #execCommand}'s command when the cluster read lists no running GPU pod: it runs nothing. */
    public static final String NO_GPU_POD = ": no running GPU pod in the cluster read";

    /**
     * {@code nvidia-smi -L} in each running GPU pod of a cluster read ({@link ClusterView.PodState#runningWithGpus}),
     * one {@code kubectl exec} a pod, printing {@link #podsCommand}'s lines (read by {@link #parsePods}); with none,
     * {@link #NO_GPU_POD}, which starts no kubectl. The pods come from the one cluster read a verify makes, so the
     * list costs no kubectl of its own. A name the master printed that no Kubernetes object can have is left out
     * (the master's answer is data, never shell text); the names are quoted all the same.
     */
    public static String execCommand(java.util.function.UnaryOperator<String> kubectl, ClusterView view) {
        StringBuilder calls = new StringBuilder();
        for (ClusterView.PodState p : view.pods()) {
            if (!p.runningWithGpus() || !OBJECT_NAME.matcher(p.namespace()).matches() || !OBJECT_NAME.matcher(p.name()).matches()
                || !OBJECT_NAME.matcher(p.node()).matches()) continue;
            String kind = KIND.matcher(p.ownerKind()).matches() ? p.ownerKind() : "-";
            calls.append(" nvml ").append(ShellWords.quote(p.namespace())).append(' ').append(ShellWords.quote(p.name()))
                .append(' ').append(ShellWords.quote(p.node())).append(' ').append(kind).append(';');
        }
        if (calls.isEmpty()) return NO_GPU_POD;
        return "nvml() { out=$(" + kubectl.apply("exec -n \"$1\" \"$2\" -- nvidia-smi -L") + " </dev/null 2>&1); rc=$?;"
            + " printf '%s %s %s %s %s\\n' \"$1/$2\" \"$3\" \"$4\" \"$rc\" \"$(printf '%s\\n' \"$out\" | grep -v '^command terminated with exit code' | head -1)\"; };"
            + calls;
    }

    /** {@link #podsCommand}'s lines read; lines that are not are skipped. */
    public static List<PodNvml> parsePods(String answer) {
        List<PodNvml> out = new ArrayList<>();
        for (String line : answer.split("\\R")) {
            String[] f = line.strip().split(" ", 5);
            if (f.length < 4 || !f[0].contains("/") || !f[3].matches("\\d{1,3}")) continue;
            out.add(new PodNvml(f[0], f[1], f[2], Integer.parseInt(f[3]), f.length > 4 ? f[4].strip() : ""));
        }
        return out;
    }

    /** The pods on {@code node} that lost their GPUs. */
    public static List<PodNvml> lostOn(List<PodNvml> pods, String node) {
        return pods.stream().filter(p -> p.node().equals(node) && p.lost()).toList();
    }

    /** What is wrong: the pods that lost their GPUs, by node; empty when every running GPU pod's nvidia-smi answered. */
    public static Optional<String> podsProblem(List<PodNvml> pods) {
        List<PodNvml> lost = pods.stream().filter(PodNvml::lost).toList();
        if (lost.isEmpty()) return Optional.empty();
        return Optional.of(lost.size() + " running GPU pod(s) lost their GPUs (nvidia-smi -L in them: \"" + LOST + "\"): "
            + String.join(", ", lost.stream().map(p -> p.pod() + " on " + p.node()).toList())
            + " (a systemctl daemon-reload on a host without the /dev/char links; a container must be started again to get them back)");
    }

    /** The nodes with a pod that lost its GPUs, in order. */
    public static List<String> nodesWithLost(List<PodNvml> pods) {
        return pods.stream().filter(PodNvml::lost).map(PodNvml::node).distinct().toList();
    }
}
