package dev.gpuctl.engine;

import dev.gpuctl.inventory.ControlPlaneEndpoint;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Nfs;
import dev.gpuctl.inventory.NfsExport;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.SshSettings;
import dev.gpuctl.net.Cidr;
import java.util.List;
import java.util.Map;

/**
 * Renders a {@link Plan} for people. The summary: the cluster, the CIDR check, NFS and GPU sharing, hosts × steps, what
 * each step changes, how each host is reached and the warnings ({@code connection: local} first, above everything).
 * The details add, per phase and host, each step's commands and files.
 */
public final class PlanText {
    private PlanText() {}

    /**
     * The masters and the controlPlaneEndpoint that kubeadm init is given (every cluster gets one, so that it can grow),
     * with what serves it.
     */
    static String controlPlane(Inventory inv) {
        List<String> masters = inv.masters().stream().map(Node::name).toList();
        ControlPlaneEndpoint e = inv.controlPlaneEndpoint();
        String served = switch (e.kind()) {
            case MASTER -> "the master's own API server; masters can be added later";
            case ADDRESS -> "your load balancer, in front of each master's API server on " + ControlPlaneEndpoint.API_SERVER_PORT;
            case VIP -> "a virtual IP kept by keepalived (VRRP) on the masters, haproxy there on " + e.port()
                + " forwarding to each master's API server on " + ControlPlaneEndpoint.API_SERVER_PORT;
        };
        String who = masters.size() == 1 ? "1 master (" + masters.get(0) + ")"
            : masters.size() + " masters (" + masters.get(0) + " initialises the cluster, " + String.join(", ", masters.subList(1, masters.size()))
                + " join it as control-plane nodes; etcd survives " + (masters.size() - 1) / 2 + " lost)";
        String line = "Control plane: " + who + ", endpoint " + e.hostPort() + " (" + served + ")\n";
        if (masters.size() > 1) {
            line += "  every command handles several masters (restore: every member from one snapshot); a lost master comes back with bootstrap\n";
        }
        return line;
    }

    /** The plan with its details, without what only the inventory says; see {@link #render(Plan, Inventory, List, boolean)}. */
    public static String render(Plan plan) { return render(plan, null, List.of(), true); }

    /** The summary and the details, with the inventory's warnings only. */
    public static String render(Plan plan, Inventory inv) { return render(plan, inv, List.of(), true); }

