package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * {@code gpuctl repair}'s last remedy ({@link RepairRemedies} has the others): reboot the node, then wait on the master
 * until its kubelet reports a new boot and Ready.
 */
public final class RebootRemedy {
    private RebootRemedy() {}

    /** How long the check waits for the host to come back from its reboot. */
    static final Duration COME_BACK = Repair.COME_BACK;

    /**
     * Reboot {@code node} (it was on boot {@code bootId}) and wait, on the master, for its kubelet to report a new boot
     * and Ready (the runtime up: the kubelet is not Ready without it).
     */
    public static List<Phase> reboot(String node, String bootId) {
        return List.of(new Phase("reboot", "reboot " + node, List.of(new RebootStep(node, bootId)), false),
            new Phase("node-back", "wait for " + node + " to come back", List.of(new NodeBackStep(node, bootId)), false));
    }

    /** The boot id the node's kubelet reports, then its Ready condition's status. */
    static String nodeBoot(String node) {
        return Kube.kubectl("get node " + ShellWords.quote(node) + " -o 'jsonpath={.status.nodeInfo.bootID} {.status.conditions[?(@.type==\"Ready\")].status}'");
    }

    static final class RebootStep implements Step {
        private final String node;
        private final String bootId;

        RebootStep(String node, String bootId) {
            this.node = node;
            this.bootId = bootId;
        }

        @Override public String id() { return "reboot"; }
        @Override public String title() { return "reboot " + node; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().name().equals(node); }

        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.of("rebooted since the diagnosis (boot id other than " + bootId + ")", Repair.BOOT_ID,
                r -> r.ok() && !r.stdout().strip().isEmpty() && !r.stdout().strip().equals(bootId) ? Optional.empty()
                    : Optional.of("still on boot " + bootId)));
        }

        /** The reboot starts 2 s later, so that this command returns over ssh first. */
        @Override public List<Op> apply(HostContext ctx) {
            return List.of(Op.Run.of("reboot " + node + " (in 2 s)", "systemd-run --on-active=2 --timer-property=AccuracySec=100ms /bin/systemctl reboot"));
        }

        /** Proved from the master ({@link NodeBackStep}): the host is going down now. */
        @Override public List<Probe> verify(HostContext ctx) { return List.of(); }
    }

    static final class NodeBackStep implements Step {
        private final String node;
        private final String bootId;

        NodeBackStep(String node, String bootId) {
            this.node = node;
            this.bootId = bootId;
        }

        @Override public String id() { return "node-back"; }
        @Override public String title() { return node + " back: a new boot, its kubelet Ready"; }
        @Override public boolean readsCluster() { return true; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

        static Optional<String> problem(String answer, String node, String bootId) {
            String[] f = answer.strip().split("\\s+");
            if (f.length < 2 || f[0].isEmpty() || f[0].equals(bootId)) return Optional.of(node + " has not come back from its reboot yet (boot " + (f.length > 0 ? f[0] : "?") + ")");
            if (!f[1].equals("True")) return Optional.of(node + " rebooted (boot " + f[0] + ") but is not Ready (" + f[1] + ")");
            return Optional.empty();
        }

        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.of(node + " rebooted and Ready", nodeBoot(node), r -> r.ok() ? problem(r.stdout(), node, bootId)
                : Optional.of("kubectl failed (exit " + r.exit() + "): " + r.tail(2))).waitingUpTo(COME_BACK));
        }

        @Override public List<Op> apply(HostContext ctx) { return List.of(); }

        @Override public String whileWaiting(String problem, Duration upTo) { return "waiting up to " + upTo.toSeconds() + "s: " + problem; }
    }
}
