package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.kube.LoadBalancer;
import dev.gpuctl.inventory.ControlPlaneEndpoint;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The control-plane endpoint's virtual IP, on every master when the inventory gives {@code controlPlaneEndpoint: { vip }}:
 * Debian's keepalived and haproxy packages as host services ({@link LoadBalancer} says what each does), set up before
 * kubeadm init, which needs the endpoint to answer. Host services rather than kube-vip's static pod: they are up before
 * the cluster exists and while a master's kubelet is down, and kubeadm's join preflight needs an empty manifests folder
 * (docs/design.md). The interface keepalived uses is the one whose subnet holds the VIP, found on each master.
 */
public final class LoadBalancerStep implements Step {
    static final List<String> PACKAGES = List.of("keepalived", "haproxy", "curl");
    static final List<String> UNITS = List.of("keepalived", "haproxy");
    /** VRRP elects a holder within a few advert intervals (1 s) of keepalived's start. */
    static final Duration ANSWER_WAIT = Duration.ofSeconds(60);
    static final String SEPARATOR = "--gpuctl-file--";

    @Override public String id() { return "vip"; }
    @Override public String title() { return "API endpoint's virtual IP (keepalived + haproxy)"; }
    @Override public boolean runsOn(HostContext ctx) {
        return ctx.node().isMaster() && ctx.inventory().controlPlaneEndpoint().isVip();
    }

    static String ifaceFact(Node n) { return "vip." + n.name() + ".interface"; }
    static String prefixFact(Node n) { return "vip." + n.name() + ".prefix"; }

    static ControlPlaneEndpoint endpoint(HostContext ctx) { return ctx.inventory().controlPlaneEndpoint(); }

    static LoadBalancer.Vrrp vrrp(HostContext ctx, String iface, String prefix) {
        return new LoadBalancer.Vrrp(ctx.cluster().name(), endpoint(ctx).host(), iface, prefix, ctx.firstMaster(), ctx.nodeIp());
    }

    /** Every master's API server, by its cluster IP (a {{fact}} where preflight found it). */
    static String haproxyCfg(HostContext ctx) {
        List<LoadBalancer.Backend> backends = ctx.inventory().masters().stream()
            .map(m -> new LoadBalancer.Backend(m.name(), new HostContext(ctx.inventory(), m).nodeIp())).toList();
        return LoadBalancer.haproxyCfg(endpoint(ctx).port(), backends);
    }

    /** What the three files must hold on this master, given its {@code ip -j addr}; facts fill in the other masters' IPs. */
    static List<String> expected(HostContext ctx, String ipJsonAddr, Facts facts) {
        LoadBalancer.Subnet s = LoadBalancer.subnetFor(endpoint(ctx).host(), ipJsonAddr);
        return List.of(facts.substitute(LoadBalancer.keepalivedConf(vrrp(ctx, s.iface(), Integer.toString(s.prefix())))),
            facts.substitute(LoadBalancer.checkScript(ctx.nodeIp())), facts.substitute(haproxyCfg(ctx)));
    }

    static final String READ_FILES = "ip -j addr show; for f in " + LoadBalancer.KEEPALIVED_CONF + " " + LoadBalancer.CHECK_SCRIPT + " "
        + LoadBalancer.HAPROXY_CFG + "; do echo " + SEPARATOR + "; cat \"$f\" 2>/dev/null; done";

    /** The answer of {@link #READ_FILES} against {@link #expected}: the files that differ, or why none can be written. */
    static Optional<String> filesProblem(HostContext ctx, String answer, Facts facts) {
        String[] parts = answer.split(SEPARATOR + "\n", -1);
        if (parts.length != 4) return Optional.of("unexpected answer");
        List<String> want;
        try {
            want = expected(ctx, parts[0], facts);
        } catch (RuntimeException e) {
            return Optional.of(e.getMessage());
        }
        List<String> paths = List.of(LoadBalancer.KEEPALIVED_CONF, LoadBalancer.CHECK_SCRIPT, LoadBalancer.HAPROXY_CFG);
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < 3; i++) if (!parts[i + 1].equals(want.get(i))) wrong.add(paths.get(i));
        return wrong.isEmpty() ? Optional.empty() : Optional.of("not as gpuctl writes them: " + String.join(", ", wrong));
    }

    /** The endpoint answers: some master holds the VIP and its haproxy accepts connections on the endpoint's port. */
    static Probe answers(HostContext ctx) {
        ControlPlaneEndpoint e = endpoint(ctx);
        return Probe.succeeds("the endpoint " + e.hostPort() + " accepts connections (a master holds the VIP, haproxy listens)",
            "timeout 3 bash -c " + ShellWords.quote(": </dev/tcp/" + e.host() + "/" + e.port()));
    }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Sh.packagesInstalled(PACKAGES),
            Probe.of("keepalived.conf, check_apiserver.sh and haproxy.cfg as gpuctl writes them", READ_FILES, r -> Optional.empty())
                .judgedWithFacts((r, facts) -> filesProblem(ctx, r.stdout(), facts)),
            Sh.unitsRunning(UNITS),
            answers(ctx));
    }

    @Override public List<Op> apply(HostContext ctx) {
        Node n = ctx.node();
        String vip = endpoint(ctx).host();
        return List.of(
            Sh.aptInstall("install keepalived, haproxy and curl", PACKAGES),
            new Op.Capture("the interface whose subnet holds the VIP " + vip, "ip -j addr show", out -> {
                LoadBalancer.Subnet s = LoadBalancer.subnetFor(vip, out);
                return Map.of(ifaceFact(n), s.iface(), prefixFact(n), Integer.toString(s.prefix()));
            }, false),
            Op.WriteFile.of("keepalived's VRRP instance for the VIP", LoadBalancer.KEEPALIVED_CONF,
                LoadBalancer.keepalivedConf(vrrp(ctx, Facts.ref(ifaceFact(n)), Facts.ref(prefixFact(n)))), "0600"),
            Op.WriteFile.of("keepalived's check of this master's API server", LoadBalancer.CHECK_SCRIPT,
                LoadBalancer.checkScript(ctx.nodeIp()), "0755"),
            Op.WriteFile.of("haproxy in front of every master's API server", LoadBalancer.HAPROXY_CFG, haproxyCfg(ctx), "0644"),
            Op.Run.of("haproxy checks its configuration", "haproxy -c -q -f " + LoadBalancer.HAPROXY_CFG)
                .onlyIfChanged(LoadBalancer.HAPROXY_CFG),
            Op.Run.of("restart keepalived with its configuration", "systemctl restart keepalived")
                .onlyIfChanged(LoadBalancer.KEEPALIVED_CONF, LoadBalancer.CHECK_SCRIPT),
            Op.Run.of("reload haproxy with its configuration", "systemctl reload-or-restart haproxy")
                .onlyIfChanged(LoadBalancer.HAPROXY_CFG),
            Sh.enableNow(UNITS));
    }

    @Override public List<Probe> verify(HostContext ctx) {
        List<Probe> probes = new ArrayList<>(check(ctx));
        probes.set(probes.size() - 1, answers(ctx).waitingUpTo(ANSWER_WAIT));
        return probes;
    }
}