    /**
     * The plan for people.
     *
     * @param inv      the inventory (NFS exports, GPU sharing, connections, warnings); null: the plan alone
     * @param warnings what else to warn about (a missing identity file at its FILE:LINE:COLUMN), after each
     *                 {@code connection: local} node and before ~/.ssh/config's notes
     * @param details  also every phase, host, step, command and file; otherwise a line saying how to see them
     */
    public static String render(Plan plan, Inventory inv, List<String> warnings, boolean details) {
        StringBuilder sb = new StringBuilder();
        List<String> all = inv == null ? List.copyOf(warnings) : PlanConnections.warnings(inv, warnings);
        if (inv != null) {
            // before anything else: this machine itself is one of the hosts every root step runs on
            inv.nodes().stream().filter(Node::isLocal).forEach(n -> sb.append("WARNING: ").append(PlanConnections.localWarning(n)).append('\n'));
        }
        sb.append("Plan for cluster ").append(plan.cluster()).append(": ").append(plan.summary()).append('\n');
        if (plan.cidrConflicts().isEmpty()) {
            sb.append("CIDR check: no overlaps between podCidr, serviceCidr, node addresses and siteNetworks\n");
        } else {
            sb.append("CIDR check FAILED:\n");
            plan.cidrConflicts().forEach(c -> sb.append("  ").append(c).append('\n'));
        }
        if (inv != null) sb.append(controlPlane(inv));
        if (inv != null) inv.nfs().ifPresent(nfs -> sb.append(nfsAccess(nfs)));
        if (inv != null && inv.sharesGpus()) sb.append(gpuSharing(inv));
        if (inv != null && !inv.teams().isEmpty()) sb.append(teams(inv));
        sb.append('\n').append(PlanSummary.render(plan, name -> inv != null && inv.node(name).map(n -> n.gpu()).orElse(false)));
        sb.append('\n').append(PlanSummary.changes(plan));
        if (inv != null) sb.append(connections(inv));
        List<String> shown = inv == null ? all : all.stream().filter(w -> inv.nodes().stream().filter(Node::isLocal)
            .noneMatch(n -> PlanConnections.localWarning(n).equals(w))).toList();
        if (!shown.isEmpty()) {
            sb.append("\nWarnings:\n");
            shown.forEach(w -> sb.append("  warning: ").append(w).append('\n'));
        }
        if (!details) {
            sb.append("\nEvery phase, host, step, command and file: the same command with --details.\n");
            return sb.toString();
        }
        sb.append("\nDetails. Commands run as root on each host ({{name}}: a value learned earlier in the run).\n");
        if (ShellHelpers.needed(commands(plan))) {
            sb.append("Some commands call the change journal's shell functions (gpuctl defines them first in the same command);"
                + " to paste such a command, define them first:\n  ").append(ShellHelpers.PREAMBLE).append('\n');
        }
        int n = 0;
        for (Plan.PhasePlan phase : plan.phases()) {
            sb.append("\n== phase ").append(n++).append(": ").append(phase.title()).append(" ==\n");
            for (Plan.HostPlan host : phase.hosts()) {
                sb.append("\n[").append(host.name()).append(" ").append(host.address()).append(" ").append(host.role()).append("]").append(Cidr.parseAddress(host.address()).isEmpty() ? " (address is a name: the node IP, unless nodeIp gives it, is resolved at preflight)" : "").append("\n");
                for (Plan.StepPlan step : host.steps()) {
                    sb.append("  step ").append(step.id()).append(": ").append(step.title()).append('\n');
                    if (!step.prepareOnMaster().isEmpty()) {
                        sb.append("    first, once on the master:\n");
                        ops(sb, step.prepareOnMaster());
                    }
                    sb.append(phase.readOnly() ? "    checks:\n" : "    check (read-only; all right = nothing to do):\n");
                    probes(sb, step.check());
                    if (!step.apply().isEmpty()) {
                        sb.append("    apply:\n");
                        ops(sb, step.apply());
                    }
                    if (!step.verify().isEmpty()) {
                        sb.append("    verify:\n");
                        probes(sb, step.verify());
                    }
                }
            }
        }
        return sb.toString();
    }

    /** Every shell command the details show (probes, run and capture ops, skip-when commands), in plan order. */
    public static List<String> commands(Plan plan) {
        List<String> out = new java.util.ArrayList<>();
        for (Plan.PhasePlan phase : plan.phases()) {
            for (Plan.HostPlan host : phase.hosts()) {
                for (Plan.StepPlan step : host.steps()) {
                    for (var list : List.of(step.prepareOnMaster(), step.check(), step.apply(), step.verify())) {
                        for (var m : list) {
                            if (m.containsKey("command")) out.add(m.get("command"));
                            if (m.containsKey("skipWhen")) out.add(m.get("skipWhen"));
                        }
                    }
                }
            }
        }
        return out;
    }

    /**
     * One line per export: read-only or read-write to the cluster's nodes, and whether root on a node acts as root
     * on it (rootSquash: false, {@code no_root_squash}) or is mapped to nobody.
     */
    static String nfsAccess(Nfs nfs) {
        if (nfs.external()) {
            StringBuilder sb = new StringBuilder("NFS server ").append(nfs.server()).append(" is not a node: gpuctl does not configure it;"
                + " the workers get nfs-common and mount each export for a test (its own export options decide who may):\n");
            for (NfsExport e : nfs.exports()) {
                sb.append("  ").append(e.path()).append(": expected ").append(e.readOnly() ? "read-only" : "read-write").append('\n');
            }
            return sb.toString();
        }
        StringBuilder sb = new StringBuilder("NFS exports of ").append(nfs.server()).append(" (to the cluster's nodes only):\n");
        for (NfsExport e : nfs.exports()) {
            sb.append("  ").append(e.path()).append(": ").append(e.readOnly() ? "read-only" : "read-write").append(", ")
                .append(e.rootSquash() ? "root on a node is mapped to nobody (root_squash)"
                    : "ROOT ON EVERY NODE ACTS AS ROOT HERE (no_root_squash)").append('\n');
            if (!e.rootSquash()) {
                sb.append("  warning: ").append(e.path()).append(" has rootSquash: false: any pod running as root on any node can"
                    + " plant root-owned setuid files in it; remove rootSquash: false unless every node and image is trusted\n");
            }
        }
        return sb.toString();
    }

