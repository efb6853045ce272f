package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.kube.Kubeadm;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;

import dev.gpuctl.hostfiles.HostJournal;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.KubeadmConfig;
import dev.gpuctl.kube.Kubeconfig;
import dev.gpuctl.inventory.ControlPlaneEndpoint;
import dev.gpuctl.inventory.Node;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Step 6, the control plane on the master: a kubeadm v1beta4 config rendered from the inventory, {@code kubeadm
 * init --config}, admin.conf for the ssh user and for the admin's machine. A master that is already initialised
 * is left alone.
 */
public final class ControlPlaneStep implements Step {
    static final String CONFIG = Kube.DIR + "/kubeadm-init.yaml";
    /** "new" when this run found no control plane on the master (kubeadm init makes one), else "existing". */
    static final String CONTROL_PLANE_BEFORE = "controlplane.before";

    @Override public String id() { return "init"; }

    @Override public boolean readsCluster() { return true; }
    @Override public String title() { return "control plane (kubeadm init)"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.firstMaster(); }

    /** The laptop's copy of admin.conf: .gpuctl/CLUSTER/admin.conf beside the inventory. */
    public static Path localKubeconfig(HostContext ctx) {
        return ctx.inventory().localKubeconfig();
    }

    static String config(HostContext ctx) {
        Node n = ctx.node();
        return KubeadmConfig.init(new KubeadmConfig.Init(ctx.cluster().name(), Facts.ref("kubeadm.version"),
            n.name(), ctx.nodeIp(), ctx.cluster().podCidr().toString(), ctx.cluster().serviceCidr().toString(),
            ctx.cluster().runtime().criSocket(), endpoint(ctx),
            ctx.inventory().highlyAvailable() ? Facts.ref(CERTIFICATE_KEY) : null));
    }

    /** The certificate key of this run (a secret fact: masked in every log, only ever in 0600 files on the master). */
    public static final String CERTIFICATE_KEY = "controlplane.certificateKey";

    /**
     * A fresh certificate key ({@code kubeadm certs certificate-key}: 32 random bytes, hex), kept as the secret fact
     * {@link #CERTIFICATE_KEY}; a line that is not 64 hex digits fails the capture.
     */
    public static Op.Capture newCertificateKey() {
        return new Op.Capture("a new certificate key (kubeadm certs certificate-key)", "kubeadm certs certificate-key",
            out -> Map.of(CERTIFICATE_KEY, Kubeadm.certificateKey(out)), true);
    }

    /**
     * The cluster's controlPlaneEndpoint as HOST:PORT: the inventory's (a VIP or a site load balancer), else the first
     * master's IP (as preflight found it when the inventory names the master) and 6443.
     */
    static String endpoint(HostContext ctx) {
        ControlPlaneEndpoint e = ctx.inventory().controlPlaneEndpoint();
        if (e.kind() != ControlPlaneEndpoint.Kind.MASTER) return e.hostPort();
        HostContext first = new HostContext(ctx.inventory(), ctx.inventory().master());
        return KubeadmConfig.hostForUrl(first.nodeIp()) + ":" + ControlPlaneEndpoint.API_SERVER_PORT;
    }

    static String userKubeconfig(HostContext ctx) {
        String user = ctx.node().ssh().user();
        return "$(getent passwd " + ShellWords.quote(user) + " | cut -d: -f6)/.kube/config";
    }

    @Override public List<Probe> check(HostContext ctx) {
        List<Probe> probes = new ArrayList<>();
        probes.add(MasterApi.answers(ctx)); // one kubectl with the CNI's and the device plugin's diffs
        probes.addAll(kubeconfigProbes(ctx));
        return List.copyOf(probes);
    }

    /** admin.conf where bootstrap puts it besides the master's own: the ssh user's ~/.kube/config, this machine's copy. */
    static List<Probe> kubeconfigProbes(HostContext ctx) {
        Path local = localKubeconfig(ctx);
        return List.of(
            Probe.succeeds("admin.conf in the ssh user's ~/.kube/config",
                "cmp -s " + Kube.ADMIN_CONF + " \"" + userKubeconfig(ctx) + "\""),
            Probe.of("admin.conf rebuilt into .gpuctl/" + ctx.cluster().name() + "/admin.conf beside the inventory",
                Kubeconfig.CREDENTIALS_PROBE.formatted(Kube.ADMIN_CONF, Kube.ADMIN_CONF),
                r -> r.ok() && Kubeconfig.sameCredentials(read(local), r.stdout()) ? Optional.empty()
                    : Optional.of(local + " is missing or differs from the master's")));
    }

