package dev.gpuctl.steps;

import dev.gpuctl.kube.ClusterIdentity;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.kube.Kubeadm;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Preflight, read-only: what each host says about the cluster it belongs to, learned for the cross-host judgement
 * ({@link ClusterIdentity}: one cluster, or none): the master's CA ({@link #CA_CRT}; none on a blank disk) and each
 * worker's {@link #KUBELET_CONF} (its API server and CA). Only a run that would init or join runs it
 * ({@link Steps#only}): preparing a wiped master's host before {@code gpuctl restore} must stay possible.
 */
public final class ClusterIdentityStep implements Step {
    public static final String ID = "cluster-identity";
    public static final String CA_CRT = "/etc/kubernetes/pki/ca.crt";
    public static final String KUBELET_CONF = "/etc/kubernetes/kubelet.conf";

    /** Fact values: the host has no cluster; a prefix for what could not be read. */
    static final String NONE = "none";
    static final String UNREADABLE = "unreadable: ";

    @Override public String id() { return ID; }
    @Override public String title() { return "the cluster each host belongs to (CA, kubelet.conf)"; }
    @Override public boolean runsOn(HostContext ctx) { return true; }

    /** The fact of the master's CA: its hash, {@link #NONE}, or {@link #UNREADABLE} and why. */
    public static String caFact(String node) { return "cluster." + node + ".ca"; }

    /** The fact of a worker's kubelet.conf: "SERVER HASH", {@link #NONE}, or {@link #UNREADABLE} and why. */
    public static String joinedFact(String node) { return "cluster." + node + ".joined"; }

    @Override public List<Probe> check(HostContext ctx) {
        Node n = ctx.node();
        if (n.isMaster()) {
            return List.of(Probe.of("the master's cluster CA (" + CA_CRT + "), if it has one",
                    "f=" + CA_CRT + "; if [ -f $f ]; then cat $f; fi", r -> Optional.empty())
                .learning(r -> Map.of(caFact(n.name()), !r.ok() ? UNREADABLE + "exit " + r.exit() + ": " + r.tail(1)
                    : r.stdout().isBlank() ? NONE : hash(r.stdout())))
                .judgedWithFacts((r, facts) -> unreadable(facts.get(caFact(n.name())), CA_CRT)));
        }
        return List.of(Probe.of("the cluster this host is joined to (" + KUBELET_CONF + ": server and CA), if any",
                "f=" + KUBELET_CONF + "; if [ -f $f ]; then sed -n -e 's/^[[:space:]]*server:[[:space:]]*/server /p'"
                    + " -e 's/^[[:space:]]*certificate-authority-data:[[:space:]]*/ca-data /p' $f; fi", r -> Optional.empty())
            .learning(r -> Map.of(joinedFact(n.name()), !r.ok() ? UNREADABLE + "exit " + r.exit() + ": " + r.tail(1) : joined(r.stdout())))
            .judgedWithFacts((r, facts) -> unreadable(facts.get(joinedFact(n.name())), KUBELET_CONF)));
    }

    private static String hash(String pem) {
        try {
            return Kubeadm.caCertHash(pem);
        } catch (HostConfException e) {
            return UNREADABLE + e.getMessage();
        }
    }

    private static String joined(String out) {
        try {
            return ClusterIdentity.parseKubeletConf(out).map(j -> j.server() + " " + j.caHash()).orElse(NONE);
        } catch (HostConfException e) {
            return UNREADABLE + e.getMessage();
        }
    }

    private static Optional<String> unreadable(Optional<String> fact, String file) {
        return fact.filter(v -> v.startsWith(UNREADABLE)).map(v -> "cannot read " + file + ": " + v.substring(UNREADABLE.length())
            + " — look at the file; gpuctl does not bootstrap a host whose cluster it cannot tell");
    }

    /** The master's CA hash learned in this run: empty when it has none or was not asked. */
    public static Optional<String> masterCa(Facts facts, String master) {
        return facts.get(caFact(master)).filter(v -> v.startsWith("sha256:"));
    }

    /** Whether this run asked a host, and what it said: empty when not asked (or unreadable: its probe failed). */
    public static Optional<Optional<ClusterIdentity.Joined>> joined(Facts facts, String worker) {
        Optional<String> v = facts.get(joinedFact(worker));
        if (v.isEmpty() || v.get().startsWith(UNREADABLE)) return Optional.empty();
        if (v.get().equals(NONE)) return Optional.of(Optional.empty());
        String[] f = v.get().split(" ", 2);
        return Optional.of(Optional.of(new ClusterIdentity.Joined(f[0], f.length > 1 ? f[1] : "")));
    }

    @Override public List<Op> apply(HostContext ctx) { return List.of(); }
}
