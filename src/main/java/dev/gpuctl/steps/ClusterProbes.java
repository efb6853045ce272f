package dev.gpuctl.steps;

import dev.gpuctl.kube.ClusterView;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.KubeFields;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Probe;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The cluster probes' questions and answers. Each asks kubectl for the fields it judges ({@link KubeFields},
 * {@link ClusterView}), never whole objects (a pod's environment values would reach the log). The master's checks
 * (nodes, labels, capacity, pods, cordons, taints, GPU records) all read one answer, {@link ClusterView#COMMAND}.
 */
final class ClusterProbes {
    private ClusterProbes() {}

    /** {@code kubectl get pods ARGS}, asking for {@link KubeFields#PODS}. */
    static String pods(String args) { return Kube.kubectl("get pods " + args + " " + KubeFields.PODS.outputFlag()); }

    /** How the cluster probes read the answer to {@link ClusterView#COMMAND}: parsed once per answer. */
    static final Facts.Key<ClusterView> CLUSTER = new Facts.Key<>("cluster view", ClusterView.class, ClusterView::parse);

    /**
     * A check judged on the cluster's nodes and pods. Every such probe asks the same command, {@link ClusterView#COMMAND},
     * so that a batch of the master's checks reads the cluster once, and the answer is parsed once for all of them.
     */
    static Probe cluster(String what, BiFunction<ClusterView, Facts, Optional<String>> judge) {
        return Probe.of(what, ClusterView.COMMAND, r -> Optional.empty()).judgedWithFacts((r, facts) -> {
            if (!r.ok()) return Optional.of("kubectl failed (exit " + r.exit() + "): " + r.tail(2));
            return judge.apply(facts.answer(CLUSTER, r.stdout()), facts);
        });
    }

    static Probe cluster(String what, Function<ClusterView, Optional<String>> judge) {
        return cluster(what, (view, facts) -> judge.apply(view));
    }

    /** The pods of a namespace are all Running, and there is at least one. */
    static Probe podsRunning(String what, String namespace) {
        return cluster(what, view -> {
            List<ClusterView.PodState> pods = view.podsIn(namespace);
            if (pods.isEmpty()) return Optional.of("no pods in " + namespace);
            List<String> notRunning = pods.stream().filter(p -> !p.phase().equals("Running")).map(p -> p.name() + " " + p.phase()).toList();
            return notRunning.isEmpty() ? Optional.empty() : Optional.of("not running: " + String.join(", ", notRunning));
        });
    }

    /** Every node of the list is registered and Ready (nodes join after the pod network: missing ones are fine). */
    static Probe nodesReady(List<String> names) {
        return cluster("every node that joined is Ready", view -> {
            List<String> notReady = new ArrayList<>();
            for (ClusterView.NodeState n : view.nodes()) {
                if (!names.contains(n.name())) continue;
                if (n.ready().map(ClusterView.Condition::isTrue).orElse(false)) continue;
                notReady.add(n.name() + " (" + n.ready().map(c -> c.reason() + ": " + c.message()).orElse("no Ready condition") + ")");
            }
            return notReady.isEmpty() ? Optional.empty() : Optional.of("not Ready: " + String.join(", ", notReady));
        });
    }
}
