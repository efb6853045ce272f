package dev.gpuctl.steps;

import dev.gpuctl.hostfiles.ContainerdConfig;
import dev.gpuctl.hostfiles.DaemonJson;
import dev.gpuctl.hostfiles.DockerInfo;
import dev.gpuctl.inventory.ContainerRuntime;
import dev.gpuctl.inventory.PackageSource;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Step 4, the container runtime. For {@code docker}: Docker Engine with a merged daemon.json (systemd cgroups,
 * json-file logs, overlay2; nvidia as the default runtime on GPU nodes only) and cri-dockerd, since Docker is no
 * kubelet runtime without it since Kubernetes 1.24. For {@code containerd}: SystemdCgroup = true and, on GPU
 * nodes, {@code nvidia-ctk runtime configure --runtime=containerd --set-as-default}. Verified by asking the
 * runtime itself, not by reading its file back.
 */
public final class RuntimeStep implements Step {
    static final String DAEMON_JSON = "/etc/docker/daemon.json";
    static final String CONTAINERD_TOML = "/etc/containerd/config.toml";

    @Override public String id() { return "runtime"; }
    @Override public String title() { return "container runtime"; }
    @Override public boolean runsOn(HostContext ctx) { return true; }

    static List<String> packages(HostContext ctx) {
        boolean upstream = ctx.cluster().packages() == PackageSource.UPSTREAM;
        List<String> pkgs = new ArrayList<>(ctx.cluster().runtime() == ContainerRuntime.DOCKER
            ? List.of("docker-ce", "docker-ce-cli", "containerd.io", "cri-dockerd")
            : List.of(upstream ? "containerd.io" : "containerd"));
        if (ctx.gpu()) pkgs.add("nvidia-container-toolkit");
        return pkgs;
    }

    @Override public List<Probe> check(HostContext ctx) {
        List<Probe> probes = new ArrayList<>();
        probes.add(Sh.packagesInstalled(packages(ctx)));
        if (ctx.cluster().runtime() == ContainerRuntime.DOCKER) {
            probes.add(Probe.of("daemon.json holds gpuctl's settings (" + DAEMON_JSON + ")",
                "cat " + DAEMON_JSON + " 2>/dev/null || true", r -> {
                    var problems = DaemonJson.problems(r.stdout(), ctx.gpu());
                    return problems.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", problems));
                }));
            probes.add(dockerAnswers(ctx.gpu()));
            probes.add(Sh.unitsRunning(List.of("docker", "cri-docker.socket", "cri-docker")));
        } else {
            probes.add(Probe.of("containerd runs runc with SystemdCgroup = true"
                    + (ctx.gpu() ? " and nvidia as its default runtime" : ""),
                "containerd config dump 2>&1", r -> containerdProblems(r.stdout(), ctx.gpu())));
            probes.add(Sh.unitsRunning(List.of("containerd")));
        }
        return probes;
    }

    /** Asks Docker itself which cgroup driver, default runtime, log and storage driver it runs with. */
    static Probe dockerAnswers(boolean gpu) {
        String runtime = gpu ? "nvidia" : "runc";
        return Probe.of("docker runs with cgroup driver systemd, default runtime " + runtime + ", json-file logs, overlay2",
            "docker info --format '{{json .}}'", r -> {
                if (!r.ok()) return Optional.of("docker info failed (exit " + r.exit() + "): " + r.tail(3));
                var info = DockerInfo.parseInfo(r.stdout());
                List<String> wrong = new ArrayList<>();
                if (!"systemd".equals(info.cgroupDriver())) wrong.add("cgroup driver " + info.cgroupDriver() + ", expected systemd");
                if (!runtime.equals(info.defaultRuntime())) wrong.add("default runtime " + info.defaultRuntime() + ", expected " + runtime);
                if (!"json-file".equals(info.loggingDriver())) wrong.add("log driver " + info.loggingDriver() + ", expected json-file");
                if (!"overlay2".equals(info.driver())) wrong.add("storage driver " + info.driver() + ", expected overlay2");
                return wrong.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", wrong));
            });
    }