    /** Each team's GPU quota per model, whether it may borrow, and its members. */
    static String teams(Inventory inv) {
        StringBuilder sb = new StringBuilder("Teams (Kueue queues in one cohort; an idle quota is lent, and reclaimed by preempting the borrower):\n");
        for (var t : inv.teams()) {
            sb.append("  ").append(t.name()).append(" (namespace ").append(t.namespace()).append("): ");
            sb.append(String.join(", ", t.gpus().entrySet().stream().map(e -> e.getValue() + " GPU" + (e.getValue() == 1 ? "" : "s")
                + (e.getKey().equals(dev.gpuctl.inventory.Team.DEFAULT_MODEL) ? "" : " " + e.getKey())).toList()));
            sb.append(t.borrowingLimit().isEmpty() ? ", may borrow idle GPUs"
                : t.mayBorrow() ? ", may borrow up to " + t.borrowingLimit().getAsInt() : ", never borrows");
            if (!t.members().isEmpty()) sb.append("; members ").append(String.join(", ", t.members()));
            sb.append('\n');
        }
        return sb.toString();
    }

    /** Each GPU node's sharing, and what sharing does not isolate. */
    static String gpuSharing(Inventory inv) {
        StringBuilder sb = new StringBuilder("GPU sharing (each shared GPU is advertised replicas times as nvidia.com/gpu):\n");
        for (var n : inv.nodes()) {
            if (n.gpu()) sb.append("  ").append(n.name()).append(": ").append(inv.sharing(n)).append('\n');
        }
        if (inv.nodes().stream().anyMatch(n -> inv.sharing(n).shared())) {
            sb.append("  time-slicing and MPS share a GPU's time, not its memory or its faults: a pod can use all of a GPU's"
                + " memory, and one pod's fault can end the others' work on that GPU\n");
        }
        if (inv.nodes().stream().anyMatch(n -> inv.sharing(n).mig().isPresent())) {
            sb.append("  MIG cuts each GPU into instances with their own memory, cache and compute (single: each advertised as"
                + " nvidia.com/gpu; mixed: as nvidia.com/mig-PROFILE); turning MIG mode on needs the GPUs idle, and on some"
                + " systems a reboot\n");
        }
        return sb.toString();
    }

    private static void probes(StringBuilder sb, List<Map<String, String>> probes) {
        for (var p : probes) {
            sb.append("      - ").append(p.get("what"));
            if (p.containsKey("waitUpTo")) sb.append(" (waits up to ").append(p.get("waitUpTo"))
                .append(p.containsKey("waitedAt") ? ", after the phase's later steps on this host" : "").append(')');
            sb.append('\n');
            sb.append("          $ ").append(p.get("command")).append('\n');
        }
    }

