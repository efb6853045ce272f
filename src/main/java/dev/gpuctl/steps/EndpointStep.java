package dev.gpuctl.steps;

import dev.gpuctl.kube.EndpointMigration;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.KubeadmConfig;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The cluster moved to the inventory's controlPlaneEndpoint, on the first master of a running cluster whose endpoint
 * differs (a single master growing behind a VIP or a site load balancer; a cluster made by an older gpuctl without
 * one), the way kubeadm's "Reconfiguring a kubeadm cluster" documents it, each op guarded by asking the host: the API
 * server's certificate re-issued with the new endpoint's host ({@code kubeadm init phase certs apiserver --config}, the
 * old pair kept in {@link #BACKUP}) and the API server restarted and waited for; admin.conf (and super-admin.conf),
 * kube-public/cluster-info and kube-proxy's kubeconfig pointed at it (kube-proxy's pods then deleted, when this run
 * changed its ConfigMap, and waited for until its DaemonSet has them all Running again); last kubeadm-config's ClusterConfiguration
 * uploaded with the new endpoint ({@code kubeadm init phase upload-config kubeadm --config}: its endpoint right is this
 * step's proof that the ops before it are done); the copies of admin.conf refreshed. The nodes' kubelet.conf follow, one node at a time ({@link KubeletEndpointStep}), and then the new masters
 * join. A new cluster (kubeadm init wrote the endpoint everywhere) has nothing to do here. {@link ControlPlaneChangeStep}
 * has already refused the changes that are not safe.
 */
public final class EndpointStep implements Step {
    /** Where the API server's certificate and key are kept when it is re-issued. */
    static final String BACKUP = "/etc/kubernetes/gpuctl-endpoint-backup";
    static final String PKI = "/etc/kubernetes/pki";
    static final String CC_FACT = "endpoint.clusterConfiguration";
    static final String CLUSTER_INFO_FACT = "endpoint.clusterInfo";
    static final String KUBE_PROXY_FACT = "endpoint.kubeProxy";
    static final String EOF = "GPUCTL_EOF";
    /** What the kube-proxy ConfigMap's replace records as changed, so that the pods are restarted only after it. */
    static final String KUBE_PROXY_CHANGED = "configmap kube-system/kube-proxy";
    /** kubeadm's "Reconfiguring a kubeadm cluster": the kube-proxy pods load a changed ConfigMap only when made again. */
    static final String KUBE_PROXY_RESTART = Kube.kubectl("delete pod -n kube-system -l k8s-app=kube-proxy");
    /** The DaemonSet makes a pod per node again; each needs its node's kubelet to start it and report it ready. */
    static final java.time.Duration KUBE_PROXY_WAIT = java.time.Duration.ofSeconds(180);
    /** haproxy's health check marks a restarted API server up again within a few of its intervals. */
    static final java.time.Duration ENDPOINT_WAIT = java.time.Duration.ofSeconds(90);

    @Override public String id() { return "endpoint"; }
    @Override public String title() { return "the running cluster moved to the inventory's controlPlaneEndpoint"; }
    @Override public boolean readsCluster() { return true; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.firstMaster(); }

    static String wanted(HostContext ctx) { return ControlPlaneStep.endpoint(ctx); }

    /** A command that prints nothing on a master without a cluster (then there is nothing to move). */
    static String ifCluster(String command) {
        return "if [ -f " + Kube.ADMIN_CONF + " ]; then " + command + "; fi";
    }

    /**
     * A probe of this step: right on a master without a cluster; a command that fails is a problem (an op it guards
     * runs, and says why it cannot); else {@code problem} judges the answer with the wanted endpoint. The step's check
     * asks no API (its kubeadm-config is what preflight learned), so a stopped API server is init's check alone.
     */
    static Probe probe(HostContext ctx, String what, String command, java.util.function.BiFunction<String, String, Optional<String>> problem) {
        return Probe.of(what, ifCluster(command), r -> Optional.empty())
            .judgedWithFacts((r, facts) -> {
                if (!r.ok()) return Optional.of("could not ask: exit " + r.exit() + Probe.stderrHint(r));
                if (r.stdout().isBlank()) return Optional.empty();
                String want;
                try {
                    want = facts.substitute(wanted(ctx));
                } catch (IllegalStateException notLearned) { // the master named by host name and not asked in this run
                    return Optional.empty();
                }
                return problem.apply(r.stdout(), want);
            });
    }

    /**
     * kubeadm-config's endpoint as preflight learned it ({@link ControlPlaneChangeStep#VIEW}, refreshed by this step's last
     * op): no API call of its own. Not learned (no cluster; a single master whose admin.conf already names its own
     * address): right.
     */
    static Probe kubeadmConfigLearned(HostContext ctx) {
        return Probe.of("kubeadm-config's controlPlaneEndpoint is the inventory's (as preflight read it)", "true", r -> Optional.empty())
            .judgedWithFacts((r, facts) -> {
                Optional<EndpointMigration.View> view = facts.get(ControlPlaneChangeStep.VIEW);
                if (view.isEmpty()) return Optional.empty();
                String want;
                try {
                    want = facts.substitute(wanted(ctx));
                } catch (IllegalStateException notLearned) {
                    return Optional.empty();
                }
                String got = view.get().endpoint();
                return got.equals(want) ? Optional.empty()
                    : Optional.of("kubeadm-config says controlPlaneEndpoint " + (got.isEmpty() ? "(none)" : got) + ", the inventory " + want);
            });
    }

    static Probe kubeadmConfig(HostContext ctx) {
        return probe(ctx, "kubeadm-config's controlPlaneEndpoint is the inventory's", Kube.kubectl("-n kube-system get cm kubeadm-config -o json"),
            (out, want) -> {
                String got = EndpointMigration.endpointOf(EndpointMigration.clusterConfiguration(out));
                return got.equals(want) ? Optional.empty()
                    : Optional.of("kubeadm-config says controlPlaneEndpoint " + (got.isEmpty() ? "(none)" : got) + ", the inventory " + want);
            });
    }

    static Optional<String> sanProblem(String openssl, String want, String whose) {
        String host = EndpointMigration.host(want);
        return EndpointMigration.subjectAltNames(openssl).contains(host) ? Optional.empty()
            : Optional.of(whose + " has no SAN for " + host + " (" + openssl.strip().replaceAll("\\s+", " ") + ")");
    }

    /** The certificate on disk names the endpoint's host. */
    static Probe certificateOnDisk(HostContext ctx) {
        return probe(ctx, "the API server's certificate on disk names the endpoint's host",
            "openssl x509 -noout -ext subjectAltName -in " + PKI + "/apiserver.crt 2>&1 || true",
            (out, want) -> sanProblem(out, want, PKI + "/apiserver.crt"));
    }

    /** The certificate the running API server presents names the endpoint's host (it was restarted after the re-issue). */
    static Probe certificateServed(HostContext ctx) {
        String local = KubeadmConfig.hostForUrl(ctx.nodeIp()) + ":6443";
        return probe(ctx, "the API server on " + local + " presents a certificate naming the endpoint's host",
            "echo | timeout 10 openssl s_client -connect " + local + " 2>/dev/null | openssl x509 -noout -ext subjectAltName 2>/dev/null || true",
            (out, want) -> sanProblem(out, want, "the certificate served on " + local));
    }

    static final String SERVERS = "for f in " + Kube.ADMIN_CONF + " /etc/kubernetes/super-admin.conf; do "
        + "if [ -f $f ]; then printf '%s ' $f; sed -n 's/^[[:space:]]*server:[[:space:]]*//p' $f | tr '\\n' ' '; echo; fi; done";

    /** admin.conf and super-admin.conf name the endpoint. */
    static Probe adminConf(HostContext ctx) {
        return probe(ctx, "admin.conf and super-admin.conf name the endpoint", SERVERS, (out, want) -> {
            List<String> wrong = new ArrayList<>();
            for (String line : out.strip().split("\n")) {
                String[] w = line.strip().split("\\s+");
                for (int i = 1; i < w.length; i++) if (!w[i].equals("https://" + want)) wrong.add(w[0] + " names " + w[i]);
                if (w.length < 2) wrong.add(w[0] + " names no server");
            }
            return wrong.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", wrong) + ", not https://" + want);
        });
    }

    /** kubectl's answer for a ConfigMap, nothing when it does not exist (a cluster without kube-proxy). */
    static String configMap(String ns, String name) {
        return "out=$(" + Kube.kubectl("-n " + ns + " get cm " + name + " -o json 2>&1") + ") || { case \"$out\" in *NotFound*) exit 0;; esac; "
            + "printf '%s\\n' \"$out\" >&2; exit 1; }; printf '%s\\n' \"$out\"";
    }

    static Probe configMapServer(HostContext ctx, String ns, String name, String key) {
        return probe(ctx, ns + "/" + name + "'s kubeconfig names the endpoint", configMap(ns, name), (out, want) -> {
            List<String> servers = EndpointMigration.configMapServers(out, key).orElse(List.of());
            List<String> wrong = servers.stream().filter(s -> !s.equals("https://" + want)).toList();
            return wrong.isEmpty() ? Optional.empty() : Optional.of(ns + "/" + name + " names " + String.join(", ", wrong) + ", not https://" + want);
        });
    }

    static Probe clusterInfo(HostContext ctx) { return configMapServer(ctx, "kube-public", "cluster-info", "kubeconfig"); }
    static Probe kubeProxy(HostContext ctx) { return configMapServer(ctx, "kube-system", "kube-proxy", "kubeconfig.conf"); }

    /** The kube-proxy DaemonSet and its pods in one JSON object ({@link EndpointMigration#kubeProxyNotBack}); nothing without the DaemonSet. */
    static final String KUBE_PROXY_PODS = "ds=$(" + Kube.kubectl("-n kube-system get ds kube-proxy -o json 2>&1")
        + ") || { case \"$ds\" in *NotFound*) exit 0;; esac; printf '%s\\n' \"$ds\" >&2; exit 1; }; pods=$("
        + Kube.kubectl("-n kube-system get pods -l k8s-app=kube-proxy -o json") + ") || exit 1; printf '{\"ds\": %s, \"pods\": %s}\\n' \"$ds\" \"$pods\"";

    /**
     * Every pod of kube-proxy's DaemonSet Running and ready, as many as it wants. After the restart op every pod it sees
     * was made after the ConfigMap changed: {@code kubectl delete} returns once the old pods are gone.
     */
    static Probe kubeProxyBack() {
        return Probe.of("kube-system/kube-proxy's pods are all Running and ready", KUBE_PROXY_PODS, r -> {
            if (!r.ok()) return Optional.of("could not ask: exit " + r.exit() + Probe.stderrHint(r));
            try {
                return EndpointMigration.kubeProxyNotBack(r.stdout());
            } catch (dev.gpuctl.text.HostConfException e) {
                return Optional.of("unexpected answer: " + e.getMessage());
            }
        }).waitingUpTo(KUBE_PROXY_WAIT);
    }

    @Override public List<Probe> check(HostContext ctx) {
        // kubeadm-config is uploaded last (below), so its endpoint right means every op before it is done; the ConfigMaps
        // are asked only by the ops' guards
        List<Probe> probes = new ArrayList<>(List.of(kubeadmConfigLearned(ctx), certificateOnDisk(ctx), certificateServed(ctx), adminConf(ctx)));
        probes.addAll(ControlPlaneStep.kubeconfigProbes(ctx));
        return List.copyOf(probes);
    }

    /** The InitConfiguration (this master) and the cluster's ClusterConfiguration with the new endpoint, for kubeadm's phases. */
    static String kubeadmConfigFile(HostContext ctx) {
        Node n = ctx.node();
        return "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: \"" + ctx.nodeIp()
            + "\"\n  bindPort: 6443\nnodeRegistration:\n  name: \"" + n.name() + "\"\n  criSocket: \"" + ctx.cluster().runtime().criSocket()
            + "\"\n---\n" + Facts.ref(CC_FACT) + "controlPlaneEndpoint: \"" + wanted(ctx) + "\"\n";
    }

    /** A kubeadm phase run with {@link #kubeadmConfigFile} in a private temporary file, removed on every way out. */
    static String withConfig(HostContext ctx, String command) {
        return "f=$(mktemp) && trap 'rm -f \"$f\"' EXIT && cat > \"$f\" <<'" + EOF + "'\n" + kubeadmConfigFile(ctx) + EOF + "\n" + command;
    }

    /** Every cluster of a kubeconfig pointed at {@code url} ({@code kubectl config set-cluster --server}). */
    static String setServer(String file, String url) {
        return "for c in $(kubectl --kubeconfig=" + file + " config get-clusters | tail -n +2); do kubectl --kubeconfig=" + file
            + " config set-cluster \"$c\" --server=" + url + " >/dev/null || exit 1; done";
    }

    static Op.Capture editedConfigMap(String fact, String ns, String name, String key, Function<String, String> server) {
        return new Op.Capture(ns + "/" + name + " as it is", configMap(ns, name),
            out -> Map.of(fact, out.isBlank() ? "" : EndpointMigration.configMapWithServer(out, key, server.apply(out))), false);
    }

    @Override public List<Op> apply(HostContext ctx) {
        String url = "https://" + wanted(ctx);
        List<Op> ops = new ArrayList<>();
        ops.add(new Op.Capture("the cluster's ClusterConfiguration (kubeadm-config)", Kube.kubectl("-n kube-system get cm kubeadm-config -o json"),
            out -> Map.of(CC_FACT, EndpointMigration.withoutEndpoint(EndpointMigration.clusterConfiguration(out))), false));
        ops.add(Op.Run.of("the API server's certificate re-issued with the endpoint's host (kubeadm init phase certs apiserver; the old pair kept in "
                + BACKUP + ")",
                withConfig(ctx, "install -d -m 0700 " + BACKUP + " && for x in crt key; do if [ -f " + PKI + "/apiserver.$x ]; then mv -f "
                    + PKI + "/apiserver.$x " + BACKUP + "/apiserver.$x || exit 1; fi; done && kubeadm init phase certs apiserver --config \"$f\""))
            .unlessRight(certificateOnDisk(ctx)));
        List<Op> restart = new ArrayList<>(CertsRenewStep.restart("kube-apiserver", ctx.cluster().runtime().criSocket(), UpgradeSteps.apiServerUrl(ctx.node())));
        restart.set(0, ((Op.Run) restart.get(0)).unlessRight(certificateServed(ctx)));
        ops.addAll(restart);
        ops.add(Op.Run.of("admin.conf and super-admin.conf pointed at the endpoint (kubectl config set-cluster --server)",
                "for f in " + Kube.ADMIN_CONF + " /etc/kubernetes/super-admin.conf; do if [ -f $f ]; then " + setServer("$f", url) + "; fi; done")
            .unlessRight(adminConf(ctx)));
        ops.add(Op.Await.of("wait until the API server answers through the endpoint (haproxy marks the restarted one up again)",
            Probe.equals("the API server answers through " + url + " (kubectl get --raw /readyz with admin.conf)",
                Kube.kubectl("get --raw=/readyz 2>&1"), "ok").waitingUpTo(ENDPOINT_WAIT)));
        ops.add(editedConfigMap(CLUSTER_INFO_FACT, "kube-public", "cluster-info", "kubeconfig", out -> url));
        ops.add(Op.Run.of("kube-public/cluster-info pointed at the endpoint (kubectl replace)",
                Kube.kubectl("replace -f - <<'" + EOF + "'\n" + Facts.ref(CLUSTER_INFO_FACT) + "\n" + EOF))
            .unlessRight(clusterInfo(ctx)));
        ops.add(editedConfigMap(KUBE_PROXY_FACT, "kube-system", "kube-proxy", "kubeconfig.conf", out -> url));
        ops.add(Op.Run.of("kube-proxy's kubeconfig (kube-system/kube-proxy) pointed at the endpoint (kubectl replace)",
                Kube.kubectl("replace -f - <<'" + EOF + "'\n" + Facts.ref(KUBE_PROXY_FACT) + "\n" + EOF))
            .unlessRight(kubeProxy(ctx)).changing(KUBE_PROXY_CHANGED));
        ops.add(Op.Run.of("kube-proxy's pods restarted to load the changed ConfigMap (" + KUBE_PROXY_RESTART.replace(Kube.KUBECTL + " ", "kubectl ")
                + "; its DaemonSet makes them again)", KUBE_PROXY_RESTART)
            .onlyIfChanged(KUBE_PROXY_CHANGED));
        ops.add(Op.Await.of("wait until kube-proxy's DaemonSet has all its pods Running again", kubeProxyBack()));
        ops.add(Op.Run.of("kubeadm-config's ClusterConfiguration with the new endpoint, last (kubeadm init phase upload-config kubeadm)",
                withConfig(ctx, "kubeadm init phase upload-config kubeadm --config \"$f\""))
            .unlessRight(kubeadmConfig(ctx)));
        ops.add(new Op.Capture("what the cluster says now (kubeadm-config, control-plane nodes)", ControlPlaneChangeStep.READ,
            out -> Map.of(ControlPlaneChangeStep.VIEW.name(), out), false));
        ops.add(ControlPlaneStep.userKubeconfigOp(ctx));
        ops.add(ControlPlaneStep.fetchKubeconfigOp(ctx));
        return List.copyOf(ops);
    }

    @Override public String whileWaiting(String problem, java.time.Duration upTo) {
        return "waiting up to " + upTo.toSeconds() + "s: " + problem.replaceFirst(" \\(.*\\)$", "");
    }
}