    /** The CA's hash as the identity check keeps it; "none" when the text is no certificate. */
    static String caHash(String pem) {
        try {
            return Kubeadm.caCertHash(pem);
        } catch (HostConfException e) {
            return "none";
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "";
        }
    }

    @Override public List<Op> apply(HostContext ctx) {
        boolean ha = ctx.inventory().highlyAvailable();
        List<Op> ops = new ArrayList<>();
        ops.add(new Op.Capture("kubeadm's version", "kubeadm version -o short",
            out -> Map.of("kubeadm.version", out.strip()), false));
        ops.add(Op.Run.of("gpuctl's directory", "install -d -m 0700 " + Kube.DIR).unless("test -d " + Kube.DIR));
        if (ha) ops.add(newCertificateKey());
        Op.WriteFile write = Op.WriteFile.of("kubeadm configuration" + (ha ? " (holds the certificate key)" : ""), CONFIG, config(ctx), "0600");
        ops.add(ha ? write.asSecret() : write);
        ops.addAll(List.of(
            new Op.Capture("a control plane here before this run", "test -f " + Kube.ADMIN_CONF + " && echo existing || echo new",
                out -> Map.of(CONTROL_PLANE_BEFORE, out.strip()), false),
            Op.Run.of("kubeadm init" + (ha ? " (the shared certificates uploaded, encrypted under the key)" : ""),
                    "kubeadm init --config " + CONFIG + " --skip-token-print" + (ha ? " --upload-certs --skip-certificate-key-print" : ""))
                .unless("test -f " + Kube.ADMIN_CONF),
            new Op.Capture("the cluster CA's hash, recorded on this machine", "cat " + ClusterIdentityStep.CA_CRT,
                out -> Map.of(ClusterIdentityStep.caFact(ctx.node().name()), caHash(out)), false),
            userKubeconfigOp(ctx),
            fetchKubeconfigOp(ctx, CONTROL_PLANE_BEFORE)));
        return List.copyOf(ops);
    }

    /** admin.conf installed as the ssh user's ~/.kube/config (the user's own first kept as config.gpuctl-orig). */
    static Op.Run userKubeconfigOp(HostContext ctx) {
        String user = ShellWords.quote(ctx.node().ssh().user());
        return Op.Run.of("admin.conf for the ssh user",
                    "pw=$(getent passwd " + user + ") || exit 1; h=$(printf '%s\\n' \"$pw\" | cut -d: -f6); "
                        + "[ -n \"$h\" ] || exit 1; d=\"$h/.kube\" && install -d -m 0700 -o " + user + " \"$d\" "
                        + "&& { [ ! -e \"$d/config\" ] || [ -e \"$d/config.gpuctl-orig\" ] || [ -L \"$d/config.gpuctl-orig\" ] "
                        + "|| cp -p -- \"$d/config\" \"$d/config.gpuctl-orig\"; } "
                        + "&& install -m 0600 -o " + user + " " + Kube.ADMIN_CONF + " \"$d/config.gpuctl-tmp\" "
                        + "&& mv -fT -- \"$d/config.gpuctl-tmp\" \"$d/config\"")
                .unless("cmp -s " + Kube.ADMIN_CONF + " \"" + userKubeconfig(ctx) + "\"")
                .journalling(new Op.Journal("the ssh user's ~/.kube/config (backed up once when it exists)",
                    HostJournal.SHELL_FUNCTIONS + "pw=$(getent passwd " + user + ") || exit 1; "
                        + "h=$(printf '%s\\n' \"$pw\" | cut -d: -f6); gw \"$h/.kube/config\" || exit 1"));
    }

    /**
     * admin.conf rebuilt into this machine's .gpuctl/CLUSTER/admin.conf (and a kubeconfig merged before refreshed).
     * With {@code newClusterFact} ("new" when this run ran kubeadm init), a new CA archives the old copy; without, it is refused.
     */
    static Op fetchKubeconfigOp(HostContext ctx, String newClusterFact) {
        return new Op.FetchKubeconfig("admin.conf rebuilt on this machine", Kube.ADMIN_CONF, localKubeconfig(ctx), ctx.cluster().name(),
            "https://" + endpoint(ctx), newClusterFact);
    }

    /** admin.conf rebuilt on this machine after kubeadm renewed it: another CA is refused. */
    static Op fetchKubeconfigOp(HostContext ctx) { return fetchKubeconfigOp(ctx, null); }
}
