package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.engine.Plan;
import dev.gpuctl.engine.PlanSummary;
import dev.gpuctl.kube.ClusterView;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** controlPlaneSchedulable: the taint step's probe and op, run by sh against a kubectl that keeps taints in a file. */
class SchedulableStepTest {
    static Inventory inventory(boolean schedulable, boolean masterGpu) {
        return InventoryLoader.parse("inv.yaml", """
            cluster: { name: c, kubernetesVersion: "1.35", packages: system, controlPlaneSchedulable: %s }
            nodes:
              - { name: m1, address: 10.1.0.1, role: master, gpu: %s }
              - { name: w1, address: 10.1.0.2, role: worker }
            """.formatted(schedulable, masterGpu), Path.of("."), Map.of("HOME", "/root"));
    }

    @Test void theProbeFindsTheTaintByKeyAndNamesAFailingKubectl() {
        String node = "m1";
        assertEquals(Optional.of("node m1 still has the node-role.kubernetes.io/control-plane taint: pods do not run there"),
            SchedulableStep.problem(List.of("node.kubernetes.io/not-ready", "node-role.kubernetes.io/control-plane"), node));
        assertEquals(Optional.empty(), SchedulableStep.problem(List.of("nvidia.com/gpu"), node));
        assertEquals(Optional.empty(), SchedulableStep.problem(List.of(), node));
        Probe p = new SchedulableStep().check(new HostContext(inventory(true, false), inventory(true, false).master())).get(0);
        assertEquals(ClusterView.COMMAND, p.command());
        String tainted = "N\tm1\t{}\t\t\t[{\"key\":\"node-role.kubernetes.io/control-plane\",\"effect\":\"NoSchedule\"}]\t{}\t[]\t\n";
        assertEquals(Optional.of("node m1 still has the node-role.kubernetes.io/control-plane taint: pods do not run there"),
            p.judge().apply(new ExecResult(0, tainted, ""), new Facts()));
        assertEquals(Optional.empty(), p.judge().apply(new ExecResult(0, "N\tm1\t{}\t\t\t\t{}\t[]\t\n", ""), new Facts()));
        assertTrue(p.judge().apply(new ExecResult(1, "", "The connection to the server was refused\n"), new Facts())
            .orElseThrow().startsWith("kubectl failed (exit 1): The connection to the server was refused"));
    }

    @Test void itRunsOnlyOnTheMasterAndOnlyWhenAsked() {
        Inventory off = inventory(false, false);
        Inventory on = inventory(true, false);
        assertFalse(new SchedulableStep().runsOn(new HostContext(off, off.master())));
        assertTrue(new SchedulableStep().runsOn(new HostContext(on, on.master())));
        assertFalse(new SchedulableStep().runsOn(new HostContext(on, on.node("w1").orElseThrow())));
    }

    @Test void thePlanShowsTheStepOnTheMasterAndTheDevicePluginCoversAMasterWithGpus() {
        Inventory inv = inventory(true, true);
        Plan plan = Plan.of(inv, Steps.phases());
        var rows = PlanSummary.rows(plan, n -> inv.node(n).orElseThrow().gpu());
        assertTrue(rows.get(0).steps().contains("schedulable"), rows::toString);
        assertFalse(rows.get(1).steps().contains("schedulable"), rows::toString);
        List<String> gpuChecks = new GpuStep().check(new HostContext(inv, inv.master())).stream().map(Probe::what).toList();
        assertTrue(gpuChecks.contains("node m1 allocatable nvidia.com/gpu = its nvidia-smi count"), gpuChecks::toString);
        assertTrue(gpuChecks.contains("node m1 labelled {nvidia.com/gpu.present=true}"), gpuChecks::toString);
        assertFalse(PlanSummary.rows(Plan.of(inventory(false, false), Steps.phases()), n -> false).get(0).steps().contains("schedulable"));
    }

    /** A kubectl that keeps node m1's taint keys in $TAINTS and handles what the step runs, as kubectl does. */
    static final String FAKE_KUBECTL = """
        #!/bin/sh
        echo "$*" >> "$TAINTS.calls"
        case "$*" in
          *"get nodes,pods -A -o jsonpath="*)
            printf 'N\tm1\t{}\t\t\t['; sed 's/.*/{"key":"&","effect":"NoSchedule"}/' "$TAINTS" | paste -sd, - | tr -d '\\n'; printf ']\t{}\t[]\t\n' ;;
          *"taint nodes m1 node-role.kubernetes.io/control-plane-")
            grep -qx node-role.kubernetes.io/control-plane "$TAINTS" || { echo 'error: taint "node-role.kubernetes.io/control-plane" not found' >&2; exit 1; }
            grep -vx node-role.kubernetes.io/control-plane "$TAINTS" > "$TAINTS.new"; mv "$TAINTS.new" "$TAINTS"; echo "node/m1 untainted" ;;
          *) echo "unexpected: $*" >&2; exit 2 ;;
        esac
        """;

    static ExecResult sh(Path bin, Path taints, String command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", command);
        pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        pb.environment().put("TAINTS", taints.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new ExecResult(p.waitFor(), out, err);
    }

    static Optional<String> judged(Probe p, ExecResult r) { return p.judge().apply(r, new Facts()); }

    @Test void applyRemovesTheTaintOnceAndARerunChangesNothing(@TempDir Path dir) throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path kubectl = bin.resolve("kubectl");
        Files.writeString(kubectl, FAKE_KUBECTL);
        kubectl.toFile().setExecutable(true);
        Path taints = dir.resolve("taints");
        Files.writeString(taints, "node-role.kubernetes.io/control-plane\nnvidia.com/gpu\n");
        Inventory inv = inventory(true, true);
        HostContext ctx = new HostContext(inv, inv.master());
        SchedulableStep step = new SchedulableStep();
        Op.Run op = (Op.Run) step.apply(ctx).get(0);

        Probe check = step.check(ctx).get(0);
        assertEquals(check.what(), op.guard().what(), "the op is skipped by the step's own check");
        assertTrue(judged(check, sh(bin, taints, check.command())).isPresent(), "tainted at first, so the op is not skipped");
        ExecResult applied = sh(bin, taints, op.command());
        assertEquals(0, applied.exit(), applied::toString);
        assertEquals("nvidia.com/gpu\n", Files.readString(taints), "only the control-plane taint is removed");

        Files.writeString(dir.resolve("taints.calls"), "");
        assertEquals(Optional.empty(), judged(op.guard(), sh(bin, taints, op.guard().command())), "right now: a re-run skips the op");
        assertEquals(Set.of(), Set.copyOf(Files.readAllLines(dir.resolve("taints.calls")).stream().filter(l -> l.contains(" taint ")).toList()),
            "and runs no kubectl taint");
    }
}
