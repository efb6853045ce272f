package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpuctl.text.Json;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.KueueObjects;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Team;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Teams share the GPUs through Kueue: its manifest applied (server-side, as Kueue's installation guide does), its
 * controller and webhook waited for (the Deployment is Available only once the webhook serves), then the teams' objects
 * ({@link TeamQueues}) applied from one file named after its content, so that a changed quota is a new file whose
 * apply changes only the ClusterQueue that differs. A team removed from the inventory loses its ClusterQueue and
 * LocalQueue only while they hold no workload; otherwise the step fails and says what to do (its namespace, and the
 * jobs' records in it, stay).
 */
public final class KueueStep implements Step {
    static final Duration CONTROLLER_WAIT = Duration.ofMinutes(5);
    static final String NAMESPACE = "kueue-system";
    static final String DEPLOYMENT = "kueue-controller-manager";

    @Override public String id() { return "kueue"; }
    @Override public String title() { return "Kueue and the teams' queues"; }
    @Override public boolean readsCluster() { return true; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster() && !ctx.inventory().teams().isEmpty(); }

    static String path(HostContext ctx) { return Manifest.remotePath("kueue", ctx.inventory().kueue().manifest()); }

    /** The teams' objects as a multi-document manifest (each document JSON, which is YAML). */
    static String teamsManifest(Inventory inv) {
        StringBuilder sb = new StringBuilder();
        for (ObjectNode o : TeamQueues.objects(inv)) {
            try {
                sb.append("---\n").append(Json.MAPPER.writeValueAsString(o)).append('\n');
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        }
        return sb.toString();
    }

    static String teamsPath(Inventory inv) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(teamsManifest(inv).getBytes(StandardCharsets.UTF_8));
            return Kube.DIR + "/kueue-teams-" + HexFormat.of().formatHex(d, 0, 4) + ".yaml";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static Probe controllerAvailable() {
        return Probe.of("Kueue's controller and webhook available (deployment " + NAMESPACE + "/" + DEPLOYMENT + ")",
            Kube.kubectl("-n " + NAMESPACE + " get deployment " + DEPLOYMENT + " -o json"), r -> {
                if (!r.ok()) return Optional.of("deployment " + NAMESPACE + "/" + DEPLOYMENT + " not found (is Kueue's manifest applied?)");
                return available(r.stdout());
            });
    }

    /** Empty when the Deployment's Available condition is True; else what it says. */
    static Optional<String> available(String deploymentJson) {
        try {
            JsonNode d = Json.MAPPER.readTree(deploymentJson);
            for (JsonNode c : d.path("status").path("conditions")) {
                if (c.path("type").asText().equals("Available")) {
                    if (c.path("status").asText().equals("True")) return Optional.empty();
                    return Optional.of("not available: " + c.path("reason").asText() + " " + c.path("message").asText()
                        + " (kubectl -n " + NAMESPACE + " get pods; kubectl -n " + NAMESPACE + " logs deploy/" + DEPLOYMENT + ")");
                }
            }
            return Optional.of("no Available condition yet (kubectl -n " + NAMESPACE + " get pods)");
        } catch (JsonProcessingException e) {
            return Optional.of("kubectl printed no deployment JSON");
        }
    }

    static final String MUTATING_WEBHOOK = "kueue-mutating-webhook-configuration";
    static final String VALIDATING_WEBHOOK = "kueue-validating-webhook-configuration";

    /** Kueue's webhook is registered: without its configurations a queued Job is not suspended at creation. */
    static Probe webhookRegistered() {
        return Probe.of("Kueue's webhook registered (" + MUTATING_WEBHOOK + ", " + VALIDATING_WEBHOOK + ")",
            Kube.kubectl("get mutatingwebhookconfiguration/" + MUTATING_WEBHOOK + " validatingwebhookconfiguration/" + VALIDATING_WEBHOOK
                + " -o name"),
            r -> r.ok() ? Optional.empty() : Optional.of("not registered: " + r.tail(2).strip().replace('\n', ' ')
                + " (is Kueue's manifest applied? gpuctl bootstrap applies it)"));
    }

    /** Kueue's mutating webhook for batch/v1 Jobs: it suspends a Job that names a queue until Kueue admits it. */
    static final String JOB_WEBHOOK = "mjob.kb.io";
    static final String WEBHOOK_SERVICE = "kueue-webhook-service";
    /** The name of the Job that {@link #webhookServes} dry-runs; nothing of that name is ever stored. */
    static final String DRY_RUN_JOB = "gpuctl-kueue-webhook-check";

    /**
     * The Job that {@link #webhookServes} asks the API server to dry-run in {@code team}'s namespace: labelled with the
     * team's queue and without {@code suspend}, so that only Kueue's webhook can have suspended the answer.
     */
    static String dryRunJob(Team team) {
        ObjectNode job = Json.MAPPER.createObjectNode();
        job.put("apiVersion", "batch/v1").put("kind", "Job");
        ObjectNode md = job.putObject("metadata");
        md.put("name", DRY_RUN_JOB).put("namespace", team.namespace());
        md.putObject("labels").put(KueueObjects.MANAGED_BY, "gpuctl").put("kueue.x-k8s.io/queue-name", team.name());
        ObjectNode pod = job.putObject("spec").putObject("template").putObject("spec");
        pod.put("restartPolicy", "Never");
        pod.putArray("containers").addObject().put("name", "check").put("image", "registry.k8s.io/pause:3.10");
        try {
            return Json.MAPPER.writeValueAsString(job);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Kueue's webhook serves, not only is registered: a server-side dry-run create of a queued Job (nothing is stored)
     * goes through the API server's admission, which calls {@value #JOB_WEBHOOK} (failurePolicy Fail); the answer must
     * come back suspended, which only that webhook does. One kubectl process.
     */
    static Probe webhookServes(Inventory inv) {
        Team team = inv.teams().get(0);
        String command = "printf '%s\\n' " + ShellWords.quote(dryRunJob(team)) + " | "
            + Kube.kubectl("create --dry-run=server -o jsonpath='{.spec.suspend}' -f -");
        return Probe.of("Kueue's webhook " + JOB_WEBHOOK + " serves (a server-side dry-run of a queued Job in namespace "
            + team.namespace() + " comes back suspended)", command, KueueStep::webhookAnswer);
    }

    /** Empty when the dry-run Job came back suspended; else what is wrong and what to do. */
    static Optional<String> webhookAnswer(dev.gpuctl.remote.ExecResult r) {
        if (!r.ok()) {
            String err = r.tail(2).strip().replace('\n', ' ');
            return Optional.of("Kueue's webhook " + JOB_WEBHOOK + " does not answer: the API server refused the dry-run (kubectl exit "
                + r.exit() + "): " + err + ". While it does not, every Job create is refused (failurePolicy Fail), gpuctl job submit"
                + " included. Its Service " + NAMESPACE + "/" + WEBHOOK_SERVICE + " needs a ready kueue-controller-manager pod: kubectl -n "
                + NAMESPACE + " get pods,endpoints; kubectl -n " + NAMESPACE + " logs deploy/" + DEPLOYMENT + "; a Deployment scaled to 0"
                + " comes back with kubectl -n " + NAMESPACE + " scale deployment/" + DEPLOYMENT + " --replicas=1");
        }
        if (r.stdout().strip().equals("true")) return Optional.empty();
        return Optional.of("a server-side dry-run of a queued Job came back with suspend '" + r.stdout().strip() + "': Kueue's webhook "
            + JOB_WEBHOOK + " did not suspend it, so queued jobs would start before Kueue admits them (is " + MUTATING_WEBHOOK
            + " registered for batch/v1 Jobs? gpuctl bootstrap applies Kueue's manifest)");
    }

    /** Each team's ClusterQueue matches the inventory: its cohort, quota and borrowing limit per GPU model. */
    static List<Probe> queuesMatch(Inventory inv) {
        List<Probe> out = new ArrayList<>();
        for (Team t : inv.teams()) {
            KueueObjects.Queue q = TeamQueues.queue(t);
            out.add(Probe.of("team " + t.name() + "'s ClusterQueue matches the inventory", Kube.kubectl("get clusterqueue " + t.name() + " -o json"),
                r -> {
                    if (!r.ok()) return Optional.of("ClusterQueue " + t.name() + " not found (gpuctl bootstrap creates it)");
                    try {
                        List<String> diff = KueueObjects.differences(Json.MAPPER.readTree(r.stdout()), q, TeamQueues.cohort(inv), TeamQueues.flavors(inv));
                        return diff.isEmpty() ? Optional.empty() : Optional.of("ClusterQueue " + t.name() + ": " + String.join("; ", diff)
                            + " (gpuctl bootstrap applies the inventory's)");
                    } catch (JsonProcessingException e) {
                        return Optional.of("kubectl printed no ClusterQueue JSON");
                    }
                }));
        }
        return out;
    }

    /** Names of gpuctl's ClusterQueues, one per line (empty output: none). */
    static String managedQueues() {
        return Kube.kubectl("get clusterqueues -l " + KueueObjects.MANAGED_BY + "=gpuctl -o jsonpath='{.items[*].metadata.name}'");
    }

    static Probe noRemovedTeams(Inventory inv) {
        List<String> teams = inv.teams().stream().map(Team::name).toList();
        return Probe.of("no ClusterQueue of a team that left the inventory", managedQueues(), r -> {
            if (!r.ok()) return Optional.of("kubectl get clusterqueues failed (exit " + r.exit() + "): is Kueue installed?");
            List<String> gone = List.of(r.stdout().strip().split("\\s+")).stream().filter(s -> !s.isEmpty() && !teams.contains(s)).toList();
            return gone.isEmpty() ? Optional.empty() : Optional.of("ClusterQueue(s) of teams no longer in the inventory: " + String.join(", ", gone));
        });
    }

    /**
     * Removes the queues of teams that left the inventory, each only while its ClusterQueue holds no workload (pending or
     * admitted); one that does stops the command with what to do.
     */
    static String removeCommand(Inventory inv) {
        String keep = " " + inv.teams().stream().map(Team::name).collect(Collectors.joining(" ")) + " ";
        return "keep=" + ShellWords.quote(keep) + "; for cq in $(" + managedQueues() + "); do"
            + " case \"$keep\" in *\" $cq \"*) continue;; esac;"
            + " n=$(" + Kube.kubectl("get clusterqueue \"$cq\" -o jsonpath='{.status.pendingWorkloads} {.status.reservingWorkloads}'") + ") || exit 1;"
            + " set -- $n;"
            + " if [ \"${1:-0}\" != 0 ] || [ \"${2:-0}\" != 0 ]; then"
            + " echo \"team $cq is no longer in the inventory, but its ClusterQueue holds ${1:-0} pending and ${2:-0} admitted"
            + " workload(s): let its jobs finish or delete them (kubectl -n " + Team.NAMESPACE_PREFIX + "$cq delete jobs --all),"
            + " or put the team back, then run bootstrap again\" >&2; exit 1; fi;"
            + " " + Kube.kubectl("-n " + Team.NAMESPACE_PREFIX + "\"$cq\" delete localqueue \"$cq\" --ignore-not-found") + " || exit 1;"
            + " " + Kube.kubectl("delete clusterqueue \"$cq\"") + " || exit 1;"
            + " done";
    }

    @Override public List<Probe> check(HostContext ctx) {
        Inventory inv = ctx.inventory();
        return List.of(Manifest.applied("Kueue " + inv.kueue().version(), path(ctx)), controllerAvailable(),
            Manifest.applied("the teams' Kueue objects", teamsPath(inv)), noRemovedTeams(inv));
    }

    @Override public List<Op> apply(HostContext ctx) {
        Inventory inv = ctx.inventory();
        List<Op> ops = new ArrayList<>(Manifest.place("Kueue " + inv.kueue().version(), inv.kueue().manifest(), path(ctx), "", m -> m));
        ops.add(Op.Run.of("apply Kueue " + inv.kueue().version(), Kube.kubectl("apply --server-side -f " + path(ctx)))
            .unlessRight(Manifest.applied("Kueue " + inv.kueue().version(), path(ctx))));
        ops.add(Op.Run.of("wait (up to " + CONTROLLER_WAIT.toMinutes() + " min) for Kueue's controller and webhook",
            Kube.kubectl("-n " + NAMESPACE + " wait deployment/" + DEPLOYMENT + " --for=condition=available --timeout="
                + CONTROLLER_WAIT.toSeconds() + "s")).unlessRight(controllerAvailable()));
        String content = teamsManifest(inv);
        ops.add(Op.WriteFile.manifest("the teams' Kueue objects (" + inv.teams().size() + " team(s) in cohort " + TeamQueues.cohort(inv)
            + ")", teamsPath(inv), content, "0600", TeamQueues.objects(inv).stream()
                .map(o -> o.path("kind").asText() + "/" + o.path("metadata").path("name").asText()).toList()));
        ops.add(Op.Run.of("apply the teams' Kueue objects", Kube.kubectl("apply -f " + teamsPath(inv)))
            .unlessRight(Manifest.applied("the teams' Kueue objects", teamsPath(inv))));
        ops.add(Op.Run.of("remove the queues of teams no longer in the inventory (refused while they hold workloads)",
            removeCommand(inv)).unlessRight(noRemovedTeams(inv)));
        return ops;
    }

    @Override public List<Probe> verify(HostContext ctx) {
        List<Probe> probes = new ArrayList<>(check(ctx));
        probes.set(1, controllerAvailable().waitingUpTo(CONTROLLER_WAIT));
        probes.add(2, webhookRegistered());
        probes.add(3, webhookServes(ctx.inventory()));
        probes.addAll(queuesMatch(ctx.inventory()));
        return probes;
    }
}
