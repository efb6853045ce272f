package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The kueue step: what it applies in which order, what a quota edit changes, how removed teams are judged. */
class KueueStepTest {
    static Inventory inv(String teams, String kueue) {
        return InventoryLoader.parse("inv.yaml", "cluster: { name: lab, kubernetesVersion: \"1.35\" }\n"
            + "nodes:\n  - { name: m, address: 10.0.0.1, role: master }\n"
            + "  - { name: w1, address: 10.0.0.2, role: worker, gpus: 2 }\n  - { name: w2, address: 10.0.0.3, role: worker, gpus: 2 }\n"
            + teams + kueue, Path.of("/tmp"), Map.of("HOME", "/root"));
    }

    static final String TEAMS = "teams:\n  - { name: a, gpus: 2 }\n  - { name: b, gpus: 2 }\n";

    @Test void onlyOnTheMasterAndOnlyWithTeams() {
        Inventory with = inv(TEAMS, "");
        assertTrue(new KueueStep().runsOn(new HostContext(with, with.master())));
        assertFalse(new KueueStep().runsOn(new HostContext(with, with.node("w1").orElseThrow())));
        Inventory without = inv("", "");
        assertFalse(new KueueStep().runsOn(new HostContext(without, without.master())));
    }

    @Test void installWaitThenTheTeamsObjectsThenRemovals() {
        Inventory i = inv(TEAMS, "");
        List<Op> ops = new KueueStep().apply(new HostContext(i, i.master()));
        List<String> what = ops.stream().map(o -> o instanceof Op.Run r ? r.what() : o instanceof Op.WriteFile w ? w.what() : o.toString()).toList();
        int apply = what.indexOf("apply Kueue v0.14.8");
        int wait = what.indexOf("wait (up to 5 min) for Kueue's controller and webhook");
        int teams = what.indexOf("apply the teams' Kueue objects");
        assertTrue(apply >= 0 && apply < wait && wait < teams, what.toString());
        Op.Run run = (Op.Run) ops.get(apply);
        assertTrue(run.command().contains("apply --server-side -f /etc/kubernetes/gpuctl/kueue-"), run.command());
        assertTrue(((Op.Run) ops.get(wait)).command().contains("-n kueue-system wait deployment/kueue-controller-manager"
            + " --for=condition=available --timeout=300s"));
        assertTrue(what.get(0).startsWith("gpuctl's directory") || what.stream().anyMatch(w -> w.startsWith("fetch Kueue v0.14.8 from"
            + " https://github.com/kubernetes-sigs/kueue/releases/download/v0.14.8/manifests.yaml")), what.toString());
        assertTrue(KueueStep.teamsManifest(i).contains("\"kind\":\"ClusterQueue\""));
    }

    @Test void aLocalManifestIsUploaded() {
        Path file = Path.of("testbed/manifests/kueue-v0.14.8-testbed.yaml").toAbsolutePath();
        Inventory i = inv(TEAMS, "kueue: { manifest: " + file + " }\n");
        List<Op> ops = new KueueStep().apply(new HostContext(i, i.master()));
        assertTrue(ops.stream().anyMatch(o -> o instanceof Op.WriteFile w && w.content().contains("name: kueue-controller-manager")));
    }

    @Test void aQuotaEditIsANewTeamsFileThatDiffersInOneClusterQueueOnly() {
        Inventory before = inv(TEAMS, "");
        Inventory after = inv("teams:\n  - { name: a, gpus: 1 }\n  - { name: b, gpus: 2 }\n", "");
        assertNotEquals(KueueStep.teamsPath(before), KueueStep.teamsPath(after));
        assertEquals(KueueStep.teamsPath(before), KueueStep.teamsPath(inv(TEAMS, "")), "the same teams: the same file, nothing to apply");
        List<String> a = List.of(KueueStep.teamsManifest(before).split("\n"));
        List<String> b = List.of(KueueStep.teamsManifest(after).split("\n"));
        List<String> changed = a.stream().filter(l -> !b.contains(l)).toList();
        assertEquals(1, changed.size(), changed.toString());
        assertTrue(changed.get(0).contains("\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"a\""), changed.get(0));
    }

    @Test void removedTeamsAreFoundAndTheirRemovalIsGuarded() {
        Inventory i = inv(TEAMS, "");
        Probe p = KueueStep.noRemovedTeams(i);
        assertEquals(Optional.empty(), p.judge().apply(new ExecResult(0, "a b", ""), null));
        assertEquals(Optional.of("ClusterQueue(s) of teams no longer in the inventory: c"), p.judge().apply(new ExecResult(0, "a b c", ""), null));
        String cmd = KueueStep.removeCommand(i);
        assertTrue(cmd.startsWith("keep=' a b '; for cq in $("), cmd);
        assertTrue(cmd.contains("{.status.pendingWorkloads} {.status.reservingWorkloads}"), cmd);
        assertTrue(cmd.indexOf("exit 1; fi;") < cmd.indexOf("delete clusterqueue"), "refused before anything is deleted");
    }

