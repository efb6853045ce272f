package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.KubeVersion;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static dev.gpuctl.steps.UpgradeSteps.*;

/** One node back, seen from the master: its kubelet at the target, Ready, every GPU allocatable again, uncordoned. */
final class NodeBackStep implements Step {
    static final Duration WAIT = Duration.ofMinutes(5);
    private final Node node;
    private final KubeVersion target;

    NodeBackStep(Node node, KubeVersion target) { this.node = node; this.target = target; }

    @Override public String id() { return "back-" + node.name(); }
    @Override public String title() { return node.name() + " Ready at " + target + (node.gpu() ? " with every GPU" : "") + ", uncordoned"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.firstMaster(); }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.of(title(), Kube.kubectl("get nodes " + NODES.outputFlag()), r -> Optional.empty())
            .judgedWithFacts((r, facts) -> {
                if (!r.ok()) return Optional.of("kubectl failed: " + r.tail(2));
                NodeState s = nodeStates(r.stdout()).get(node.name());
                if (s == null) return Optional.of(node.name() + " is not a node of the cluster");
                return back(s, target, node.gpu() ? facts.get(GpuStep.gpuCountFact(node)) : Optional.empty());
            }));
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(Op.Await.of("wait until " + node.name() + " is Ready at " + target + (node.gpu() ? " with its GPUs allocatable" : ""), up()),
            Op.Run.of("uncordon " + node.name(), Kube.kubectl("uncordon " + ShellWords.quote(node.name()))));
    }

    /** What the apply waits for: the node Ready at the target with every GPU, cordoned or not (it uncordons next). */
    Probe up() {
        return Probe.of(node.name() + " Ready at " + target + (node.gpu() ? " with every GPU" : ""), Kube.kubectl("get nodes " + NODES.outputFlag()),
                r -> Optional.empty())
            .judgedWithFacts((r, facts) -> {
                if (!r.ok()) return Optional.of("kubectl failed: " + r.tail(2));
                NodeState s = nodeStates(r.stdout()).get(node.name());
                if (s == null) return Optional.of(node.name() + " is not a node of the cluster");
                return back(new NodeState(s.name(), s.kubelet(), s.ready(), false, s.gpus()), target,
                    node.gpu() ? facts.get(GpuStep.gpuCountFact(node)) : Optional.empty());
            })
            .waitingUpTo(WAIT);
    }

    @Override public String whileWaiting(String problem, Duration upTo) {
        return "waiting up to " + upTo.toSeconds() + "s: " + problem;
    }
}
