package dev.gpuctl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StepFailure;
import dev.gpuctl.kube.KubeFields;
import dev.gpuctl.kube.KubectlPrints;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import dev.gpuctl.workflow.JobWorkflows;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** The job commands' workflows: what they ask on the master, when they change it, and how their answers are told. */
class JobWorkflowsTest {
    static final Inventory EXAMPLE = InventoryLoader.load(Path.of("inventory.example.yaml"));
    static final HostContext MASTER = new HostContext(EXAMPLE, EXAMPLE.master());

    static ExecResult ok(String out) { return new ExecResult(0, out, ""); }

    static Runner.Result ended(List<StepFailure> failures) {
        return new Runner.Result(false, failures, List.of(), Map.of(), Path.of("logs"));
    }

    /** Each probe's judge in order, as the engine asks them: the last one's problem says whether the change is wanted. */
    static Optional<String> judged(List<Probe> check, List<ExecResult> answers, Facts facts) {
        Optional<String> last = Optional.empty();
        for (int i = 0; i < check.size(); i++) last = check.get(i).judge().apply(answers.get(i), facts);
        return last;
    }

    static ExecResult jobs(String json) { return ok(KubectlPrints.fields(KubeFields.JOBS, json)); }

    @Test void submitUploadsThenAppliesOnlyWhenTheChecksPass() throws IOException {
        JobSpec spec = JobSpecLoader.load(Path.of("src/test/resources/jobs/detector-train.yaml"), EXAMPLE);
        JobWorkflows.Job<String> submit = JobWorkflows.submit(EXAMPLE, spec, "the manifest");
        Step step = submit.first().get(0).steps().get(0);
        assertTrue(step.runsOn(MASTER));
        List<Probe> check = step.check(MASTER);
        assertEquals(JobSubmit.checkAsks(spec), check.stream().map(Probe::command).toList());
        ExecResult nodes = ok(KubectlPrints.fields(KubeFields.NODES, GpuUsageTest.fixture("nodes.json")));
        Facts free = new Facts();
        assertEquals(Optional.of("job default/detector-train is to be submitted"), judged(check, List.of(nodes, jobs("{\"items\": []}")), free));
        List<Op> ops = step.apply(MASTER);
        assertEquals(JobSubmit.MKDIR, ((Op.Run) ops.get(0)).command());
        Op.Send send = (Op.Send) ops.get(1);
        assertEquals("/etc/kubernetes/gpuctl/jobs/default.detector-train.yaml 0600", send.remotePath() + " " + send.mode());
        assertEquals("the manifest", Files.readString(send.localPath()), "staged as the session starts");
        assertEquals("kubectl --kubeconfig=/etc/kubernetes/admin.conf apply -f /etc/kubernetes/gpuctl/jobs/default.detector-train.yaml",
            ((Op.Capture) ops.get(2)).command());
        Facts applied = new Facts();
        judged(check, List.of(nodes, jobs("{\"items\": []}")), applied);
        applied.put("job.said", "job.batch/detector-train created\n", false);
        JobWorkflows.Outcome<String> o = submit.outcome(ended(List.of()), applied);
        assertEquals(Optional.of("job.batch/detector-train created\n"), o.report());
        assertFalse(Files.exists(send.localPath()), "the staged manifest is removed once the session ended");

        Facts taken = new Facts();
        assertEquals(Optional.empty(), judged(check, List.of(nodes, jobs("{\"items\": [{\"metadata\": {\"name\": \"detector-train\"},"
            + " \"status\": {\"active\": 1}}]}")), taken), "a name taken: nothing is changed");
        WorkloadException refused = JobWorkflows.submit(EXAMPLE, spec, "m").outcome(ended(List.of()), taken).error().orElseThrow();
        assertTrue(refused.refused());
        assertTrue(refused.getMessage().startsWith("job default/detector-train already exists (running, 1 active)"), refused.getMessage());
    }

    @Test void aFailedApplyIsToldAsAFailedKubectlWithWhereTheManifestIs() throws IOException {
        JobSpec spec = JobSpecLoader.load(Path.of("src/test/resources/jobs/detector-train.yaml"), EXAMPLE);
        JobWorkflows.Job<String> submit = JobWorkflows.submit(EXAMPLE, spec, "m");
        List<Probe> check = submit.first().get(0).steps().get(0).check(MASTER);
        Facts facts = new Facts();
        judged(check, List.of(ok(KubectlPrints.fields(KubeFields.NODES, GpuUsageTest.fixture("nodes.json"))), jobs("{\"items\": []}")), facts);
        String apply = JobSubmit.applyCommand(spec);
        StepFailure f = new StepFailure("master", "job-submit", "apply the job's manifest", apply, 1, "error: admission denied\nline 2", "m.log");
        WorkloadException e = submit.outcome(ended(List.of(f)), facts).error().orElseThrow();
        assertFalse(e.refused());
        assertEquals("master: `" + apply + "` failed (exit 1):\n  error: admission denied\n  line 2\n"
            + "The job's manifest is /etc/kubernetes/gpuctl/jobs/default.detector-train.yaml on master.", e.getMessage());
    }

    @Test void deleteTakesOnlyAJobGpuctlSubmitted() {
        JobWorkflows.Job<String> delete = JobWorkflows.delete(EXAMPLE, "default", "train");
        Step step = delete.first().get(0).steps().get(0);
        List<Probe> check = step.check(MASTER);
        assertEquals(JobControl.existingAsks("default", "train"), check.stream().map(Probe::command).toList());
        ExecResult none = ok(KubectlPrints.fields(KubeFields.PODS, "{\"items\": []}"));
        Facts absent = new Facts();
        assertEquals(Optional.empty(), judged(check, List.of(ok(KubectlPrints.fields(KubeFields.JOB_LIST, "{\"items\": []}")), none), absent));
        WorkloadException e = delete.outcome(ended(List.of()), absent).error().orElseThrow();
        assertTrue(e.refused());
        assertTrue(e.getMessage().startsWith("no job default/train in the cluster"), e.getMessage());
        assertEquals(List.of(JobControl.deleteCommand("default", "train")), step.apply(MASTER).stream().map(op -> ((Op.Capture) op).command()).toList());
    }

    @Test void listAndLogsOnlyAsk() {
        JobWorkflows.Job<List<JobList.Row>> list = JobWorkflows.list(EXAMPLE, null, true);
        assertTrue(list.first().get(0).readOnly());
        assertEquals(Runner.Mode.VERIFY, list.options().mode());
        assertEquals(JobControl.listAsks(null, true), list.first().get(0).steps().get(0).check(MASTER).stream().map(Probe::command).toList());
        JobWorkflows.Job<String> logs = JobWorkflows.logs(EXAMPLE, "default", "train", OptionalInt.of(5));
        assertEquals(List.of(), logs.first().get(0).steps().get(0).apply(MASTER));
        assertTrue(logs.first().get(0).steps().get(0).check(MASTER).get(2).command().endsWith(" -n default logs job/train --tail=5"));
    }
}
