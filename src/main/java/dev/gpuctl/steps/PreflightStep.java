package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.kube.ApiServerImage;
import dev.gpuctl.hostfiles.DockerInfo;
import dev.gpuctl.gpu.GpuHealth;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.hostfiles.IpJson;
import dev.gpuctl.gpu.NvidiaSmi;
import dev.gpuctl.text.Terminal;
import dev.gpuctl.gpu.Xids;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Step 0, preflight: read-only questions to every host before anything changes anywhere. Each host's answers
 * are judged here; what needs all hosts at once (unique hostnames and machine-ids, clock skew against this
 * machine, the live CIDR check over every host's routes and addresses) is judged by the engine from the facts
 * these probes learn.
 */
public final class PreflightStep implements Step {
    /** A host's interface addresses and routes, as its preflight read them (for the CIDR check). */
    public static Facts.Key<IpJson.HostNetwork> network(Node node) {
        return new Facts.Key<>("host." + node.name() + ".ip", IpJson.HostNetwork.class, IpJson.HostNetwork::parse);
    }

    /**
     * The ranges a running docker reserves: daemon.json's {@code bip}, {@code fixed-cidr} and address pools, read without
     * starting the docker CLI (a worker's one docker process per run is the runtime step's {@code docker info}). The
     * bridge docker made is an interface (docker0, or daemon.json's {@code bridge}) with its route, which the interface
     * and route probe already reports; {@code docker network inspect bridge} repeated that range and cost a docker
     * process, and {@code docker info >/dev/null} one more to learn that the daemon runs, which its unit tells.
     */
    static final String DOCKER_RANGES = "if systemctl is-active --quiet docker 2>/dev/null; then cat /etc/docker/daemon.json 2>/dev/null; fi; true";

    /** The ranges a host's docker reserves (daemon.json), as its preflight read them; none without docker. */
    public static Facts.Key<DockerInfo.Networks> docker(Node node) {
        return new Facts.Key<>("host." + node.name() + ".docker", DockerInfo.Networks.class, DockerInfo.Networks::parse);
    }

    /** A host's hostname, machine-id and product_uuid ("" where it has none), as its preflight read them (the unique check). */
    public record HostIdentity(String hostname, String machineId, String productUuid) {
        /** The answer of {@code hostname; cat /etc/machine-id; cat product_uuid}, one a line. */
        static HostIdentity parse(String answer) {
            String[] l = answer.strip().split("\n");
            return new HostIdentity(l[0].strip(), l.length > 1 ? l[1].strip() : "", l.length > 2 ? l[2].strip().toLowerCase(Locale.ROOT) : "");
        }
    }

    /** Where a host's identity is learned ({@link HostIdentity}); learned only when the host answered with a machine-id line. */
    public static Facts.Key<HostIdentity> identity(Node node) {
        return new Facts.Key<>("host." + node.name() + ".identity", HostIdentity.class, HostIdentity::parse);
    }

    /**
     * A host's clock and this machine's when it answered, seconds since the epoch as each printed them (the skew check).
     * {@code host} is the host's text as it came: the check says when it is not a number.
     */
    public record ClockReading(String host, String local) {
        static ClockReading parse(String text) {
            int nl = text.lastIndexOf('\n');
            return new ClockReading(text.substring(0, Math.max(nl, 0)), text.substring(nl + 1));
        }

        static String text(String host, double local) { return host + "\n" + local; }
    }

    /** Where a host's clock reading is learned ({@link ClockReading}). */
    public static Facts.Key<ClockReading> clock(Node node) {
        return new Facts.Key<>("host." + node.name() + ".clock", ClockReading.class, ClockReading::parse);
    }

    /** A failed preflight check's fix: preflight only reads. */
    public static final String FIX = "see the problem; preflight checks are not changed by gpuctl";

    @Override public String id() { return "preflight"; }
    @Override public String fix(Probe probe, boolean failed, String host, String inventory) { return FIX; }
    @Override public String title() { return "preflight (read-only)"; }
    @Override public boolean runsOn(HostContext ctx) { return true; }

    /** Distributions gpuctl supports: ID and VERSION_ID from /etc/os-release. */
    static final List<String> SUPPORTED = List.of("debian 12", "ubuntu 22.04", "ubuntu 24.04");

    static Optional<String> osProblem(String osRelease) {
        String id = field(osRelease, "ID");
        String version = field(osRelease, "VERSION_ID");
        return SUPPORTED.contains(id + " " + version) ? Optional.empty()
            : Optional.of("unsupported OS " + Terminal.escape(field(osRelease, "PRETTY_NAME")) + " (supported: Debian 12, Ubuntu 22.04, Ubuntu 24.04)");
    }

    static String field(String osRelease, String key) {
        return osRelease.lines().filter(l -> l.startsWith(key + "=")).findFirst()
            .map(l -> l.substring(key.length() + 1).replaceAll("^\"|\"$", "")).orElse("");
    }

    @Override public List<Probe> check(HostContext ctx) {
        String n = ctx.node().name();
        List<Probe> probes = new ArrayList<>();
        probes.add(Probe.equals("commands run as root", "id -u", "0"));
        probes.add(Probe.of("supported OS (/etc/os-release)", "cat /etc/os-release", r -> osProblem(r.stdout())));
        probes.add(Probe.equals("cgroup v2 (/sys/fs/cgroup)", "stat -fc %T /sys/fs/cgroup", "cgroup2fs"));
        probes.add(Probe.of("hostname and machine-id", "hostname; cat /etc/machine-id; cat /sys/class/dmi/id/product_uuid 2>/dev/null || true", r -> {
                    String[] l = r.stdout().strip().split("\n");
                    if (!r.ok()) return Optional.of("cannot read: " + r.tail(1));
                    return l.length < 2 || l[1].isBlank()
                        ? Optional.of("/etc/machine-id is empty: give the host one (systemd-machine-id-setup); the kubelet and cluster networking tell nodes apart by it")
                        : Optional.empty();
                })
            // product_uuid: absent in containers and on some boards; then there is nothing to compare
            .learning(r -> r.stdout().strip().split("\n").length < 2 ? Map.of() : Map.of(identity(ctx.node()).name(), r.stdout())));
        if (HostContext.literalNodeIp(ctx.node()).isEmpty()) probes.add(nodeIp(ctx));
        probes.add(Probe.of("clock (compared with this machine's)", "date +%s.%N", r -> r.ok() ? Optional.empty()
                : Optional.of("cannot read the clock"))
            .learning(r -> Map.of(clock(ctx.node()).name(), ClockReading.text(r.stdout().strip(), System.currentTimeMillis() / 1000.0))));
        probes.add(Probe.of("interface addresses and routes (for the CIDR check)", "ip -j addr; echo; ip -j route",
                r -> r.ok() ? Optional.empty() : Optional.of(r.exit() == 127
                    ? "the ip command is missing: install iproute2 (apt-get install iproute2)"
                    : "ip -j failed: " + r.tail(1)))
            .learning(r -> Map.of(network(ctx.node()).name(), r.stdout())));
        probes.add(Probe.of("docker's reserved ranges and address pools, if docker runs (for the CIDR check)", DOCKER_RANGES, r -> Optional.empty())
            .learning(r -> Map.of(docker(ctx.node()).name(), r.stdout())));
        if (ctx.gpu()) {
            probes.add(Probe.of("nvidia-smi answers and sees at least one GPU",
                    "nvidia-smi --query-gpu=" + NvidiaSmi.QUERY_FIELDS + " --format=csv,noheader,nounits 2>&1", r -> {
                        if (!r.ok()) return Optional.of("nvidia-smi failed (exit " + r.exit() + "): " + r.tail(2)
                            + " — install the NVIDIA driver, or set gpu: false for this node");
                        var scan = NvidiaSmi.parseQuery(r.stdout());
                        if (scan.problem().isPresent()) return scan.problem();
                        return scan.gpus().isEmpty() ? Optional.of("nvidia-smi lists no GPU") : Optional.empty();
                    })
                .learning(r -> gpuFacts(ctx, r)));
            probes.addAll(MigStep.preflight(ctx));
            probes.add(Probe.of("the GPU list an earlier gpuctl kept on the host (" + GpuRecordStep.LEGACY_RECORD + "), if any, for the node annotation",
                    "cat " + GpuRecordStep.LEGACY_RECORD + " 2>/dev/null; true", r -> Optional.empty())
                .learning(r -> Map.of(GpuRecordStep.legacyFact(ctx.node()), legacyRecord(r.stdout()))));
        }
        probes.add(runningVersion(ctx));
        if (LostMasterStep.asked(ctx)) probes.add(LostMasterStep.disk(ctx));
        return probes;
    }

    /** kube-apiserver's static pod manifest: its image tag is the control plane's version. */
    static final String APISERVER_MANIFEST = "/etc/kubernetes/manifests/kube-apiserver.yaml";

    /**
     * The version a running cluster has on this host (the master: kube-apiserver's image; a joined node: the
     * kubelet's), which bootstrap must not change: the minor the inventory asks for must be the running one.
     */
    static Probe runningVersion(HostContext ctx) {
        String want = ctx.cluster().kubernetesVersion();
        if (ctx.node().isMaster()) {
            return Probe.of("the running control plane's version is the inventory's (" + want + ")",
                "f=" + APISERVER_MANIFEST + "; if [ -s $f ]; then sed -n 's/^[[:space:]]*image:[[:space:]]*//p' $f; fi",
                r -> r.ok() ? versionProblem(want, imageVersion(r.stdout()), "the cluster runs")
                    : Optional.of("cannot read " + APISERVER_MANIFEST + ": " + r.tail(1)));
        }
        return Probe.of("a joined node's kubelet is at the inventory's version (" + want + ")",
            "if [ -s /etc/kubernetes/kubelet.conf ] && command -v kubelet >/dev/null; then kubelet --version; fi",
            r -> r.ok() ? versionProblem(want, kubeletVersion(r.stdout()), "the kubelet here is")
                : Optional.of("kubelet --version failed: " + r.tail(1)));
    }

    /** "v1.34.2" from kube-apiserver's image line ("registry.k8s.io/kube-apiserver:v1.34.2"); empty when none. */
    static Optional<String> imageVersion(String imageLines) {
        return ApiServerImage.parse(imageLines).tag();
    }

    /** "v1.34.2" from {@code kubelet --version} ("Kubernetes v1.34.2"); empty when none. */
    static Optional<String> kubeletVersion(String out) {
        var m = Pattern.compile("Kubernetes (v\\d+\\.\\d+\\.\\d+\\S*)").matcher(out);
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /**
     * Why bootstrap must not go on: the running version's minor is not the inventory's (an upgrade is kubeadm's
     * work, a minor at a time, the control plane first; a downgrade is never possible). Empty when they agree or
     * nothing runs yet.
     */
    static Optional<String> versionProblem(String wantMinor, Optional<String> running, String what) {
        if (running.isEmpty()) return Optional.empty();
        String v = running.get();
        String[] have = v.substring(1).split("\\.");
        String[] want = wantMinor.split("\\.");
        int cmp = Integer.compare(Integer.parseInt(have[0]), Integer.parseInt(want[0]));
        if (cmp == 0) cmp = Integer.compare(Integer.parseInt(have[1]), Integer.parseInt(want[1]));
        String haveMinor = have[0] + "." + have[1];
        if (cmp == 0) return Optional.empty();
        if (cmp > 0) {
            return Optional.of(what + " " + v + ", newer than the inventory's " + wantMinor + ": a downgrade is refused; set"
                + " cluster.kubernetesVersion: \"" + haveMinor + "\" in the inventory");
        }
        return Optional.of(what + " " + v + "; the inventory asks for " + wantMinor + ": run `gpuctl upgrade` (bootstrap never"
            + " changes a running cluster's version: it would move kubelets ahead of the API server); or set"
            + " cluster.kubernetesVersion: \"" + haveMinor + "\"");
    }

    /**
     * For a node whose address is a host name and that has no nodeIp: the IP it uses towards the master (the
     * master's IP from the inventory, else its address resolved on this host, loopback answers left out), i.e.
     * the source address of {@code ip -j route get MASTER}; on the master itself, its own address that the name
     * resolves to. Learned as {@link HostContext#nodeIpFact}; a name that does not resolve fails preflight.
     */
    static Probe nodeIp(HostContext ctx) {
        var master = ctx.inventory().master();
        String target = HostContext.literalNodeIp(master).orElse(master.address());
        String q = ShellWords.quote(target);
        String cmd = "m=$( { getent ahostsv4 " + q + "; getent ahosts " + q + "; } 2>/dev/null"
            + " | awk '$1 !~ /^127\\./ && $1 != \"::1\" && $1 !~ /^::ffff:127\\./ {print $1; exit}');"
            + " if [ -z \"$m\" ]; then echo unresolved; else echo \"$m\"; ip -j route get \"$m\"; fi";
        String who = master.name().equals(ctx.node().name()) ? "its own address" : "the master's address";
        return Probe.of("node IP for the cluster (address is a name: the source address towards " + master.name() + ")", cmd, r -> {
                String first = r.stdout().strip().lines().findFirst().orElse("");
                if (!r.ok()) return Optional.of("cannot find it: exit " + r.exit() + ": " + r.tail(2));
                if (first.equals("unresolved") || first.isEmpty()) {
                    return Optional.of(who + " '" + target + "' does not resolve here (getent ahosts) to an address other than"
                        + " loopback: add it to DNS or /etc/hosts on " + ctx.node().name() + ", or set nodes[].nodeIp for "
                        + ctx.node().name() + " in the inventory");
                }
                return nodeIpOf(r.stdout()).isPresent() ? Optional.empty()
                    : Optional.of("no route from " + ctx.node().name() + " to " + target + " (" + first + "), or only from a loopback"
                        + " address: set nodes[].nodeIp for " + ctx.node().name() + " in the inventory");
            })
            .learning(r -> nodeIpOf(r.stdout()).map(ip -> Map.of(HostContext.nodeIpFact(ctx.node()), ip)).orElse(Map.of()));
    }

    /** The source address in the node IP probe's answer: the resolved address on one line, then ip -j route get. */
    static Optional<String> nodeIpOf(String stdout) {
        int nl = stdout.indexOf('\n');
        if (nl < 0) return Optional.empty();
        try {
            return IpJson.sourceTowards(stdout.substring(nl + 1));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The fact of a GPU node's GPUs by PCI bus id ({@link Xids#gpusText}), for naming the GPU an Xid names. */
    public static String gpuBusFact(String node) { return "gpu." + node + ".pciBus"; }

    static String gpuBusFact(Node node) { return gpuBusFact(node.name()); }

    /** The record ({@link GpuHealth#record}) of an {@code nvidia-smi -L} list an earlier gpuctl kept; "" when none or unreadable. */
    static String legacyRecord(String list) {
        try {
            return GpuHealth.record(NvidiaSmi.parseList(list).gpus());
        } catch (HostConfException e) {
            return "";
        }
    }

    /**
     * What a GPU node's nvidia-smi query teaches: its GPU count and driver, its GPUs as a record
     * ({@link GpuRecordStep}; "" when nvidia-smi listed none, with the reason beside it), and the NVML library's
     * answer about the driver that {@link GpuHealthStep} judges against the loaded module.
     */
    static Map<String, String> gpuFacts(HostContext ctx, ExecResult r) {
        Map<String, String> facts = new HashMap<>();
        String out = r.stdout();
        NvidiaSmi.GpuScan now;
        try {
            now = NvidiaSmi.parseQuery(out);
        } catch (HostConfException e) {
            now = new NvidiaSmi.GpuScan(List.of(), Optional.of(e.getMessage()));
        }
        facts.put(GpuRecordStep.gpusFact(ctx.node()), GpuHealth.record(now.gpus()));
        facts.put(gpuBusFact(ctx.node().name()), Xids.gpusText(now.gpus()));
        facts.put(GpuRecordStep.gpusProblemFact(ctx.node()), now.problem().orElse(r.ok() ? "" : "nvidia-smi failed (exit " + r.exit() + "): " + r.tail(2)));
        facts.put(GpuHealthStep.driverAnswerFact(ctx), GpuHealth.DriverAnswer.ofQuery(r.exit(), out).text());
        if (!r.ok()) return facts;
        var scan = now;
        facts.put(GpuStep.gpuCountFact(ctx.node()), String.valueOf(scan.gpus().size()));
        scan.gpus().stream().map(NvidiaSmi.Gpu::driverVersion).filter(Objects::nonNull).findFirst()
            .ifPresent(v -> facts.put("gpu." + ctx.node().name() + ".driver", v));
        return facts;
    }

    @Override public List<Op> apply(HostContext ctx) { return List.of(); }
}
