package dev.gpuctl.inventory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Reads {@code teams:} and checks it against the nodes' GPUs. See {@link InventoryLoader} for the rules: every GPU node
 * states its GPU count ({@code gpus}) and, when the cluster has several models, every one its {@code gpuModel}; a quota
 * names only models some node has and is at most the cluster's GPUs of that model (count × sharing replicas).
 */
final class TeamsReader {
    static final List<String> KEYS = List.of("name", "gpus", "members", "borrowing");
    /** A team name is the ClusterQueue's, and with {@link Team#NAMESPACE_PREFIX} a namespace's: a DNS label of 63 at most. */
    static final int MAX_NAME = 63 - Team.NAMESPACE_PREFIX.length();

    private final Problems problems;

    TeamsReader(Problems problems) { this.problems = problems; }

    List<Team> read(Section top, SequenceNode list, List<dev.gpuctl.inventory.Node> nodes, Optional<Cluster> cluster) {
        if (list.getValue().isEmpty()) {
            problems.at(list, "teams: the list is empty (expected at least one team, or no teams: key)");
            return List.of();
        }
        Node teamsKey = top.keyNode("teams").orElse(list);
        Map<String, Integer> capacity = capacity(teamsKey, nodes, cluster);
        List<Team> teams = new ArrayList<>();
        Map<String, ScalarNode> names = new HashMap<>();
        Map<String, String> memberOf = new HashMap<>();
        for (int i = 0; i < list.getValue().size(); i++) {
            String path = "teams[" + i + "]";
            Optional<Section> s = Section.read(problems, path, list.getValue().get(i), KEYS, Map.of());
            if (s.isEmpty()) continue;
            team(s.get(), capacity, names, memberOf).ifPresent(teams::add);
        }
        return teams;
    }

    /**
     * GPUs per model the quotas may use: each GPU node's count times its sharing replicas. A GPU node without a count, a
     * node without a model where others name theirs, and MIG (whose devices per GPU the profile decides) are errors.
     */
    private Map<String, Integer> capacity(Node teamsKey, List<dev.gpuctl.inventory.Node> nodes, Optional<Cluster> cluster) {
        Map<String, Integer> capacity = new TreeMap<>();
        List<dev.gpuctl.inventory.Node> gpuNodes = nodes.stream().filter(dev.gpuctl.inventory.Node::gpu).toList();
        boolean named = gpuNodes.stream().anyMatch(n -> !n.gpuModel().isEmpty());
        for (dev.gpuctl.inventory.Node n : gpuNodes) {
            GpuSharing sharing = n.gpuSharing().or(() -> cluster.map(Cluster::gpuSharing)).orElse(GpuSharing.NONE);
            if (sharing.mig().isPresent()) {
                problems.at(teamsKey, "teams: node '" + n.name() + "' cuts its GPUs into MIG instances, which team quotas do not"
                    + " cover yet (expected no gpuSharing.mig on GPU nodes when teams are set)");
                continue;
            }
            if (n.gpus() == 0) {
                problems.at(teamsKey, "teams: GPU node '" + n.name() + "' does not state its GPU count (expected gpus: N on every"
                    + " GPU node when teams are set, so that quotas can be checked against the cluster's GPUs)");
                continue;
            }
            if (named && n.gpuModel().isEmpty()) {
                problems.at(teamsKey, "teams: GPU node '" + n.name() + "' does not state its gpuModel while other nodes do"
                    + " (expected gpuModel on every GPU node, or on none)");
                continue;
            }
            capacity.merge(n.gpuModel().isEmpty() ? Team.DEFAULT_MODEL : n.gpuModel(), n.gpus() * sharing.replicas(), Integer::sum);
        }
        return capacity;
    }

    private Optional<Team> team(Section t, Map<String, Integer> capacity, Map<String, ScalarNode> names, Map<String, String> memberOf) {
        Optional<ScalarNode> nameNode = t.requiredScalar("name", "a team name such as 'vision'");
        Optional<String> name = nameNode.filter(n -> {
            boolean ok = Names.isDnsLabel(n.getValue()) && n.getValue().length() <= MAX_NAME;
            if (!ok) problems.at(n, t.child("name") + ": '" + n.getValue() + "' is not a valid team name (expected a DNS-1123"
                + " label of at most " + MAX_NAME + " characters: lowercase letters, digits and '-'; it names the team's"
                + " ClusterQueue and, as " + Team.NAMESPACE_PREFIX + "NAME, its namespace)");
            return ok;
        }).filter(n -> {
            ScalarNode first = names.putIfAbsent(n.getValue(), n);
            if (first != null) problems.at(n, "duplicate team name '" + n.getValue() + "' (first at line " + Problems.line(first) + ")");
            return first == null;
        }).map(ScalarNode::getValue);
        if (t.value("gpus").isEmpty()) t.missing("gpus", "the team's GPU quota: a number, or per GPU model { MODEL: N }");
        Optional<Map<String, Integer>> gpus = t.value("gpus").flatMap(v -> quota(t, v, capacity, name.orElse("")));
        List<String> members = t.list("members").map(l -> members(t, l, name.orElse(""), memberOf)).orElse(List.of());
        Optional<OptionalInt> borrowing = t.value("borrowing").flatMap(v -> borrowing(t, v));
        if (name.isEmpty() || gpus.isEmpty() || (t.value("borrowing").isPresent() && borrowing.isEmpty())) return Optional.empty();
        return Optional.of(new Team(name.get(), gpus.get(), members, borrowing.orElse(OptionalInt.empty())));
    }

