package dev.gpuctl.steps;

import dev.gpuctl.hostconf.NvidiaSmi;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Step 0, preflight: read-only questions to every host before anything changes anywhere. Each host's answers
 * are judged here; what needs all hosts at once (unique hostnames and machine-ids, clock skew against this
 * machine, the live CIDR check over every host's routes and addresses) is judged by the engine from the facts
 * these probes learn.
 */
public final class PreflightStep implements Step {
    @Override public String id() { return "preflight"; }
    @Override public String title() { return "preflight (read-only)"; }
    @Override public boolean runsOn(HostContext ctx) { return true; }

    /** Distributions gpuctl supports: ID and VERSION_ID from /etc/os-release. */
    static final List<String> SUPPORTED = List.of("debian 12", "ubuntu 22.04", "ubuntu 24.04");

    static Optional<String> osProblem(String osRelease) {
        String id = field(osRelease, "ID");
        String version = field(osRelease, "VERSION_ID");
        return SUPPORTED.contains(id + " " + version) ? Optional.empty()
            : Optional.of("unsupported OS " + field(osRelease, "PRETTY_NAME") + " (supported: Debian 12, Ubuntu 22.04, Ubuntu 24.04)");
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
        probes.add(Probe.of("hostname and machine-id", "hostname; cat /etc/machine-id", r -> {
                    String[] l = r.stdout().strip().split("\n");
                    if (!r.ok()) return Optional.of("cannot read: " + r.tail(1));
                    return l.length < 2 || l[1].isBlank()
                        ? Optional.of("/etc/machine-id is empty: give the host one (systemd-machine-id-setup); the kubelet and cluster networking tell nodes apart by it")
                        : Optional.empty();
                })
            .learning(r -> {
                String[] l = r.stdout().strip().split("\n");
                return l.length < 2 ? Map.of() : Map.of("host." + n + ".hostname", l[0].strip(), "host." + n + ".machineId", l[1].strip());
            }));
        probes.add(Probe.of("clock (compared with this machine's)", "date +%s.%N", r -> r.ok() ? Optional.empty()
                : Optional.of("cannot read the clock"))
            .learning(r -> Map.of("host." + n + ".clock", r.stdout().strip(),
                "host." + n + ".clockLocal", String.valueOf(System.currentTimeMillis() / 1000.0))));
        probes.add(Probe.of("interface addresses and routes (for the CIDR check)", "ip -j addr; echo; ip -j route",
                r -> r.ok() ? Optional.empty() : Optional.of(r.exit() == 127
                    ? "the ip command is missing: install iproute2 (apt-get install iproute2)"
                    : "ip -j failed: " + r.tail(1)))
            .learning(r -> Map.of("host." + n + ".ip", r.stdout())));
        probes.add(Probe.of("docker's bridge and address pools, if docker runs (for the CIDR check)",
                "if command -v docker >/dev/null && docker info >/dev/null 2>&1; then cat /etc/docker/daemon.json 2>/dev/null; echo; docker network inspect bridge; fi",
                r -> Optional.empty())
            .learning(r -> Map.of("host." + n + ".docker", r.stdout())));
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
        }
        return probes;
    }

    /** What nvidia-smi taught: the GPU count (what allocatable nvidia.com/gpu must equal) and the driver version. */
    static Map<String, String> gpuFacts(HostContext ctx, dev.gpuctl.remote.ExecResult r) {
        if (!r.ok()) return Map.of();
        var scan = NvidiaSmi.parseQuery(r.stdout());
        Map<String, String> facts = new java.util.HashMap<>();
        facts.put(GpuStep.gpuCountFact(ctx.node()), String.valueOf(scan.gpus().size()));
        scan.gpus().stream().map(NvidiaSmi.Gpu::driverVersion).filter(java.util.Objects::nonNull).findFirst()
            .ifPresent(v -> facts.put("gpu." + ctx.node().name() + ".driver", v));
        return facts;
    }

    @Override public List<Op> apply(HostContext ctx) { return List.of(); }
}