    @Test void theControllerIsAvailableOnlyWhenItsDeploymentSaysSo() {
        assertEquals(Optional.empty(), KueueStep.available("{\"status\":{\"conditions\":[{\"type\":\"Available\",\"status\":\"True\"}]}}"));
        assertTrue(KueueStep.available("{\"status\":{\"conditions\":[{\"type\":\"Available\",\"status\":\"False\","
            + "\"reason\":\"MinimumReplicasUnavailable\",\"message\":\"Deployment does not have minimum availability.\"}]}}")
            .orElseThrow().startsWith("not available: MinimumReplicasUnavailable"));
    }

    @Test void verifyChecksTheWebhookAndEveryTeamsClusterQueue() {
        Inventory i = inv(TEAMS, "");
        List<String> what = new KueueStep().verify(new HostContext(i, i.master())).stream().map(Probe::what).toList();
        assertTrue(what.contains("Kueue's webhook registered (kueue-mutating-webhook-configuration, kueue-validating-webhook-configuration)"),
            what.toString());
        for (var t : i.teams()) assertTrue(what.contains("team " + t.name() + "'s ClusterQueue matches the inventory"), what.toString());
    }

    static final String NO_ENDPOINTS = "Error from server (InternalError): error when creating \"STDIN\": Internal error occurred: failed"
        + " calling webhook \"mjob.kb.io\": failed to call webhook: Post \"https://kueue-webhook-service.kueue-system.svc:443/mutate-batch-v1-job"
        + "?timeout=10s\": no endpoints available for service \"kueue-webhook-service\"\n";

    @Test void verifyAsksTheWebhookToServeADryRunOfAQueuedJob() throws Exception {
        Inventory i = inv(TEAMS, "");
        List<Probe> probes = new KueueStep().verify(new HostContext(i, i.master()));
        Probe serves = probes.stream().filter(p -> p.what().startsWith("Kueue's webhook mjob.kb.io serves")).findFirst().orElseThrow();
        assertTrue(serves.command().contains(" create --dry-run=server -o jsonpath='{.spec.suspend}' -f -"), serves.command());
        assertEquals(1, serves.command().split("kubectl ", -1).length - 1, "one kubectl process: " + serves.command());
        com.fasterxml.jackson.databind.JsonNode job = dev.gpuctl.text.Json.MAPPER.readTree(KueueStep.dryRunJob(i.teams().get(0)));
        assertEquals("team-a", job.path("metadata").path("namespace").asText());
        assertEquals("a", job.path("metadata").path("labels").path("kueue.x-k8s.io/queue-name").asText());
        assertTrue(job.path("spec").path("suspend").isMissingNode(), "only the webhook can suspend it");
        assertTrue(serves.command().contains(dev.gpuctl.text.ShellWords.quote(KueueStep.dryRunJob(i.teams().get(0)))), serves.command());

        assertEquals(Optional.empty(), serves.judge().apply(new ExecResult(0, "true", ""), null));
        String down = serves.judge().apply(new ExecResult(1, "", NO_ENDPOINTS), null).orElseThrow();
        assertTrue(down.startsWith("Kueue's webhook mjob.kb.io does not answer: the API server refused the dry-run (kubectl exit 1):"
            + " Error from server (InternalError)"), down);
        assertTrue(down.contains("no endpoints available for service \"kueue-webhook-service\""), down);
        assertTrue(down.contains("every Job create is refused (failurePolicy Fail)") && down.contains("kubectl -n kueue-system get pods,endpoints")
            && down.contains("kubectl -n kueue-system scale deployment/kueue-controller-manager --replicas=1"), down);
        String unmutated = serves.judge().apply(new ExecResult(0, "", ""), null).orElseThrow();
        assertTrue(unmutated.contains("came back with suspend '': Kueue's webhook mjob.kb.io did not suspend it"), unmutated);
    }

    @Test void theRegistrationIsOneKubectl() {
        String cmd = KueueStep.webhookRegistered().command();
        assertEquals(1, cmd.split("kubectl ", -1).length - 1, cmd);
        assertTrue(cmd.endsWith("get mutatingwebhookconfiguration/kueue-mutating-webhook-configuration"
            + " validatingwebhookconfiguration/kueue-validating-webhook-configuration -o name"), cmd);
    }
}
