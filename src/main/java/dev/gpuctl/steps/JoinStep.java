package dev.gpuctl.steps;

import dev.gpuctl.hostconf.Kubeadm;
import dev.gpuctl.hostconf.KubeadmConfig;
import java.util.List;
import java.util.Map;

/**
 * Step 8, workers join. One short-lived token per run is created on the master (kubeadm prints it; it never
 * appears in an argv); each worker gets it in a 0600 JoinConfiguration file that is removed after the join.
 * Workers that already joined are skipped, so a worker added later joins alone.
 */
public final class JoinStep implements Step {
    static final String CONFIG = Kube.DIR + "/kubeadm-join.yaml";
    static final String TOKEN_TTL = "1h";

    @Override public String id() { return "join"; }
    @Override public String title() { return "join the cluster (kubeadm join)"; }
    @Override public boolean runsOn(HostContext ctx) { return !ctx.node().isMaster(); }

    @Override public List<Op> prepareOnMaster(HostContext master) {
        return List.of(new Op.Capture("a join token valid for " + TOKEN_TTL,
            "kubeadm token create --ttl " + TOKEN_TTL + " --description 'gpuctl bootstrap' --print-join-command",
            out -> {
                var j = Kubeadm.parseJoinCommand(out);
                return Map.of("join.endpoint", j.apiServerEndpoint(), "join.token", j.token(), "join.caCertHash", j.caCertHash());
            }, true));
    }

    static String config(HostContext ctx) {
        return KubeadmConfig.join(new KubeadmConfig.Join(Facts.ref("join.endpoint"), Facts.ref("join.token"),
            Facts.ref("join.caCertHash"), ctx.node().name(), ctx.nodeIp(), ctx.cluster().runtime().criSocket()));
    }

    static final String JOINED = "test -s /etc/kubernetes/kubelet.conf";

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.succeeds("joined (/etc/kubernetes/kubelet.conf present)", JOINED),
            Sh.unitsRunning(List.of("kubelet")));
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(
            Op.Run.of("gpuctl's directory", "install -d -m 0700 " + Kube.DIR).unless("test -d " + Kube.DIR),
            Op.WriteFile.of("join configuration (holds the token)", CONFIG, config(ctx), "0600").asSecret().unless(JOINED),
            Op.Run.of("kubeadm join (the configuration file is removed afterwards)",
                "kubeadm join --config " + CONFIG + "; rc=$?; rm -f " + CONFIG + "; exit $rc").unless(JOINED),
            Sh.enableNow(List.of("kubelet")));
    }
}
