package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.KubeFields;
import dev.gpuctl.kube.KubeVersion;
import dev.gpuctl.kube.KubeadmConfig;
import dev.gpuctl.kube.UpgradePolicy.Options;
import dev.gpuctl.kube.UpgradePolicy;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.PackageSource;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.SkipAtTarget;
import dev.gpuctl.step.Step;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * {@code gpuctl upgrade} as phases on the one engine (docs/day2.md): a read-only preflight on every host (every
 * version read, the skew rules checked, every node Ready); the master (kubeadm to the target, {@code kubeadm upgrade
 * plan}, {@code kubeadm upgrade apply}, the copies of the admin.conf it renewed refreshed ({@link KubeconfigsStep}), then its own node drained, kubelet and kubectl to the target, restarted, Ready,
 * uncordoned); then the workers in batches (drained from the master, kubeadm, {@code kubeadm upgrade node}, kubelet and
 * kubectl on the worker, then waited for from the master until Ready with every GPU allocatable, and uncordoned).
 * Every step's check is "this node is already at the target", so a re-run skips what is done and resumes the rest.
 */
public final class UpgradeSteps {
    private UpgradeSteps() {}

    /** What the master's preflight reads of every node (kubectl jsonpath, one line a node). */
    static final KubeFields.Query NODES = new KubeFields.Query(List.of("metadata.name", "spec.unschedulable",
        "status.nodeInfo.kubeletVersion", "status.conditions", "status.allocatable"));

    /** One node as the API server has it. */
    public record NodeState(String name, Optional<KubeVersion> kubelet, boolean ready, boolean unschedulable, String gpus) {}

    /** The nodes in kubectl's answer to {@link #NODES}, by name. */
    public static Map<String, NodeState> nodeStates(String output) {
        Map<String, NodeState> out = new LinkedHashMap<>();
        for (JsonNode n : NODES.list(output).path("items")) {
            String name = n.path("metadata").path("name").asText();
            boolean ready = false;
            for (JsonNode c : n.path("status").path("conditions")) {
                if (c.path("type").asText().equals("Ready")) ready = c.path("status").asText().equals("True");
            }
            out.put(name, new NodeState(name, KubeVersion.parse(n.path("status").path("nodeInfo").path("kubeletVersion").asText("")),
                ready, n.path("spec").path("unschedulable").asText("false").equals("true"),
                n.path("status").path("allocatable").path("nvidia.com/gpu").asText("0")));
        }
        return out;
    }

    /**
     * Before any change: preflight (read-only, every host), then the control-plane backup into {@code backup} on the
     * master (skipped once the control plane is at the target); the backup is checked before {@link #masterPhases}.
     */
    public static List<Phase> preparePhases(Inventory inv, Options o, Path backup) {
        List<Phase> phases = new ArrayList<>();
        phases.add(new Phase("preflight", "upgrade preflight: every host, read-only", List.of(new UpgradePreflightStep(o.target())), true));
        Phase b = BackupStep.phase(backup);
        phases.add(new Phase(b.id(), b.title() + " (before the first change)", b.steps().stream()
            .map(s -> (Step) new SkipAtTarget(s, controlPlaneAt(o.target()), "the control plane is at " + o.target())).toList(), false));
        return phases;
    }

    /**
     * The master's part: kubeadm and the control plane, then the master's own node: drained (GPU-job aware,
     * {@link NodePhases}), kubelet and kubectl, back and uncordoned.
     */
    public static List<Phase> masterPhases(Inventory inv, Options o) {
        Node m = inv.master();
        String master = m.name();
        List<Phase> phases = new ArrayList<>();
        if (inv.highlyAvailable()) phases.add(apiServersReady(inv, m));
        phases.add(new Phase("control-plane", "control plane to " + o.target() + " (on " + master + ")",
            List.of(new KubeadmPackageStep(o.target(), Set.of(master)), new ControlPlaneUpgradeStep(o.target()), new KubeconfigsStep()), false));
        phases.add(drain(List.of(master), o));
        phases.add(new Phase("master-node", "node " + master + ": kubelet and kubectl to " + o.target() + ", back",
            List.of(new KubeletPackagesStep(o.target(), Set.of(master)), new NodeBackStep(m, o.target())), false));
        return phases;
    }

    /** The masters after the first, in inventory order: each upgraded with {@code kubeadm upgrade node}, one at a time. */
    public static List<Node> otherMasters(Inventory inv) {
        return inv.masters().stream().skip(1).toList();
    }

