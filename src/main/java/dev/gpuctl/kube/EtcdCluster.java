package dev.gpuctl.kube;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.text.Json;
import dev.gpuctl.text.ShellWords;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A stacked etcd cluster as a master's etcdctl sees it (etcd 3.6, {@code -w json}): {@code member list}, {@code endpoint
 * status --cluster} and {@code endpoint health --cluster}, asked in one go ({@link #QUERY}) and parsed here into typed
 * records; the quorum arithmetic (a majority of the voting members) and remove-node's refusal are pure functions of them.
 * etcd prints member IDs as unsigned 64-bit decimals in JSON and as hex everywhere else; here they are hex, as
 * {@code etcdctl member remove} takes them.
 *
 * <p>Over 300 lines as one answer: the query, its three JSON parts and the quorum arithmetic over them are read
 * and judged together.
 */
public final class EtcdCluster {
    private EtcdCluster() {}

    /** The marker line before each of {@link #QUERY}'s three answers. */
    public static final String SECTION = "--gpuctl-etcd--";

    /** etcdctl's connection to the local member, as kubeadm's docs run it on a control-plane node. */
    public static final String TLS = "--endpoints=https://127.0.0.1:2379 --cacert=/etc/kubernetes/pki/etcd/ca.crt"
        + " --cert=/etc/kubernetes/pki/etcd/server.crt --key=/etc/kubernetes/pki/etcd/server.key";

    /**
     * The shell that runs etcdctl with {@code "$@"} on a master: the host's etcdctl when it has one, else the etcd static
     * pod's own (kubeadm installs no etcdctl on the host; the etcd image carries it) through the container runtime.
     */
    public static String etcdctlFunction(String criSocket) {
        String crictl = "crictl --runtime-endpoint " + ShellWords.quote(criSocket);
        return "etcdctl_() { if command -v etcdctl >/dev/null 2>&1; then ETCDCTL_API=3 etcdctl " + TLS + " \"$@\"; else "
            + "id=$(" + crictl + " ps --name '^etcd$' --state running -q 2>/dev/null | head -n 1); "
            + "if [ -z \"$id\" ]; then echo 'no running etcd container (crictl ps --name etcd --state running)' >&2; return 1; fi; "
            + crictl + " exec \"$id\" etcdctl " + TLS + " \"$@\"; fi; }; ";
    }

    /** Member list, endpoint status and endpoint health of the whole cluster, each after a {@link #SECTION} line. */
    public static String query(String criSocket) {
        return etcdctlFunction(criSocket)
            + "echo '" + SECTION + " members'; etcdctl_ member list -w json 2>&1; "
            + "echo '" + SECTION + " status'; etcdctl_ endpoint status --cluster -w json 2>/dev/null; "
            + "echo '" + SECTION + " health'; etcdctl_ endpoint health --cluster -w json 2>/dev/null; true";
    }

    /** The same query with the docker runtime's default socket: for tests. */
    static final String QUERY = query("unix:///run/containerd/containerd.sock");

    /** One member of {@code member list}. @param id hex, as etcdctl prints it */
    public record Member(String id, String name, List<String> peerUrls, List<String> clientUrls, boolean learner) {
        public Member {
            peerUrls = List.copyOf(peerUrls);
            clientUrls = List.copyOf(clientUrls);
        }

        public String clientUrl() { return clientUrls.isEmpty() ? "" : clientUrls.get(0); }
    }

    /** One endpoint of {@code endpoint status}: which member answered and which leader it follows (hex; "0": none). */
    public record EndpointStatus(String endpoint, String memberId, String leaderId, List<String> errors) {
        public EndpointStatus { errors = List.copyOf(errors); }
    }

    /** One endpoint of {@code endpoint health}. */
    public record Health(String endpoint, boolean healthy, String error) {}

    /**
     * What a master's etcdctl saw. {@code error} is set when the member list itself failed (this master's member is
     * down or removed): then nothing else is known.
     */
    public record View(List<Member> members, Map<String, EndpointStatus> statuses, Map<String, Health> health, String error) {
        public View {
            members = List.copyOf(members);
            statuses = Map.copyOf(statuses);
            health = Map.copyOf(health);
        }

        public List<Member> voters() { return members.stream().filter(m -> !m.learner()).toList(); }

        /** A majority of the voting members: 2 of 3, 3 of 5, 2 of 2, 1 of 1. */
        public int quorum() { return quorumOf(voters().size()); }

        public boolean healthy(Member m) {
            Health h = health.get(m.clientUrl());
            return h != null && h.healthy();
        }

        public List<Member> healthyVoters() { return voters().stream().filter(this::healthy).toList(); }

        public List<Member> downVoters() { return voters().stream().filter(m -> !healthy(m)).toList(); }

        /** The member every answering endpoint names as leader, if one does. */
        public Optional<Member> leader() {
            return statuses.values().stream().filter(s -> s.errors().isEmpty() && !s.leaderId().equals("0"))
                .map(EndpointStatus::leaderId).findFirst()
                .flatMap(id -> members.stream().filter(m -> m.id().equals(id)).findFirst());
        }

        public Optional<Member> named(String name) { return members.stream().filter(m -> m.name().equals(name)).findFirst(); }

        public boolean hasQuorum() { return error.isEmpty() && healthyVoters().size() >= quorum(); }

        /** "3 of 3 members healthy (quorum 2); leader m1" and the members that are down, for people. */
        public String summary() {
            if (!error.isEmpty()) return "etcdctl failed: " + error;
            StringBuilder sb = new StringBuilder().append(healthyVoters().size()).append(" of ").append(voters().size())
                .append(voters().size() == 1 ? " member" : " members").append(" healthy (quorum ").append(quorum()).append(")");
            sb.append("; leader ").append(leader().map(Member::name).orElse("none"));
            List<Member> down = downVoters();
            if (!down.isEmpty()) sb.append("; down: ").append(String.join(", ", down.stream().map(EtcdCluster::label).toList()));
            List<Member> learners = members.stream().filter(Member::learner).toList();
            if (!learners.isEmpty()) sb.append("; learners: ").append(String.join(", ", learners.stream().map(EtcdCluster::label).toList()));
            return sb.toString();
        }

        /** What one master's own member is: "member m1 (id 4e86…), leader, healthy" or why it is not in the cluster. */
        public Optional<String> memberProblem(String node) {
            if (!error.isEmpty()) return Optional.of("etcdctl on " + node + " failed: " + error);
            Optional<Member> m = named(node);
            if (m.isEmpty()) return Optional.of("no etcd member named " + node + " (members: "
                + String.join(", ", members.stream().map(EtcdCluster::label).toList()) + ")");
            if (m.get().learner()) return Optional.of("member " + label(m.get()) + " is still a learner (not promoted)");
            if (!healthy(m.get())) {
                Health h = health.get(m.get().clientUrl());
                return Optional.of("member " + label(m.get()) + " is unhealthy: " + (h == null ? "no answer" : h.error()));
            }
            return Optional.empty();
        }

        public String memberDetail(String node) {
            return named(node).map(m -> "member " + m.name() + " (id " + m.id() + ", " + m.clientUrl() + "), "
                + (leader().filter(l -> l.id().equals(m.id())).isPresent() ? "leader" : m.learner() ? "learner" : "follower")
                + ", " + (healthy(m) ? "healthy" : "unhealthy")).orElse("");
        }

        /** Where quorum is lost: "etcd has 1 of 3 members healthy, needs 2 (quorum lost); down: …". */
        public Optional<String> quorumProblem() {
            if (!error.isEmpty()) return Optional.of("etcdctl failed: " + error);
            if (hasQuorum()) return Optional.empty();
            return Optional.of("etcd has " + healthyVoters().size() + " of " + voters().size() + " members healthy, needs "
                + quorum() + ": quorum lost, the API servers cannot write; down: "
                + String.join(", ", downVoters().stream().map(EtcdCluster::label).toList()));
        }

        /**
         * Why removing {@code node}'s member must not happen now, or empty: every other voting member must be healthy (a
         * master is never removed while another is down), and the members left must keep a quorum of healthy ones. A
         * member already gone is no refusal (a re-run).
         */
        public Optional<String> removalRefusal(String node) {
            if (!error.isEmpty()) return Optional.of("etcdctl failed: " + error);
            return named(node).flatMap(m -> removalRefusal(m, node));
        }

        /**
         * The member a master left behind: the one named {@code node}, else the one whose peer URLs include
         * {@code peerUrl} (a member added but never started has no name yet); empty when etcd lists neither.
         */
        public Optional<Member> leftBy(String node, String peerUrl) {
            return named(node).or(() -> members.stream().filter(m -> m.peerUrls().contains(peerUrl)).findFirst());
        }

        /**
         * Why the member that {@code node}, whose disk was lost, left behind must not be removed now, or empty: it answers
         * (etcd's health says so: then a member runs at its address and the disk is not what was lost), or removing it
         * is refused as {@link #removalRefusal(String)} refuses any removal.
         */
        public Optional<String> lostMemberRefusal(Member stale, String node) {
            if (!error.isEmpty()) return Optional.of("etcdctl failed: " + error);
            if (healthy(stale)) {
                return Optional.of("etcd's member " + label(stale) + " answers as healthy at " + stale.clientUrl() + ", though " + node
                    + " has no etcd data: another etcd serves that address; find it before anything is removed");
            }
            return removalRefusal(stale, node);
        }

        private Optional<String> removalRefusal(Member member, String node) {
            List<Member> othersDown = downVoters().stream().filter(m -> !m.id().equals(member.id())).toList();
            int total = voters().size();
            int healthy = healthyVoters().size();
            if (!othersDown.isEmpty()) {
                return Optional.of("another master is down: " + String.join(", ", othersDown.stream().map(EtcdCluster::label).toList())
                    + " (etcd: " + healthy + " of " + total + " members healthy, quorum " + quorum()
                    + "); a master is removed only while every other master is up");
            }
            if (member.learner()) return Optional.empty();
            int left = total - 1;
            int healthyLeft = healthy - (healthy(member) ? 1 : 0);
            if (left == 0) return Optional.of(node + " holds the only etcd member: removing it ends the cluster (use gpuctl reset)");
            if (healthyLeft < quorumOf(left)) {
                return Optional.of("removing " + node + " would leave " + healthyLeft + " healthy of " + left
                    + " members, below their quorum of " + quorumOf(left) + " (now " + healthy + " of " + total + ", quorum " + quorum() + ")");
            }
            return Optional.empty();
        }
    }

    public static int quorumOf(int voters) { return voters / 2 + 1; }

    /** "m2 (8e9e05c52164694d)", or "(unstarted) (ID)" for a member added but never started. */
    public static String label(Member m) { return (m.name().isEmpty() ? "(unstarted)" : m.name()) + " (" + m.id() + ")"; }

    /** {@link #QUERY}'s answer as a {@link View}; a section that is not etcdctl's JSON counts as no answer. */
    public static View parse(String answer) {
        Map<String, String> sections = new LinkedHashMap<>();
        String current = null;
        StringBuilder body = new StringBuilder();
        for (String line : answer.split("\n", -1)) {
            if (line.startsWith(SECTION + " ")) {
                if (current != null) sections.put(current, body.toString());
                current = line.substring(SECTION.length() + 1).strip();
                body.setLength(0);
            } else if (current != null) {
                body.append(line).append('\n');
            }
        }
        if (current != null) sections.put(current, body.toString());
        String members = sections.getOrDefault("members", "");
        List<Member> ms;
        try {
            ms = memberList(members);
        } catch (IllegalArgumentException e) {
            return new View(List.of(), Map.of(), Map.of(), lastLine(members));
        }
        Map<String, EndpointStatus> st = new LinkedHashMap<>();
        try {
            for (EndpointStatus s : endpointStatus(sections.getOrDefault("status", ""))) st.put(s.endpoint(), s);
        } catch (IllegalArgumentException e) {
            // no endpoint answered: no leader known
        }
        Map<String, Health> hs = new LinkedHashMap<>();
        try {
            for (Health h : endpointHealth(sections.getOrDefault("health", ""))) hs.put(h.endpoint(), h);
        } catch (IllegalArgumentException e) {
            // no health known: every member counts as unhealthy
        }
        return new View(ms, st, hs, "");
    }

    /** {@code etcdctl member list -w json}: the members, sorted by ID as etcd lists them. */
    public static List<Member> memberList(String json) {
        JsonNode root = read(json);
        JsonNode members = root.path("members");
        if (!members.isArray()) throw new IllegalArgumentException("no members in etcdctl's answer");
        List<Member> out = new ArrayList<>();
        for (JsonNode m : members) {
            out.add(new Member(hex(m.path("ID")), m.path("name").asText(""), strings(m.path("peerURLs")),
                strings(m.path("clientURLs")), m.path("isLearner").asBoolean(false)));
        }
        out.sort(Comparator.comparing(m -> new BigInteger(m.id(), 16)));
        return List.copyOf(out);
    }

    /** {@code etcdctl endpoint status -w json}: one entry per endpoint that answered. */
    public static List<EndpointStatus> endpointStatus(String json) {
        JsonNode root = read(json);
        if (!root.isArray()) throw new IllegalArgumentException("etcdctl's endpoint status is not a JSON array");
        List<EndpointStatus> out = new ArrayList<>();
        for (JsonNode e : root) {
            JsonNode s = e.path("Status");
            out.add(new EndpointStatus(e.path("Endpoint").asText(""), hex(s.path("header").path("member_id")), hex(s.path("leader")),
                strings(s.path("errors"))));
        }
        return List.copyOf(out);
    }

    /** {@code etcdctl endpoint health -w json}. */
    public static List<Health> endpointHealth(String json) {
        JsonNode root = read(json);
        if (!root.isArray()) throw new IllegalArgumentException("etcdctl's endpoint health is not a JSON array");
        List<Health> out = new ArrayList<>();
        for (JsonNode h : root) out.add(new Health(h.path("endpoint").asText(""), h.path("health").asBoolean(false), h.path("error").asText("")));
        return List.copyOf(out);
    }

    private static JsonNode read(String json) {
        String t = json.strip();
        int start = Math.max(t.lastIndexOf("\n{"), t.lastIndexOf("\n["));
        if (start >= 0) t = t.substring(start + 1);  // etcdctl's client warnings (JSON log lines) before its answer
        try {
            return Json.MAPPER.readTree(t.isEmpty() ? "null" : t);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not etcdctl's JSON: " + lastLine(json));
        }
    }

    private static String hex(JsonNode n) {
        if (n.isMissingNode() || n.isNull()) return "0";
        return new BigInteger(n.asText("0")).toString(16);
    }

    private static List<String> strings(JsonNode n) {
        List<String> out = new ArrayList<>();
        if (n.isArray()) n.forEach(x -> out.add(x.asText()));
        return out;
    }

    private static String lastLine(String s) {
        List<String> lines = s.strip().lines().filter(l -> !l.isBlank()).toList();
        return lines.isEmpty() ? "no answer" : lines.get(lines.size() - 1).strip();
    }
}