    private Optional<Map<String, Integer>> quota(Section t, Node value, Map<String, Integer> capacity, String team) {
        String path = t.child("gpus");
        Map<String, Integer> quota = new LinkedHashMap<>();
        if (value instanceof ScalarNode s && Section.isPlainScalar(s)) {
            if (capacity.size() > 1) {
                problems.at(s, path + ": the cluster has several GPU models (" + String.join(", ", capacity.keySet())
                    + "), so the quota is per model (expected e.g. gpus: { " + capacity.keySet().iterator().next() + ": " + s.getValue() + " })");
                return Optional.empty();
            }
            Optional<Integer> n = count(s, path);
            String model = capacity.isEmpty() ? Team.DEFAULT_MODEL : capacity.keySet().iterator().next();
            n.filter(g -> fits(s, path, team, model, g, capacity)).ifPresent(g -> quota.put(model, g));
            return n.isPresent() && quota.size() == 1 ? Optional.of(quota) : Optional.empty();
        }
        if (!(value instanceof MappingNode m) || !value.getTag().equals(Tag.MAP)) {
            problems.at(value, path + ": expected a GPU count or a mapping of GPU models to counts, got " + Section.describe(value));
            return Optional.empty();
        }
        boolean ok = true;
        for (NodeTuple e : m.getValue()) {
            if (!(e.getKeyNode() instanceof ScalarNode k) || !Section.isPlainScalar(k)) {
                problems.at(e.getKeyNode(), path + ": expected a GPU model name, got " + Section.describe(e.getKeyNode()));
                ok = false;
                continue;
            }
            String model = k.getValue();
            if (quota.containsKey(model)) {
                problems.at(k, "duplicate key '" + model + "' in " + path);
                ok = false;
                continue;
            }
            if (!capacity.containsKey(model)) {
                problems.at(k, path + ": no GPU node has model '" + model + "' (expected one of: "
                    + (capacity.isEmpty() ? "none: no GPU node states gpus" : String.join(", ", capacity.keySet()))
                    + "; a node's model is its gpuModel)");
                ok = false;
                continue;
            }
            if (!(e.getValueNode() instanceof ScalarNode v) || !Section.isPlainScalar(v)) {
                problems.at(e.getValueNode(), path + "." + model + ": expected a GPU count, got " + Section.describe(e.getValueNode()));
                ok = false;
                continue;
            }
            Optional<Integer> n = count(v, path + "." + model).filter(g -> fits(v, path + "." + model, team, model, g, capacity));
            n.ifPresent(g -> quota.put(model, g));
            ok &= n.isPresent();
        }
        return ok ? Optional.of(quota) : Optional.empty();
    }

    private Optional<Integer> count(ScalarNode s, String path) {
        if (!s.getTag().equals(Tag.INT) || !s.getValue().matches("[0-9]{1,4}")) {
            problems.at(s, path + ": '" + s.getValue() + "' is not a GPU count (expected a whole number, 0 or more)");
            return Optional.empty();
        }
        return Optional.of(Integer.parseInt(s.getValue()));
    }

    private boolean fits(ScalarNode at, String path, String team, String model, int quota, Map<String, Integer> capacity) {
        int have = capacity.getOrDefault(model, 0);
        if (quota <= have) return true;
        problems.at(at, path + ": team '" + team + "' gets " + quota + " GPU" + (quota == 1 ? "" : "s")
            + (model.equals(Team.DEFAULT_MODEL) ? "" : " of model " + model) + ", above the cluster's " + have
            + " (expected at most " + have + ": the GPU nodes' gpus" + (model.equals(Team.DEFAULT_MODEL) ? "" : " of that model")
            + ", times their sharing replicas)");
        return false;
    }

    private List<String> members(Section t, SequenceNode list, String team, Map<String, String> memberOf) {
        List<String> members = new ArrayList<>();
        for (Node item : list.getValue()) {
            if (!(item instanceof ScalarNode s) || !Section.isPlainScalar(item) || !Names.isLabelValue(s.getValue())) {
                problems.at(item, t.child("members") + ": expected a person's name such as 'alice' (at most 63 letters, digits, '-',"
                    + " '_' and '.'), got " + Section.describe(item));
                continue;
            }
            String other = memberOf.putIfAbsent(s.getValue(), team);
            if (other != null) {
                problems.at(s, t.child("members") + ": '" + s.getValue() + "' is already a member of team '" + other
                    + "' (expected each person in one team: job submit puts a person's jobs in their team's queue)");
                continue;
            }
            members.add(s.getValue());
        }
        return members;
    }

    private Optional<OptionalInt> borrowing(Section t, Node v) {
        if (v instanceof ScalarNode s && v.getTag().equals(Tag.BOOL)) {
            return Optional.of(t.bool("borrowing").orElse(true) ? OptionalInt.empty() : OptionalInt.of(0));
        }
        if (v instanceof ScalarNode s && v.getTag().equals(Tag.INT) && s.getValue().matches("[0-9]{1,4}")) {
            return Optional.of(OptionalInt.of(Integer.parseInt(s.getValue())));
        }
        problems.at(v, t.child("borrowing") + ": expected true (borrow any idle GPU of the other teams), false (never borrow)"
            + " or the most GPUs the team may borrow, got " + Section.describe(v));
        return Optional.empty();
    }
}
