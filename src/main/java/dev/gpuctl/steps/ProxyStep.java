package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.hostfiles.ProxyConfig;
import dev.gpuctl.inventory.ContainerRuntime;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.Proxy;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Step 1a, proxy: with {@code cluster.proxy}, apt, the container runtime, kubelet and gpuctl's own downloads (curl,
 * through {@link #ENV_FILE}) go through it, NO_PROXY keeping the cluster's own traffic direct; without it, the files
 * an earlier run wrote are removed. First in host preparation: every later step may download. The proxy's URLs (and
 * any password in them) are only in root's files: {@link #ENV_FILE} (0600, root), which the runtime's and kubelet's
 * drop-ins name as their {@code EnvironmentFile=} (a unit's {@code Environment=} lines are readable by every local user
 * over D-Bus), and apt's file (0600 when it holds a password).
 */
public final class ProxyStep implements Step {
    static final String APT_FILE = "/etc/apt/apt.conf.d/95gpuctl-proxy";
    /**
     * The proxy environment, root's only (0600): the runtime's and kubelet's {@code EnvironmentFile=}, and sourced by
     * gpuctl's curl commands ({@link HostWrite#CURL}).
     */
    static final String ENV_FILE = "/etc/gpuctl/proxy.env";

    @Override public String id() { return "proxy"; }
    @Override public String title() { return "HTTP(S) proxy (cluster.proxy)"; }
    @Override public boolean runsOn(HostContext ctx) { return true; }

    static String dropIn(String unit) { return "/etc/systemd/system/" + unit + ".service.d/20-gpuctl-proxy.conf"; }

    /** The units that get the proxy environment: the runtime (docker: dockerd pulls; containerd) and kubelet. */
    static List<String> units(HostContext ctx) {
        return List.of(ctx.cluster().runtime() == ContainerRuntime.DOCKER ? "docker" : "containerd", "kubelet");
    }

    static List<String> files(HostContext ctx) {
        List<String> f = new ArrayList<>(List.of(APT_FILE, ENV_FILE));
        for (String u : units(ctx)) f.add(dropIn(u));
        return f;
    }

    static List<String> noProxy(HostContext ctx, Proxy p) {
        List<Node> nodes = ctx.inventory().nodes();
        List<String> addresses = new ArrayList<>();
        for (Node n : nodes) {
            addresses.add(n.address());
            HostContext.literalNodeIp(n).filter(ip -> !ip.equals(n.address())).ifPresent(addresses::add);
        }
        return ProxyConfig.noProxy(p.noProxy(), nodes.stream().map(Node::name).toList(), addresses,
            ctx.cluster().podCidr().toString(), ctx.cluster().serviceCidr().toString());
    }

    static boolean hasCredentials(Proxy p) {
        return Stream.of(p.http(), p.https()).flatMap(Optional::stream).anyMatch(u -> u.matches("^[a-z]+://[^/]*@.*"));
    }

    private record Want(String what, String path, String content) {}

    private static List<Want> wanted(HostContext ctx, Proxy p) {
        List<String> no = noProxy(ctx, p);
        List<Want> w = new ArrayList<>();
        w.add(new Want("apt's proxy", APT_FILE, ProxyConfig.aptConf(p.http(), p.https())));
        w.add(new Want("the proxy environment (root only)", ENV_FILE, ProxyConfig.environmentFile(p.http(), p.https(), no)));
        for (String u : units(ctx)) w.add(new Want(u + "'s proxy environment (" + ENV_FILE + ")", dropIn(u), ProxyConfig.dropIn(ENV_FILE)));
        return w;
    }

    @Override public List<Probe> check(HostContext ctx) {
        Optional<Proxy> proxy = ctx.cluster().proxy();
        if (proxy.isEmpty()) {
            String cmd = "for f in " + ShellWords.words(files(ctx)) + "; do [ -e \"$f\" ] && echo \"$f\"; done; true";
            return List.of(Probe.of("no proxy files of gpuctl's (cluster.proxy is not set)", cmd,
                r -> r.stdout().isBlank() ? Optional.empty()
                    : Optional.of("left from an earlier cluster.proxy: " + String.join(", ", r.stdout().strip().split("\n")))));
        }
        List<Probe> probes = new ArrayList<>();
        for (Want w : wanted(ctx, proxy.get())) probes.add(KernelStep.fileHolds(w.path(), w.content(), w.what()));
        probes.add(envFileIsRoots());
        return probes;
    }

    @Override public List<Op> apply(HostContext ctx) {
        Optional<Proxy> proxy = ctx.cluster().proxy();
        List<Op> ops = new ArrayList<>();
        if (proxy.isEmpty()) {
            List<String> f = files(ctx);
            String any = "for f in " + ShellWords.words(f) + "; do [ -e \"$f\" ] && exit 1; done; exit 0";
            ops.add(Op.Run.of("remove gpuctl's proxy files", "rm -f -- " + ShellWords.words(f)).unless(any).changing(f.toArray(String[]::new)));
            ops.add(reload(ctx, f));
            return ops;
        }
        boolean password = hasCredentials(proxy.get());
        ops.add(Op.Run.of("directories for the proxy files", "install -d -m 0755 /etc/gpuctl " + ShellWords.words(units(ctx).stream()
                .map(u -> "/etc/systemd/system/" + u + ".service.d").toList()))
            .unless("test -d /etc/gpuctl" + units(ctx).stream().map(u -> " -a -d /etc/systemd/system/" + u + ".service.d").reduce("", String::concat)));
        List<String> paths = new ArrayList<>();
        for (Want w : wanted(ctx, proxy.get())) {
            // the environment file is root's always (it names the proxy); apt's is when it holds a password; the drop-ins hold none
            boolean secret = w.path().equals(ENV_FILE) || w.path().equals(APT_FILE) && password;
            Op.WriteFile file = Op.WriteFile.literal(w.what(), w.path(), w.content(), secret ? "0600" : "0644");
            ops.add(secret && password ? file.asSecret() : file);
            paths.add(w.path());
        }
        ops.add(Op.Run.of("the proxy environment root's only (0600 root:root)", "chown root:root " + ENV_FILE + " && chmod 0600 " + ENV_FILE)
            .unlessRight(envFileIsRoots()));
        ops.add(reload(ctx, paths));
        return ops;
    }

    /** The environment file is a regular file of root's, mode 0600 (an older gpuctl wrote it 0644 without a password). */
    static Probe envFileIsRoots() {
        return Probe.of(ENV_FILE + " is root's only (0600 root:root)", "stat -c '%F %a %U:%G' " + ENV_FILE,
            r -> r.stdout().strip().equals("regular file 600 root:root") ? Optional.empty()
                : Optional.of(ENV_FILE + " is " + (r.stdout().isBlank() ? "missing" : r.stdout().strip()) + ", expected a regular file 600 root:root"));
    }

    /** After a drop-in changed: systemd re-reads its units, and the runtime and kubelet restart if they run. */
    private static Op.Run reload(HostContext ctx, List<String> changed) {
        StringBuilder cmd = new StringBuilder("systemctl daemon-reload");
        for (String u : units(ctx)) cmd.append(" && { ! systemctl is-active -q ").append(u).append(" || systemctl restart ").append(u).append("; }");
        return Op.Run.of("reload systemd; restart " + String.join(" and ", units(ctx)) + " if running", cmd.toString())
            .onlyIfChanged(changed.toArray(String[]::new));
    }
}