    /**
     * Another master's part (a control plane of several masters), after the first master's: the other masters' API
     * servers ready (refused otherwise: the VIP never without a healthy backend), then kubeadm to the target and
     * {@code kubeadm upgrade node} on it (its static pods moved to the version {@code kubeadm upgrade apply} uploaded),
     * then its node drained, kubelet and kubectl, back and uncordoned.
     */
    public static List<Phase> otherMasterPhases(Inventory inv, Options o, Node m) {
        String name = m.name();
        Phase d = drain(List.of(name), o);
        return List.of(apiServersReady(inv, m),
            new Phase("control-plane-node", "control plane instance on " + name + " to " + o.target() + " (kubeadm upgrade node)",
                List.of(new KubeadmPackageStep(o.target(), Set.of(name)), new ControlPlaneNodeUpgradeStep(o.target(), m)), false),
            new Phase(d.id(), d.title(), d.steps(), d.readOnly()),
            new Phase("master-node", "node " + name + ": kubelet and kubectl to " + o.target() + ", back",
                List.of(new KubeletPackagesStep(o.target(), Set.of(name)), new NodeBackStep(m, o.target())), false));
    }

    /**
     * Read-only, before {@code m} goes down: every other master's API server answers {@code /readyz}. Refused otherwise,
     * so that the VIP is never left without a ready backend while {@code m}'s API server restarts.
     */
    public static Phase apiServersReady(Inventory inv, Node m) {
        return new Phase("api-servers-ready", "the other masters' API servers ready before " + m.name() + " goes down",
            List.of(new ApiServersReadyStep(m, inv.masters().stream().filter(n -> !n.name().equals(m.name())).toList())), true);
    }

    /** The workers in batches of {@link Options#batchSize}, in inventory order. */
    public static List<List<String>> batches(Inventory inv, Options o) {
        return UpgradePolicy.batches(inv.nodes().stream().filter(n -> !n.isMaster()).map(Node::name).toList(), o.batchSize());
    }

    /**
     * One batch of workers: drained from the master (GPU-job aware, skipped when every node of the batch is at the
     * target), kubeadm, kubeadm upgrade node, kubelet and kubectl on the workers, then back (Ready, GPUs, uncordoned).
     */
    public static List<Phase> batchPhases(Inventory inv, Options o, List<String> batch, String label) {
        List<Node> nodes = batch.stream().map(n -> inv.node(n).orElseThrow()).toList();
        Phase d = drain(batch, o);
        return List.of(new Phase(d.id(), label + ": " + d.title(), d.steps(), false),
            new Phase("workers", label + ": kubeadm, kubeadm upgrade node, kubelet and kubectl to " + o.target(),
                List.of(new KubeadmPackageStep(o.target(), Set.copyOf(batch)), new KubeletPackagesStep(o.target(), Set.copyOf(batch))), false),
            new Phase("back", label + ": Ready with every GPU, uncordoned", nodes.stream().map(n -> (Step) new NodeBackStep(n, o.target())).toList(), false));
    }

    /** Every phase of the upgrade, for the plan: preflight and backup, the first master's, the other masters', then each batch's. */
    public static List<Phase> phases(Inventory inv, Options o, Path backup) {
        List<Phase> phases = new ArrayList<>(preparePhases(inv, o, backup));
        phases.addAll(masterPhases(inv, o));
        for (Node m : otherMasters(inv)) phases.addAll(otherMasterPhases(inv, o, m));
        List<List<String>> batches = batches(inv, o);
        for (int i = 0; i < batches.size(); i++) phases.addAll(batchPhases(inv, o, batches.get(i), label(i, batches)));
        return phases;
    }

    public static String label(int i, List<List<String>> batches) {
        return "batch " + (i + 1) + "/" + batches.size() + " (" + String.join(", ", batches.get(i)) + ")";
    }

    /** {@link NodePhases#drain} of these nodes, each of its steps skipped when every one of the nodes is at the target already. */
    static Phase drain(List<String> nodes, Options o) {
        Phase d = NodePhases.drain(nodes, o.drainTimeout(), o.force());
        String cond = nodesAt(nodes, o.target());
        return new Phase(d.id(), d.title(), d.steps().stream()
            .map(s -> (Step) new SkipAtTarget(s, cond, String.join(", ", nodes) + " at " + o.target())).toList(), d.readOnly());
    }

    /**
     * Exit 0 on the master when every one of these nodes' kubelets reports the target to the API server. (All nodes are
     * listed and picked by name: {@code kubectl get nodes NAME} of one name answers the object, not a list.)
     */
    static String nodesAt(List<String> nodes, KubeVersion t) {
        return Kube.kubectl("get nodes -o 'jsonpath={range .items[*]}{.metadata.name} {.status.nodeInfo.kubeletVersion}{\"\\n\"}{end}'")
            + " | awk -v want=" + ShellWords.quote(String.join(" ", nodes)) + " 'BEGIN { n = split(want, a, \" \"); for (i = 1; i <= n; i++) w[a[i]] = 1 }"
            + " ($1 in w) && $2 ~ /^" + versionRegex(t) + "/ { c++ } END { exit !(c == n) }'";
    }

