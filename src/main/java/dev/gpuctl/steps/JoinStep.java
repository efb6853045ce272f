package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.Kubeadm;
import dev.gpuctl.kube.KubeadmConfig;
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
 * Step 8, workers join. One short-lived token per run is created on the master (kubeadm prints it; it never
 * appears in an argv); each worker gets it in a 0600 JoinConfiguration file, uploaded into gpuctl's root-only
 * directory and moved, by the one command that uses it, into a fresh {@code mktemp -d} directory that the same
 * command removes on every way out (a shell trap on EXIT, and HUP/INT/TERM turned into exits). A run killed
 * outright leaves the file behind: the step's check finds it and the next run's first op removes it.
 * Workers that already joined are skipped, so a worker added later joins alone. After a join the step waits,
 * bounded, until the kubelet has registered its Node object: the GPU step labels it next, and under load the
 * kubelet registers it a moment after {@code kubeadm join} returns.
 */
public final class JoinStep implements Step {
    static final String CONFIG = Kube.DIR + "/kubeadm-join.yaml";
    /** Where the join command moves the configuration: {@code mktemp -d} makes join.XXXXXXXX (0700) beside it. */
    static final String WORK_DIRS = Kube.DIR + "/join.";
    static final String TOKEN_TTL = "1h";
    static final Duration REGISTER_WAIT = Duration.ofMinutes(3);

    @Override public String id() { return "join"; }
    @Override public String title() { return "join the cluster (kubeadm join)"; }
    @Override public boolean runsOn(HostContext ctx) { return !ctx.node().isMaster(); }

    @Override public List<Op> prepareOnMaster(HostContext master) {
        return List.of(createToken(TOKEN_TTL, "gpuctl bootstrap"));
    }

    /** The facts a token creation teaches: the join command's parts (the token a secret, masked in every log). */
    public static final String ENDPOINT = "join.endpoint";
    public static final String TOKEN = "join.token";
    public static final String CA_CERT_HASH = "join.caCertHash";

    /**
     * Creates a bootstrap token on the master ({@code kubeadm token create --print-join-command}; the token is only
     * in its output, never in an argv) and learns the join command's parts as {@link #ENDPOINT}, {@link #TOKEN} and
     * {@link #CA_CERT_HASH}. Used once per bootstrap run, and by {@code gpuctl join-token --refresh}.
     *
     * @param ttl kubeadm's duration, e.g. "1h" or "7200s"
     */
    public static Op.Capture createToken(String ttl, String description) {
        return new Op.Capture("a join token valid for " + ttl,
            "kubeadm token create --ttl " + ttl + " --description '" + description + "' --print-join-command",
            out -> {
                var j = Kubeadm.parseJoinCommand(out);
                return Map.of(ENDPOINT, j.apiServerEndpoint(), TOKEN, j.token(), CA_CERT_HASH, j.caCertHash());
            }, true);
    }

    static String config(HostContext ctx) {
        return KubeadmConfig.join(new KubeadmConfig.Join(Facts.ref(ENDPOINT), Facts.ref(TOKEN),
            Facts.ref(CA_CERT_HASH), ctx.node().name(), ctx.nodeIp(), ctx.cluster().runtime().criSocket()));
    }

    static final String JOINED = "test -s /etc/kubernetes/kubelet.conf";

    /** Prints the first join configuration an interrupted run left behind and exits 1; exits 0 when there is none. */
    static final String LEFT_BEHIND = leftBehind(Kube.DIR);

    static String leftBehind(String dir) {
        return "for f in " + dir + "/kubeadm-join.yaml " + dir + "/join.*; do if [ -e \"$f\" ] || [ -L \"$f\" ]; then echo \"$f\"; exit 1; fi; done; exit 0";
    }

    static Probe noneLeftBehind() {
        return Probe.of("no join configuration left behind (it holds a join token)", LEFT_BEHIND,
            r -> r.ok() ? Optional.empty() : Optional.of(r.stdout().strip() + " is left from an interrupted join"));
    }

    /**
     * The one command that uses the configuration: moves it into a fresh private directory, runs kubeadm join, and
     * removes both the directory and the upload on every way out.
     */
    static String joinCommand() { return joinCommand(Kube.DIR); }

    /** {@link #joinCommand()} with the upload and the private directories in {@code dir} (tests use a temp dir). */
    static String joinCommand(String dir) {
        String config = dir + "/kubeadm-join.yaml";
        return "d=$(mktemp -d " + dir + "/join.XXXXXXXX) || exit 1; "
            + "trap 'rm -rf \"$d\" " + config + "' EXIT; trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 143' TERM; "
            + "mv " + config + " \"$d/kubeadm-join.yaml\" && kubeadm join --config \"$d/kubeadm-join.yaml\"";
    }

    /** The node's own Node object, asked with the kubelet's credentials (the Node authorizer lets a node read itself). */
    static Probe registered(HostContext ctx) {
        String name = ctx.node().name();
        return Probe.of("node " + name + " registered by its kubelet",
            "kubectl --kubeconfig=/etc/kubernetes/kubelet.conf get node " + ShellWords.quote(name) + " -o name",
            r -> r.ok() ? Optional.empty() : Optional.of("the kubelet has not registered node " + name + " yet"
                + Probe.stderrHint(r) + "; check the kubelet on " + name + ": journalctl -u kubelet"));
    }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.succeeds("joined (/etc/kubernetes/kubelet.conf present)", JOINED),
            Sh.unitsRunning(List.of("kubelet")), noneLeftBehind());
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(
            Op.Run.of("remove the join configuration an interrupted run left behind (it holds a join token)",
                "rm -rf " + CONFIG + " " + WORK_DIRS + "*").unless(LEFT_BEHIND),
            Op.Run.of("gpuctl's directory", "install -d -m 0700 " + Kube.DIR).unless("test -d " + Kube.DIR),
            Op.WriteFile.of("join configuration (holds the token)", CONFIG, config(ctx), "0600").asSecret().unless(JOINED),
            Op.Run.of("kubeadm join (in a fresh private directory, removed on every way out)", joinCommand()).unless(JOINED),
            Sh.enableNow(List.of("kubelet")));
    }

    @Override public List<Probe> verify(HostContext ctx) {
        List<Probe> probes = new ArrayList<>(check(ctx));
        probes.add(registered(ctx).waitingUpTo(REGISTER_WAIT));
        return probes;
    }
}
