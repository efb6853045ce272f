package dev.gpuctl.steps;

import dev.gpuctl.kube.EtcdCluster;
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

/**
 * A master whose disk was lost while it was an etcd member (a replaced disk, a reinstalled host): preflight found it
 * blank ({@link #disk}: no etcd manifest, an empty {@code /var/lib/etcd}) while etcd still lists a member of its name or
 * peer URL. kubeadm's check-etcd refuses every control-plane join while a member does not answer, and a join that reused
 * the member would start an empty etcd under its old ID. So, before the joins, the first master removes that member
 * ({@code etcdctl member remove}), and only while every other master is up and the members left keep a quorum of healthy
 * ones ({@link EtcdCluster.View#lostMemberRefusal}); the master then joins again as a new member (step join-masters).
 * Several masters only; nothing is asked of a single master.
 */
public final class LostMasterStep implements Step {
    public static final String ID = "lost-masters";
    static final String BLANK = "blank";
    /** The first line of the apply's etcd question: what preflight learned of the master, then its peer URL. */
    static final String MARK = "--gpuctl-lost-master--";

    /** Where preflight keeps what it found on a master other than the first: {@value #BLANK} or "present". */
    public static String diskFact(Node n) { return "master." + n.name() + ".disk"; }

    static String idFact(String master) { return "etcd.lost." + master + ".id"; }

    /** Whether a master is blank: no etcd static pod manifest and nothing in /var/lib/etcd (kubeadm's DirAvailable). */
    static final String DISK = "if test -e /etc/kubernetes/manifests/etcd.yaml || [ -n \"$(ls -A /var/lib/etcd 2>/dev/null)\" ];"
        + " then echo present; else echo " + BLANK + "; fi";

    /** Preflight's probe on a master other than the first, when there are several: learns {@link #diskFact}. */
    static Probe disk(HostContext ctx) {
        return Probe.of("this master's etcd on disk (its manifest, /var/lib/etcd), for a member a lost disk left behind", DISK,
                r -> r.ok() ? Optional.empty() : Optional.of("cannot look: " + r.tail(1)))
            .learning(r -> r.ok() ? Map.of(diskFact(ctx.node()), r.stdout().strip()) : Map.of());
    }

    /** Whether preflight asks {@link #disk} on this host. */
    static boolean asked(HostContext ctx) {
        return ctx.node().isMaster() && !ctx.firstMaster() && ctx.inventory().masters().size() > 1;
    }

    /** The peer URL kubeadm gives a master's member: https://NODE_IP:2380 (a fact reference for a master named by host name). */
    static String peerUrl(HostContext master) {
        return "https://" + KubeadmConfig.hostForUrl(master.nodeIp()) + ":2380";
    }

    @Override public String id() { return ID; }
    @Override public String title() { return "etcd members left by masters whose disk was lost, removed before they join again"; }
    @Override public boolean readsCluster() { return true; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.firstMaster() && ctx.inventory().masters().size() > 1; }

    private static List<HostContext> others(HostContext ctx) {
        return ctx.inventory().masters().stream().filter(m -> !m.name().equals(ctx.inventory().master().name()))
            .map(m -> new HostContext(ctx.inventory(), m)).toList();
    }

    /**
     * What is wrong, from the first master's etcd answer and what preflight found on {@code master}: a blank master whose
     * member etcd still lists. A master that was not asked (unreachable) or has its etcd, or an etcd that did not answer,
     * is not judged here.
     */
    static Optional<String> problem(String answer, String master, String peerUrl, Optional<String> disk) {
        if (!disk.equals(Optional.of(BLANK))) return Optional.empty();
        EtcdCluster.View v = EtcdCluster.parse(answer);
        // no etcd answering on the first master (a cluster not initialised yet, a dry run before init): no member is known
        // to be left; a join that meets one is refused by kubeadm's check-etcd, naming it
        if (!v.error().isEmpty()) return Optional.empty();
        return v.leftBy(master, peerUrl).map(m -> master + " is blank (no etcd manifest, /var/lib/etcd empty: a lost disk) but etcd"
            + " still lists its member " + EtcdCluster.label(m) + " at " + peerUrl + "; it is removed before " + master
            + " joins again; " + v.summary());
    }

    /**
     * The apply's decision from {@link #MARK}'s line and etcd's answer: the ID of the member to remove ("" when the master
     * is not blank or no member is left), or the refusal (an IllegalArgumentException: the step fails, nothing changed).
     */
    static Map<String, String> memberToRemove(String answer, String master) {
        String first = answer.lines().findFirst().orElse("");
        String[] mark = first.startsWith(MARK + " ") ? first.substring(MARK.length() + 1).strip().split(" ") : new String[0];
        if (mark.length != 2) throw new IllegalArgumentException("no " + MARK + " line");
        String id = "";
        if (mark[0].equals(BLANK)) {
            EtcdCluster.View v = EtcdCluster.parse(answer);
            Optional<EtcdCluster.Member> stale = v.error().isEmpty() ? v.leftBy(master, mark[1]) : Optional.empty();
            Optional<String> refusal = v.error().isEmpty() ? stale.flatMap(m -> v.lostMemberRefusal(m, master))
                : Optional.of("etcdctl failed: " + v.error());
            if (refusal.isPresent()) throw new IllegalArgumentException("refused: " + refusal.get() + ". Nothing was changed.");
            id = stale.map(EtcdCluster.Member::id).orElse("");
        }
        return Map.of(idFact(master), id);
    }

    /** One question of etcd for every other master (one etcdctl run), judged against what preflight found on each. */
    @Override public List<Probe> check(HostContext ctx) {
        String query = EtcdCluster.query(ctx.cluster().runtime().criSocket());
        List<HostContext> others = others(ctx);
        String names = String.join(", ", others.stream().map(m -> m.node().name()).toList());
        return List.of(Probe.of("no etcd member left by a master whose disk was lost (" + names + ")", query, r -> Optional.empty())
            .judgedWithFacts((r, facts) -> {
                List<String> problems = new ArrayList<>();
                for (HostContext m : others) {
                    Optional<String> disk = facts.get(diskFact(m.node()));
                    if (disk.isEmpty()) continue;
                    try {
                        problem(r.stdout(), m.node().name(), facts.substitute(peerUrl(m)), disk).ifPresent(problems::add);
                    } catch (IllegalStateException notLearned) { // its address, by host name, not learned
                        // not judged
                    }
                }
                return problems.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", problems));
            }));
    }

    @Override public List<Op> apply(HostContext ctx) {
        String socket = ctx.cluster().runtime().criSocket();
        List<Op> ops = new ArrayList<>();
        for (HostContext m : others(ctx)) {
            Node n = m.node();
            ops.add(new Op.Capture("etcd's members and their health, and the quorum without the member " + n.name() + " left (if blank)",
                "echo '" + MARK + " " + Facts.ref(diskFact(n)) + " " + peerUrl(m) + "'; " + EtcdCluster.query(socket),
                out -> memberToRemove(out, n.name()), false));
            ops.add(Op.Run.of("etcdctl member remove (the member " + n.name() + " left, its disk lost)", EtcdCluster.etcdctlFunction(socket)
                + "id=" + Facts.ref(idFact(n.name())) + "; [ -z \"$id\" ] || etcdctl_ member remove \"$id\""));
        }
        return ops;
    }
}