    /** Exit 0 on the master when kube-apiserver's manifest names the target. */
    static String controlPlaneAt(KubeVersion t) {
        return "sed -n 's/^[[:space:]]*image:[[:space:]]*//p' " + PreflightStep.APISERVER_MANIFEST + " | grep -q 'kube-apiserver:'"
            + " && sed -n 's/^[[:space:]]*image:[[:space:]]*.*kube-apiserver://p' " + PreflightStep.APISERVER_MANIFEST
            + " | grep -qE '^" + versionRegex(t).replace("$", "") + (t.hasPatch() ? "($|@)" : "") + "'";
    }

    // ------------------------------------------------------------------ shell pieces

    /** An extended regex for a version string at the target: "v1\.35\." (a minor) or "v1\.35\.1$" (a patch). */
    static String versionRegex(KubeVersion t) {
        return "v" + t.major() + "\\." + t.minor() + "\\." + (t.hasPatch() ? t.patch() + "$" : "");
    }

    /** Exit 0 when this host's kubelet binary is at the target. */
    static String kubeletAt(KubeVersion t) {
        return "kubelet --version 2>/dev/null | awk '{print $2}' | grep -qE '" + versionRegex(t) + "'";
    }

    /**
     * apt-get install of these packages at the target: the newest of its minor (the pin chooses it), or the patch named
     * (its package version looked up with apt-cache madison). Held packages are changed on purpose.
     */
    static String install(List<String> packages, KubeVersion t) {
        StringBuilder sb = new StringBuilder("export DEBIAN_FRONTEND=noninteractive; apt-get update -q || exit 1; ");
        List<String> args = new ArrayList<>();
        for (String p : packages) {
            if (!t.hasPatch()) { args.add(p); continue; }
            String var = p.replace("-", "_") + "_v";
            sb.append(var).append("=$(apt-cache madison ").append(p).append(" | awk '$3 ~ /^").append(t.major()).append("\\.").append(t.minor())
                .append("\\.").append(t.patch()).append("-/ {print $3; exit}'); [ -n \"$").append(var).append("\" ] || { echo '")
                .append(p).append(' ').append(t).append(" is not in the package source (apt-cache madison ").append(p).append(")' >&2; exit 1; }; ");
            args.add(p + "=\"$" + var + "\"");
        }
        return sb.append("apt-get install -y -q --no-install-recommends --allow-change-held-packages ").append(String.join(" ", args)).toString();
    }

    /** The package source (upstream: the new minor's repository and key) and the pin, moved to the target's minor. */
    static List<Op> source(HostContext ctx, KubeVersion t) {
        String minor = t.minorString();
        List<Op> ops = new ArrayList<>();
        if (ctx.cluster().packages() == PackageSource.UPSTREAM) {
            ops.add(Upstream.prerequisites());
            ops.add(Upstream.kubernetesKey(minor));
            ops.add(Op.WriteFile.of("Kubernetes " + minor + " apt repository", KubePackagesStep.REPO_FILE, Upstream.kubernetesRepoLine(minor), "0644"));
        }
        ops.add(Op.WriteFile.of("pin the Kubernetes minor " + minor, KubePackagesStep.PIN_FILE, KubePackagesStep.pin(minor), "0644"));
        return ops;
    }

    static Op.Run hold() {
        return Op.Run.of("hold kubelet, kubeadm, kubectl", "apt-mark hold " + String.join(" ", KubePackagesStep.PACKAGES) + " >/dev/null")
            .journalling(Sh.journalHold(String.join(" ", KubePackagesStep.PACKAGES)))
            .unless("test \"$(apt-mark showhold | grep -cxE '" + String.join("|", KubePackagesStep.PACKAGES) + "')\" = " + KubePackagesStep.PACKAGES.size());
    }

    // ------------------------------------------------------------------ verdicts (the steps: one file each, UpgradePreflightStep … NodeBackStep)

