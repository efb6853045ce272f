package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.kube.Certificates.Cert;
import dev.gpuctl.kube.Certificates.Kind;
import dev.gpuctl.kube.Certificates.Standing;
import dev.gpuctl.kube.Certificates;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code gpuctl certs renew} on the master: {@code kubeadm certs renew all}; then the control-plane static pods
 * restarted one at a time the way kubeadm documents it (the manifest moved out of /etc/kubernetes/manifests, the
 * kubelet stops the pod, the manifest moved back, the kubelet starts it again), each waited for; then the new
 * admin.conf to the ssh user's ~/.kube/config, rebuilt into this machine's .gpuctl/ and into a kubeconfig merged before
 * ({@link KubeconfigsStep}). With several masters there is one step per master ({@link #on}), run one master at a time:
 * each master renews its own certificates and restarts its own static pods, its own API server waited for (not the
 * endpoint's, which another master answers); the copies of admin.conf are the first master's. Asked for, so it always renews:
 * renewing again is safe (kubeadm keeps each key, subject and SANs and signs for one more year).
 */
public final class CertsRenewStep implements Step {
    /** The static pods, restarted in this order: etcd first (the API server needs it), the API server next. */
    public static final List<String> STATIC_PODS = List.of("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler");
    static final String MANIFESTS = "/etc/kubernetes/manifests";
    /** Where a manifest waits while its pod stops: beside the manifest directory, never read by the kubelet. */
    static final String ASIDE = "/etc/kubernetes/gpuctl-restart";
    /** How long the kubelet may take to stop or start a static pod (it looks at the directory every 20 s). */
    static final Duration POD_WAIT = Duration.ofSeconds(120);

    private final Clock clock;
    /** The master this step renews on; empty: the first master. */
    private final Optional<String> master;

    public CertsRenewStep() { this(Clock.systemUTC()); }

    public CertsRenewStep(Clock clock) { this(clock, Optional.empty()); }

    private CertsRenewStep(Clock clock, Optional<String> master) { this.clock = clock; this.master = master; }

    /** The renewal on this master only (a control plane of several masters: one phase per master, in order). */
    public static CertsRenewStep on(String master) { return new CertsRenewStep(Clock.systemUTC(), Optional.of(master)); }

    @Override public String id() { return "certs-renew"; }
    @Override public String title() {
        return "control-plane certificates renewed, static pods restarted" + (master.isPresent() ? " on " + master.get() : ", kubeconfigs refreshed");
    }
    @Override public boolean runsOn(HostContext ctx) {
        return master.map(m -> ctx.node().name().equals(m)).orElseGet(ctx::firstMaster);
    }
    @Override public boolean readsCluster() { return true; }

    /** Renewal is what the command is for: the check says so, so that apply runs (and a dry run shows it). */
    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.of("renewal asked for (gpuctl certs renew always renews)",
            "test -f " + Kube.ADMIN_CONF + " && echo initialised || echo none",
            r -> r.stdout().contains("initialised") ? Optional.of("renewing as asked")
                : Optional.of("no control plane here yet (" + Kube.ADMIN_CONF + " is missing): run gpuctl bootstrap first")));
    }

    @Override public List<Op> apply(HostContext ctx) {
        List<Op> ops = new ArrayList<>();
        ops.add(Op.Run.of("kubeadm certs renew all", "test -f " + Kube.ADMIN_CONF + " && kubeadm certs renew all"));
        String endpoint = ctx.cluster().runtime().criSocket();
        for (String pod : STATIC_PODS) ops.addAll(restart(pod, endpoint, UpgradeSteps.apiServerUrl(ctx.node())));
        if (ctx.firstMaster()) ops.addAll(new KubeconfigsStep().apply(ctx));
        return ops;
    }

    /**
     * One static pod restarted: its manifest moved aside, the pod waited out, the manifest moved back, the pod waited
     * for (the API server until it answers /readyz); the waits are the engine's ({@link Op.Await}), not shell loops. A
     * pod that does not stop in time gets its manifest back. A run cut off in between (Ctrl-C during a wait) finds the
     * manifest aside and puts it back first. A pod with no manifest (no local etcd: an external one) is skipped.
     */
    static List<Op> restart(String pod, String endpoint, String apiServer) {
        String m = MANIFESTS + "/" + pod + ".yaml";
        String aside = ASIDE + "/" + pod + ".yaml";
        String running = "crictl --runtime-endpoint " + endpoint + " ps --name '^" + pod + "$' --state running -q 2>/dev/null | grep -q .";
        String back = "if [ -f " + aside + " ]; then mv -f " + aside + " " + m + "; fi";
        return List.of(
            Op.Run.of("move the " + pod + " manifest out of " + MANIFESTS, "install -d -m 0700 " + ASIDE + "; "
                + "if [ ! -f " + m + " ] && [ -f " + aside + " ]; then mv -f " + aside + " " + m + "; fi; "
                + "if [ ! -f " + m + " ]; then echo '" + pod + ": no manifest in " + MANIFESTS + ": not restarted'; exit 0; fi; "
                + "mv -f " + m + " " + aside),
            Op.Await.of("wait until the kubelet has stopped " + pod, stopped(pod, aside, running)).orElse(back),
            Op.Run.of("move the " + pod + " manifest back into " + MANIFESTS, back),
            Op.Await.of("wait until " + pod + " runs again" + (pod.equals("kube-apiserver") ? " and answers /readyz" : ""),
                started(pod, m, running, apiServer)));
    }

    /** Right once the pod whose manifest is aside no longer runs (or when it has no manifest: nothing to restart). */
    static Probe stopped(String pod, String aside, String running) {
        return Probe.of(pod + " stopped by the kubelet", "if [ ! -f " + aside + " ]; then echo 'no manifest'; elif " + running
                + "; then echo running; else echo stopped; fi",
            r -> r.stdout().strip().equals("running")
                ? Optional.of(pod + " still running after its manifest left " + MANIFESTS + " (is the kubelet running?)") : Optional.empty())
            .waitingUpTo(POD_WAIT);
    }

    /**
     * Right once the pod runs again from its manifest (the API server: and this master's own, {@code apiServer},
     * answers /readyz); no manifest: nothing to wait for.
     */
    static Probe started(String pod, String manifest, String running, String apiServer) {
        String ready = pod.equals("kube-apiserver")
            ? "elif [ \"$(" + Kube.kubectl("--server=" + ShellWords.quote(apiServer) + " get --raw=/readyz 2>/dev/null") + ")\" != ok ]; then echo 'not ready (/readyz)'; " : "";
        return Probe.of(pod + " running again", "if [ ! -f " + manifest + " ]; then echo 'no manifest'; elif ! " + running
                + "; then echo 'not running'; " + ready + "else echo restarted; fi",
            r -> {
                String s = r.stdout().strip();
                return s.equals("restarted") || s.equals("no manifest") ? Optional.empty()
                    : Optional.of(pod + " " + (s.isEmpty() ? "not answering" : s) + " since its manifest returned (crictl ps -a --name "
                        + pod + "; journalctl -u kubelet)");
            })
            .waitingUpTo(POD_WAIT);
    }

    /** A restart's wait, on the progress stream: the pod and how long, without the failure's hint. */
    @Override public String whileWaiting(String problem, Duration upTo) {
        return "waiting up to " + upTo.toSeconds() + "s: " + problem.replaceFirst(" \\(.*\\)$", "");
    }

    /** After the renewal: the API server answers, no control-plane certificate is within 30 days, the copies are fresh. */
    @Override public List<Probe> verify(HostContext ctx) {
        List<Probe> probes = new ArrayList<>();
        String own = UpgradeSteps.apiServerUrl(ctx.node());
        probes.add(Probe.equals("API server on " + ctx.node().name() + " answers (kubectl get --raw /readyz)",
            Kube.kubectl("--server=" + ShellWords.quote(own) + " get --raw=/readyz 2>&1"), "ok"));
        probes.add(Probe.of("every control-plane certificate has more than 30 days left (kubeadm certs check-expiration)",
            "kubeadm certs check-expiration 2>&1", r -> r.ok() ? notRenewed(r.stdout(), clock.instant())
                : Optional.of("kubeadm certs check-expiration: exit " + r.exit() + ": " + Probe.oneLine(r.stdout()))));
        if (ctx.firstMaster()) probes.addAll(new KubeconfigsStep().check(ctx));
        return probes;
    }

    /** Control-plane certificates (not CAs: renew leaves them) still expired, missing or within 30 days. */
    static Optional<String> notRenewed(String out, Instant now) {
        List<Cert> certs;
        try {
            certs = Certificates.parseCheckExpiration(out);
        } catch (HostConfException e) {
            return Optional.of(e.getMessage());
        }
        List<String> bad = certs.stream().filter(c -> c.kind() == Kind.CONTROL_PLANE && !c.externallyManaged())
            .filter(c -> c.standing(now) != Standing.OK).map(c -> c.describe(now)).toList();
        return bad.isEmpty() ? Optional.empty() : Optional.of(String.join("\n", bad));
    }
}
