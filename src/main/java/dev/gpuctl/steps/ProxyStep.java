package dev.gpuctl.steps;

import dev.gpuctl.hostconf.ProxyConfig;
import dev.gpuctl.inventory.ContainerRuntime;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Step 1a, proxy: with {@code cluster.proxy}, apt, the container runtime, kubelet and gpuctl's own downloads (curl,
 * through {@link #ENV_FILE}) go through it, NO_PROXY keeping the cluster's own traffic direct; without it, the files
 * an earlier run wrote are removed. First in host preparation: every later step may download. A file that holds
 * proxy credentials is written 0600.
 */
public final class ProxyStep implements Step {
    static final String APT_FILE = "/etc/apt/apt.conf.d/95gpuctl-proxy";
    /** Sourced by gpuctl's curl commands ({@link HostWrite#CURL}). */
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

    /** The shell file gpuctl's curl commands source: the proxy variables, exported. */
    static String envFile(Proxy p, List<String> noProxy) {
        StringBuilder sb = new StringBuilder("# written by gpuctl from cluster.proxy in the inventory\n");
        p.http().ifPresent(u -> sb.append("export http_proxy=").append(Sh.quote(u)).append('\n'));
        p.https().ifPresent(u -> sb.append("export https_proxy=").append(Sh.quote(u)).append('\n'));
        sb.append("export no_proxy=").append(Sh.quote(String.join(",", noProxy))).append('\n');
        return sb.toString();
    }

    static boolean hasCredentials(Proxy p) {
        return Stream.of(p.http(), p.https()).flatMap(Optional::stream).anyMatch(u -> u.matches("^[a-z]+://[^/]*@.*"));
    }

    private record Want(String what, String path, String content) {}

    private static List<Want> wanted(HostContext ctx, Proxy p) {
        List<String> no = noProxy(ctx, p);
        List<Want> w = new ArrayList<>();
        w.add(new Want("apt's proxy", APT_FILE, ProxyConfig.aptConf(p.http(), p.https())));
        w.add(new Want("the proxy for gpuctl's downloads", ENV_FILE, envFile(p, no)));
        for (String u : units(ctx)) w.add(new Want(u + "'s proxy environment", dropIn(u), ProxyConfig.dropIn(p.http(), p.https(), no)));
        return w;
    }

    @Override public List<Probe> check(HostContext ctx) {
        Optional<Proxy> proxy = ctx.cluster().proxy();
        if (proxy.isEmpty()) {
            String cmd = "for f in " + Sh.words(files(ctx)) + "; do [ -e \"$f\" ] && echo \"$f\"; done; true";
            return List.of(Probe.of("no proxy files of gpuctl's (cluster.proxy is not set)", cmd,
                r -> r.stdout().isBlank() ? Optional.empty()
                    : Optional.of("left from an earlier cluster.proxy: " + String.join(", ", r.stdout().strip().split("\n")))));
        }
        List<Probe> probes = new ArrayList<>();
        for (Want w : wanted(ctx, proxy.get())) probes.add(KernelStep.fileHolds(w.path(), w.content(), w.what()));
        return probes;
    }

    @Override public List<Op> apply(HostContext ctx) {
        Optional<Proxy> proxy = ctx.cluster().proxy();
        List<Op> ops = new ArrayList<>();
        if (proxy.isEmpty()) {
            List<String> f = files(ctx);
            String any = "for f in " + Sh.words(f) + "; do [ -e \"$f\" ] && exit 1; done; exit 0";
            ops.add(Op.Run.of("remove gpuctl's proxy files", "rm -f -- " + Sh.words(f)).unless(any).changing(f.toArray(String[]::new)));
            ops.add(reload(ctx, f));
            return ops;
        }
        String mode = hasCredentials(proxy.get()) ? "0600" : "0644";
        ops.add(Op.Run.of("directories for the proxy files", "install -d -m 0755 /etc/gpuctl " + Sh.words(units(ctx).stream()
                .map(u -> "/etc/systemd/system/" + u + ".service.d").toList()))
            .unless("test -d /etc/gpuctl" + units(ctx).stream().map(u -> " -a -d /etc/systemd/system/" + u + ".service.d").reduce("", String::concat)));
        List<String> paths = new ArrayList<>();
        for (Want w : wanted(ctx, proxy.get())) {
            Op.WriteFile file = Op.WriteFile.literal(w.what(), w.path(), w.content(), mode);
            ops.add(mode.equals("0600") ? file.asSecret() : file);
            paths.add(w.path());
        }
        ops.add(reload(ctx, paths));
        return ops;
    }

    /** After a drop-in changed: systemd re-reads its units, and the runtime and kubelet restart if they run. */
    private static Op.Run reload(HostContext ctx, List<String> changed) {
        StringBuilder cmd = new StringBuilder("systemctl daemon-reload");
        for (String u : units(ctx)) cmd.append(" && { ! systemctl is-active -q ").append(u).append(" || systemctl restart ").append(u).append("; }");
        return Op.Run.of("reload systemd; restart " + String.join(" and ", units(ctx)) + " if running", cmd.toString())
            .onlyIfChanged(changed.toArray(String[]::new));
    }
}