    private static void ops(StringBuilder sb, List<Map<String, String>> ops) {
        for (var op : ops) {
            sb.append("      - ").append(op.get("what")).append('\n');
            switch (op.get("kind")) {
                case "run" -> {
                    if (op.containsKey("skipWhenRight")) {
                        sb.append("          skip when right: ").append(op.get("skipWhenRight")).append(" (the check above)\n");
                    } else if (op.containsKey("skipWhen")) {
                        sb.append("          skip when: $ ").append(op.get("skipWhen")).append('\n');
                    }
                    if (op.containsKey("onlyIfChanged")) sb.append("          only if changed: ").append(op.get("onlyIfChanged")).append('\n');
                    if (op.containsKey("journal")) sb.append("          journalled first: ").append(op.get("journal")).append('\n');
                    sb.append("          $ ").append(op.get("command")).append('\n');
                }
                case "wait" -> {
                    sb.append("          wait up to ").append(op.get("waitUpTo")).append(", asking every 2 s (sooner at first), until: ").append(op.get("until")).append('\n');
                    sb.append("          $ ").append(op.get("command")).append('\n');
                    if (op.containsKey("orElse")) sb.append("          when it gives up: $ ").append(op.get("orElse")).append('\n');
                }
                case "write" -> {
                    if (op.containsKey("skipWhen")) sb.append("          skip when: $ ").append(op.get("skipWhen")).append('\n');
                    sb.append("          write ").append(op.get("path")).append(" (").append(op.get("mode")).append(' ')
                        .append(op.get("owner")).append("; backup once, atomic)");
                    if (op.containsKey("objects")) {
                        String[] objects = op.get("objects").split("\n");
                        sb.append(": a manifest of ").append(objects.length).append(objects.length == 1 ? " object" : " objects")
                            .append(", sha256 ").append(op.get("sha256")).append(" (its text is not shown):\n");
                        for (String o : objects) sb.append("            ").append(o).append('\n');
                    } else {
                        sb.append(":\n");
                        block(sb, op.get("content"));
                    }
                }
                case "edit" -> {
                    sb.append("          edit ").append(op.get("path")).append(" on the host (backup once, atomic): ")
                        .append(op.get("rule")).append('\n');
                    if (op.containsKey("contentWhenAbsent")) {
                        sb.append("          when the file is absent or empty, it writes:\n");
                        block(sb, op.get("contentWhenAbsent"));
                    }
                }
                case "fetch" -> {
                    if (op.containsKey("rule")) {
                        sb.append("          rebuild ").append(op.get("path")).append(" into ").append(op.get("to")).append(" (0600): ")
                            .append(op.get("rule")).append("\n");
                    } else {
                        sb.append("          copy ").append(op.get("path")).append(" to ").append(op.get("to")).append(" (0600)\n");
                    }
                }
                case "capture" -> {
                    sb.append("          $ ").append(op.get("command")).append('\n');
                    sb.append("          (output kept for later steps").append("true".equals(op.get("secret")) ? ", masked in all output and logs" : "").append(")\n");
                }
                default -> throw new IllegalStateException(op.get("kind"));
            }
        }
    }

    private static void block(StringBuilder sb, String content) {
        String body = content.endsWith("\n") ? content.substring(0, content.length() - 1) : content;
        for (String line : body.split("\n", -1)) sb.append("          | ").append(line).append('\n');
        if (!content.endsWith("\n")) sb.append("          (no newline at end of file)\n");
    }

    /** {@link PlanConnections#keySource}. */
    static String keySource(SshSettings s) { return PlanConnections.keySource(s); }

    /**
     * How gpuctl reaches each host, as the inventory (over ~/.ssh/config, over the defaults) resolved it: user, root
     * or sudo, address and port, the identity file, the bastion; or "local".
     */
    static String connections(Inventory inv) {
        StringBuilder sb = new StringBuilder("\nConnections (the inventory, then ~/.ssh/config, then the defaults):\n");
        int width = inv.nodes().stream().mapToInt(n -> n.name().length()).max().orElse(0);
        for (Node n : inv.nodes()) {
            sb.append("  ").append(n.name()).append(" ".repeat(width - n.name().length())).append("  ");
            if (n.connection().equals("local")) {
                sb.append("local: commands run on this machine\n");
                continue;
            }
            var s = n.ssh();
            String host = n.address().contains(":") ? "[" + n.address() + "]" : n.address();
            sb.append("ssh ").append(s.user()).append('@').append(host).append(':').append(s.port())
                .append(s.isRoot() ? " (root)" : " (sudo -n)").append(", ").append(keySource(s));
            s.bastion().ifPresent(b -> sb.append(", via ").append(b.user()).append('@').append(b.address()).append(':').append(b.port()));
            sb.append('\n');
        }
        return sb.toString();
    }
}
