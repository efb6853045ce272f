package dev.gpuctl.backup;

import dev.gpuctl.kube.KubeadmConfig;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The flags of a whole control plane's restore, etcd's disaster recovery: every member restores the same snapshot
 * ({@code etcdutl snapshot restore SNAPSHOT --name NAME --initial-advertise-peer-urls URL --initial-cluster
 * N1=U1,N2=U2,... --initial-cluster-token TOKEN --data-dir DIR}) with one {@code --initial-cluster} naming every member
 * and one token, so that the restored members agree on the members' IDs and form one new cluster. Pure.
 */
public final class EtcdRestore {
    private EtcdRestore() {}

    /** etcd's peer port, as kubeadm's stacked etcd uses it (https://ADDRESS:2380). */
    public static final int PEER_PORT = 2380;

    /**
     * One member of the restored cluster: its name (kubeadm names the member after the node) and peer URL.
     */
    public record Member(String name, String peerUrl) {
        public Member {
            if (!name.matches("[A-Za-z0-9]([A-Za-z0-9._-]{0,251}[A-Za-z0-9])?")) {
                throw new IllegalArgumentException("not an etcd member name: '" + name + "'");
            }
            if (!peerUrl.matches("https://[A-Za-z0-9.:\\[\\]_-]+:[0-9]{1,5}")) {
                throw new IllegalArgumentException("not a peer URL (https://HOST:PORT): '" + peerUrl + "'");
            }
        }

        /** A master's member as kubeadm makes it: the node's name, https://ADDRESS:2380. */
        public static Member of(String nodeName, String address) {
            return new Member(nodeName, "https://" + KubeadmConfig.hostForUrl(address) + ":" + PEER_PORT);
        }

        @Override public String toString() { return name + "=" + peerUrl; }
    }

    /**
     * {@code --initial-cluster}: NAME=URL for every member, in the order given, comma-separated. A name or a URL twice
     * is refused (etcd refuses a URL twice; a name twice would be one member with two URLs), as is an empty list.
     */
    public static String initialCluster(List<Member> members) {
        if (members.isEmpty()) throw new IllegalArgumentException("an initial cluster needs at least one member");
        Set<String> names = new HashSet<>();
        Set<String> urls = new HashSet<>();
        List<String> parts = new ArrayList<>();
        for (Member m : members) {
            if (!names.add(m.name())) throw new IllegalArgumentException("member " + m.name() + " named twice");
            if (!urls.add(m.peerUrl())) throw new IllegalArgumentException("peer URL " + m.peerUrl() + " given twice");
            parts.add(m.toString());
        }
        return String.join(",", parts);
    }

    /**
     * {@code --initial-cluster-token}: one per archive (the same on every member of one restore, so that a re-run of
     * the same restore makes the same cluster), never the old cluster's (etcd's default "etcd-cluster"), so that a
     * restored member can never talk to a member of the cluster it replaces.
     */
    public static String token(String archiveSha256) {
        if (!archiveSha256.matches("[0-9a-f]{64}")) throw new IllegalArgumentException("not a sha256: " + archiveSha256);
        return "gpuctl-restore-" + archiveSha256.substring(0, 16);
    }

    /**
     * Whether {@code etcdctl member list} (simple output: "ID, STATUS, NAME, PEER ADDRS, CLIENT ADDRS, IS LEARNER" per
     * line) shows exactly the members {@code want}, each started: empty when it does, else what differs.
     */
    public static Optional<String> membersProblem(String memberList, List<Member> want) {
        List<String> got = new ArrayList<>();
        List<String> unstarted = new ArrayList<>();
        for (String line : memberList.strip().split("\n")) {
            String[] f = line.split(", ");
            if (f.length < 4) return Optional.of("not a member list: " + oneLine(memberList));
            got.add(f[2].isEmpty() ? f[3] : f[2] + "=" + f[3]);
            if (!f[1].equals("started")) unstarted.add(f[2].isEmpty() ? f[3] : f[2]);
        }
        List<String> expected = want.stream().map(Member::toString).sorted().toList();
        List<String> sorted = got.stream().sorted().toList();
        if (!sorted.equals(expected)) return Optional.of("members " + String.join(", ", sorted) + "; expected " + String.join(", ", expected));
        if (!unstarted.isEmpty()) return Optional.of("not started yet: " + String.join(", ", unstarted));
        return Optional.empty();
    }

    private static String oneLine(String s) {
        String t = s.strip().replace('\n', ' ');
        return t.length() > 120 ? t.substring(0, 117) + "..." : t;
    }
}