    /** The master's preflight verdict: the skew rules over the API server and every kubelet, every inventory node Ready. */
    public static Optional<String> judge(Inventory inv, KubeVersion target, Optional<KubeVersion> controlPlane, Map<String, NodeState> nodes) {
        if (controlPlane.isEmpty()) return Optional.of("cannot read kube-apiserver's version from " + PreflightStep.APISERVER_MANIFEST);
        List<String> problems = new ArrayList<>();
        Map<String, KubeVersion> kubelets = new LinkedHashMap<>();
        for (Node n : inv.nodes()) {
            NodeState s = nodes.get(n.name());
            if (s == null) { problems.add(n.name() + " is not a node of the cluster (kubectl get nodes): join it first (gpuctl bootstrap)"); continue; }
            s.kubelet().ifPresent(k -> kubelets.put(n.name(), k));
            if (!s.ready()) problems.add(n.name() + " is not Ready: an upgrade starts from a healthy cluster (gpuctl verify says why)");
        }
        problems.addAll(0, UpgradePolicy.refusals(controlPlane.get(), kubelets, target));
        return problems.isEmpty() ? Optional.empty() : Optional.of(String.join("\n", problems));
    }

    /** kube-apiserver's image in this master's static-pod manifest at the target. */
    static Probe manifestAt(KubeVersion target) {
        return Probe.of("kube-apiserver's image at " + target + " (" + PreflightStep.APISERVER_MANIFEST + ")",
            "sed -n 's/^[[:space:]]*image:[[:space:]]*//p' " + PreflightStep.APISERVER_MANIFEST,
            r -> PreflightStep.imageVersion(r.stdout()).flatMap(KubeVersion::parse).filter(target::metBy).isPresent() ? Optional.empty()
                : Optional.of("kube-apiserver runs " + PreflightStep.imageVersion(r.stdout()).orElse("(unknown)") + ", not " + target));
    }

    /**
     * This master's own API server (not the endpoint: behind a VIP another master may still run the old version)
     * answers at the target, waited for up to 2 minutes while the kubelet restarts it.
     */
    static Probe ownApiServerAt(Node master, KubeVersion target) {
        return Probe.of("the API server on " + master.name() + " answers at " + target + " (kubectl version)",
            Kube.kubectl("--server=" + ShellWords.quote(apiServerUrl(master)) + " version -o json"),
            r -> serverVersion(r.stdout()).filter(target::metBy).isPresent() ? Optional.empty()
                : Optional.of("the API server on " + master.name() + " does not answer at " + target + ": " + r.tail(2)))
            .waitingUpTo(Duration.ofMinutes(2));
    }

    /** The serverVersion's gitVersion of {@code kubectl version -o json}. */
    public static Optional<KubeVersion> serverVersion(String json) {
        var m = Pattern.compile("\"serverVersion\"[^}]*?\"gitVersion\"\\s*:\\s*\"([^\"]+)\"").matcher(json);
        return m.find() ? KubeVersion.parse(m.group(1)) : Optional.empty();
    }

    /** A master's own API server: https://NODE_IP:6443 (its address when the inventory gives no IP). */
    public static String apiServerUrl(Node master) {
        return "https://" + KubeadmConfig.hostForUrl(HostContext.literalNodeIp(master).orElse(master.address())) + ":"
            + dev.gpuctl.inventory.ControlPlaneEndpoint.API_SERVER_PORT;
    }

    /**
     * Why {@code master} must not go down yet: {@code other}'s API server did not answer /readyz with 200 (curl's exit
     * and the HTTP code it printed); empty when it did.
     */
    public static Optional<String> notReady(Node master, Node other, int exit, String out) {
        if (exit == 0 && out.strip().equals("200")) return Optional.empty();
        String why = exit != 0 ? "no answer (curl exit " + exit + ")" : "HTTP " + (out.isBlank() ? "(none)" : out.strip());
        return Optional.of(other.name() + "'s API server is not ready (" + apiServerUrl(other) + "/readyz: " + why + "): "
            + master.name() + " is not taken down while another master's API server is not ready, so the VIP keeps a healthy"
            + " backend; bring " + other.name() + " back (gpuctl verify says why) and run upgrade again");
    }

    /** Why a node is not back yet: its kubelet's version, Ready, its GPUs (when it has them), cordoned. */
    public static Optional<String> back(NodeState s, KubeVersion target, Optional<String> gpuCount) {
        List<String> wrong = new ArrayList<>();
        if (s.kubelet().filter(target::metBy).isEmpty()) wrong.add("kubelet " + s.kubelet().map(Object::toString).orElse("(unknown)"));
        if (!s.ready()) wrong.add("not Ready");
        gpuCount.filter(c -> !c.equals(s.gpus())).ifPresent(c -> wrong.add("allocatable nvidia.com/gpu " + s.gpus() + " of " + c));
        if (s.unschedulable()) wrong.add("cordoned");
        return wrong.isEmpty() ? Optional.empty() : Optional.of(s.name() + ": " + String.join(", ", wrong));
    }
}
