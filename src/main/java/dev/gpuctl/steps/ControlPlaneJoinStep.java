package dev.gpuctl.steps;

import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.KubeadmConfig;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The other masters join the control plane ({@code kubeadm join --control-plane}), after the first master's init. Once
 * per run, on the first master: a fresh certificate key ({@code kubeadm certs certificate-key}, a secret fact) under which
 * {@code kubeadm init phase upload-certs --upload-certs} re-encrypts the shared certificates (the key only in a 0600
 * InitConfiguration, removed by the command that reads it: the Secret it makes lives two hours, so a master added later
 * gets a fresh one), and a join token. Each master gets both in a 0600 JoinConfiguration, used and removed exactly as a
 * worker's ({@link JoinStep#joinCommand()}); kubeadm downloads the certificates, adds this master's etcd member and
 * starts its control-plane static pods. A master that already runs its API server is left alone.
 */
public final class ControlPlaneJoinStep implements Step {
    /** Where the upload's configuration is put for the one command that reads and removes it. */
    static final String UPLOAD_CONFIG = Kube.DIR + "/kubeadm-upload-certs.yaml";
    static final String JOINED = "test -s /etc/kubernetes/kubelet.conf && test -f /etc/kubernetes/manifests/kube-apiserver.yaml";

    @Override public String id() { return "join-masters"; }
    @Override public String title() { return "the other masters join the control plane (kubeadm join --control-plane)"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster() && !ctx.firstMaster(); }

    @Override public List<Op> prepareOnMaster(HostContext master) {
        return List.of(
            Op.Run.of("gpuctl's directory", "install -d -m 0700 " + Kube.DIR).unless("test -d " + Kube.DIR),
            ControlPlaneStep.newCertificateKey(),
            Op.WriteFile.of("upload-certs configuration (holds the certificate key)", UPLOAD_CONFIG,
                KubeadmConfig.uploadCerts(Facts.ref(ControlPlaneStep.CERTIFICATE_KEY)), "0600").asSecret(),
            Op.Run.of("the shared certificates uploaded, encrypted under the key (kubeadm init phase upload-certs)",
                "trap 'rm -f " + UPLOAD_CONFIG + "' EXIT; kubeadm init phase upload-certs --upload-certs --skip-certificate-key-print"
                    + " --config " + UPLOAD_CONFIG),
            JoinStep.createToken(JoinStep.TOKEN_TTL, "gpuctl bootstrap: masters"));
    }

    static String config(HostContext ctx) {
        return KubeadmConfig.joinControlPlane(new KubeadmConfig.Join(Facts.ref(JoinStep.ENDPOINT), Facts.ref(JoinStep.TOKEN),
            Facts.ref(JoinStep.CA_CERT_HASH), ctx.node().name(), ctx.nodeIp(), ctx.cluster().runtime().criSocket()),
            Facts.ref(ControlPlaneStep.CERTIFICATE_KEY));
    }

    /** This master's own API server answers (its kubeconfig names the endpoint, so the local one is asked by address). */
    static Probe apiServerAnswers(HostContext ctx) {
        return Probe.equals("this master's API server answers (kubectl get --raw /readyz on " + ctx.nodeIp() + ")",
                "test -f " + Kube.ADMIN_CONF + " && " + Kube.kubectl("--server=https://" + KubeadmConfig.hostForUrl(ctx.nodeIp())
                    + ":6443 get --raw=/readyz 2>&1"), "ok")
            .waitingWhileStarting(Sh.UNIT_START_WAIT, r -> !r.stdout().isBlank());
    }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.succeeds("joined as a control plane (kubelet.conf and the API server's manifest present)", JOINED),
            Sh.unitsRunning(List.of("kubelet")), JoinStep.noneLeftBehind(),
            Probe.of("no upload-certs configuration left behind (it holds a certificate key)", "test ! -e " + UPLOAD_CONFIG,
                r -> r.ok() ? Optional.empty() : Optional.of(UPLOAD_CONFIG + " is left from an interrupted run")));
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(
            Op.Run.of("remove the join configuration an interrupted run left behind (it holds a join token)",
                "rm -rf " + JoinStep.CONFIG + " " + JoinStep.WORK_DIRS + "* " + UPLOAD_CONFIG).unless("(" + JoinStep.LEFT_BEHIND + ") && test ! -e " + UPLOAD_CONFIG),
            Op.Run.of("gpuctl's directory", "install -d -m 0700 " + Kube.DIR).unless("test -d " + Kube.DIR),
            Op.WriteFile.of("control-plane join configuration (holds the token and the certificate key)", JoinStep.CONFIG, config(ctx), "0600")
                .asSecret().unless(JOINED),
            Op.Run.of("kubeadm join --control-plane (in a fresh private directory, removed on every way out)", JoinStep.joinCommand())
                .unless(JOINED),
            Sh.enableNow(List.of("kubelet")),
            ControlPlaneStep.userKubeconfigOp(ctx));
    }

    @Override public List<Probe> verify(HostContext ctx) {
        List<Probe> probes = new ArrayList<>(check(ctx));
        probes.add(JoinStep.registered(ctx).waitingUpTo(JoinStep.REGISTER_WAIT));
        probes.add(apiServerAnswers(ctx));
        return probes;
    }
}