    static Optional<String> containerdProblems(String dump, boolean gpu) {
        List<String> wrong = new ArrayList<>();
        if (!dump.matches("(?s).*SystemdCgroup\\s*=\\s*true.*")) wrong.add("SystemdCgroup is not true");
        if (gpu && !dump.matches("(?s).*default_runtime_name\\s*=\\s*\"nvidia\".*")) wrong.add("default runtime is not nvidia");
        if (!gpu && dump.matches("(?s).*default_runtime_name\\s*=\\s*\"nvidia\".*")) wrong.add("default runtime is nvidia on a node without GPUs");
        return wrong.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", wrong));
    }

    @Override public List<Op> apply(HostContext ctx) {
        boolean upstream = ctx.cluster().packages() == PackageSource.UPSTREAM;
        boolean docker = ctx.cluster().runtime() == ContainerRuntime.DOCKER;
        List<Op> ops = new ArrayList<>();
        if (upstream) {
            ops.add(Upstream.prerequisites());
            ops.add(Upstream.dockerRepo()); // containerd.io comes from Docker's repository too
            if (ctx.gpu()) ops.add(Upstream.nvidiaToolkitRepo());
        }
        List<String> aptPackages = new ArrayList<>(packages(ctx));
        if (upstream && docker) {
            aptPackages.remove("cri-dockerd");
        }
        ops.add(Sh.aptInstall("install " + String.join(", ", aptPackages), aptPackages));
        if (upstream && docker) ops.add(Upstream.criDockerdDeb());
        if (docker) {
            ops.add(new Op.EditFile("merge gpuctl's settings into daemon.json", DAEMON_JSON,
                "merge (keeping every other key): exec-opts native.cgroupdriver=systemd, log-driver json-file, "
                    + "log-opts.max-size 100m, storage-driver overlay2"
                    + (ctx.gpu() ? ", default-runtime nvidia, runtimes.nvidia.path nvidia-container-runtime"
                                 : ", no nvidia default runtime (this node has no GPU)"),
                text -> DaemonJson.merge(text, ctx.gpu()), "0644"));
            ops.add(Op.Run.of("restart docker to load daemon.json", "systemctl restart docker").onlyIfChanged(DAEMON_JSON));
            ops.add(Sh.enableNow(List.of("docker", "cri-docker.socket", "cri-docker")));
        } else {
            ops.add(Op.Run.of("containerd's default config",
                    "install -d -m 0755 /etc/containerd || exit 1; "
                        + HostWrite.replaceWithOutput(CONTAINERD_TOML, "containerd config default", "0644"))
                .unless("grep -Eq '^[[:space:]]*version[[:space:]]*=' " + CONTAINERD_TOML + " 2>/dev/null").changing(CONTAINERD_TOML)
                .journalling(Sh.journalWrite(CONTAINERD_TOML)));
            ops.add(new Op.EditFile("runc with systemd cgroups", CONTAINERD_TOML,
                "set SystemdCgroup = true in the runc runtime's options (config version 2 or 3)",
                ContainerdConfig::ensureSystemdCgroup, "0644"));
            if (ctx.gpu()) {
                ops.add(Op.Run.of("nvidia as containerd's default runtime",
                        "nvidia-ctk runtime configure --runtime=containerd --set-as-default")
                    .unless("grep -Eq 'default_runtime_name[[:space:]]*=[[:space:]]*\"nvidia\"' " + CONTAINERD_TOML)
                    .changing(CONTAINERD_TOML).journalling(Sh.journalWrite(CONTAINERD_TOML)));
            }
            ops.add(Op.Run.of("restart containerd to load its config", "systemctl restart containerd").onlyIfChanged(CONTAINERD_TOML));
            ops.add(Sh.enableNow(List.of("containerd")));
        }
        return ops;
    }
}
