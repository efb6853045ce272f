package dev.gpuctl.workload;

import dev.gpuctl.hostfiles.DeviceCheckpoint;
import dev.gpuctl.gpu.GpuSamples;
import dev.gpuctl.gpu.GpuQuestions;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.kube.KubeFields;
import dev.gpuctl.gpu.NvidiaSmi;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Who holds which GPU, from what the hosts answered ({@link GpuQuestions}: kubectl on the master, with its admin.conf,
 * so this machine needs no kubeconfig; nvidia-smi on every GPU node). Read-only.
 */
public final class GpuSurvey {
    static final String NEXT = "Is the cluster up? Check it with: gpuctl verify";

    private GpuSurvey() {}

    /** Who holds which GPU and, when a window was sampled, how each GPU was used meanwhile. */
    public record Survey(GpuUsage.Report usage, Optional<GpuActivity.Report> activity) {}

    /** The kubelet's device checkpoint and the window's samples, as the node printed them; or why not. */
    record Sampled(String checkpoint, String samples, String problem) {}

    /**
     * The report from what the hosts answered to {@link GpuQuestions} (asked by the engine, all hosts at once), each
     * answer found by its key. The master must have answered (a {@link WorkloadException} naming it otherwise); a GPU
     * node that was not reached or whose nvidia-smi failed is a line of the report, not an exception.
     *
     * @param answer      a question's whole answer by its key; empty when its host was not reached
     * @param unreachable hosts that were not reached, with why
     * @param window      how long the GPUs were sampled (ZERO: not sampled)
     */
    public static Survey of(Inventory inv, Function<String, Optional<ExecResult>> answer, Map<String, String> unreachable, Duration window) {
        String master = inv.master().name();
        if (unreachable.containsKey(master)) throw new WorkloadException(unreachable.get(master));
        String nodes = fields(master, GpuQuestions.NODES, answer.apply(GpuQuestions.NODES_KEY), KubeFields.NODES);
        String pods = fields(master, GpuQuestions.PODS, answer.apply(GpuQuestions.PODS_KEY), KubeFields.GPU_PODS);
        List<Node> gpuNodes = inv.nodes().stream().filter(Node::gpu).toList();
        Map<String, GpuUsage.Smi> smi = new LinkedHashMap<>();
        for (Node n : gpuNodes) {
            String why = unreachable.get(n.name());
            smi.put(n.name(), why != null ? GpuUsage.Smi.failed(why, false)
                : answer.apply(GpuQuestions.smiKey(n.name())).map(r -> smi(n.name(), r))
                    .orElse(GpuUsage.Smi.failed(n.name() + ": nvidia-smi was not asked", false)));
        }
        try {
            GpuUsage.Report usage = GpuUsage.of(gpuNodes.stream().map(Node::name).toList(), nodes, pods, smi);
            if (window.isZero()) return new Survey(usage, Optional.empty());
            Map<String, GpuActivity.PodRef> live = GpuActivity.livePods(pods);
            List<GpuActivity.NodeUse> uses = new ArrayList<>();
            for (Node n : gpuNodes) {
                String why = unreachable.get(n.name());
                Sampled s = why != null ? new Sampled("", "", why)
                    : sampled(n.name(), answer.apply(GpuQuestions.checkpointKey(n.name())), answer.apply(GpuQuestions.samplesKey(n.name())));
                uses.add(activity(n.name(), s, live));
            }
            return new Survey(usage, Optional.of(new GpuActivity.Report(window, uses)));
        } catch (IllegalArgumentException e) {
            throw new WorkloadException(master + ": " + e.getMessage());
        }
    }

    /** The master's answer to a kubectl question, as {@code -o json}-shaped list text; a failure names host and command. */
    static String fields(String master, String command, Optional<ExecResult> answer, KubeFields.Query query) {
        ExecResult r = answer.orElseThrow(() -> new WorkloadException(master + ": `" + command + "` was not asked. " + NEXT));
        if (!r.ok()) throw WorkloadException.failed(master, command, r, NEXT);
        try {
            return query.json(r.stdout());
        } catch (IllegalArgumentException e) {
            throw new WorkloadException(master + ": " + command + ": " + e.getMessage() + ". " + NEXT);
        }
    }

    /**
     * A node's checkpoint and samples: the sampling's exit 124 ({@code timeout} stopping it) or 0 is a window
     * sampled; 127 is nvidia-smi missing; anything else is the sampling's failure, in its words.
     */
    static Sampled sampled(String node, Optional<ExecResult> checkpoint, Optional<ExecResult> samples) {
        if (samples.isEmpty()) return new Sampled("", "", node + ": the GPUs were not sampled");
        ExecResult r = samples.get();
        if (r.exit() == 127) return new Sampled("", "", "nvidia-smi is not installed on " + node);
        if (r.exit() != 0 && r.exit() != 124) return new Sampled("", "", "sampling failed (exit " + r.exit() + "): " + r.tail(2));
        return new Sampled(checkpoint.map(ExecResult::stdout).orElse(""), r.stdout(), "");
    }

    /** One node's GPU use from what it printed; an unreadable checkpoint is the node's problem, not an exception. */
    static GpuActivity.NodeUse activity(String node, Sampled s, Map<String, GpuActivity.PodRef> pods) {
        if (!s.problem().isEmpty()) return GpuActivity.failed(node, s.problem());
        try {
            return GpuActivity.node(node, GpuSamples.parse(s.samples()), DeviceCheckpoint.parse(s.checkpoint()), pods);
        } catch (HostConfException e) {
            return GpuActivity.failed(node, e.getMessage());
        }
    }

    /** nvidia-smi's answer on one host; a failed or unreadable answer is the reason in words. */
    static GpuUsage.Smi smi(String host, ExecResult r) {
        if (r.exit() == 127) {
            return GpuUsage.Smi.failed("nvidia-smi is not installed: install the NVIDIA driver, or set gpu: false for "
                + host + " in the inventory", true);
        }
        try {
            NvidiaSmi.GpuScan scan = NvidiaSmi.parseQuery(r.stdout());
            if (!r.ok() && scan.problem().isEmpty()) {
                return GpuUsage.Smi.failed("nvidia-smi failed (exit " + r.exit() + "): " + r.tail(2), true);
            }
            return GpuUsage.Smi.answered(scan);
        } catch (HostConfException e) {
            return GpuUsage.Smi.failed(e.getMessage(), true);
        }
    }
}
