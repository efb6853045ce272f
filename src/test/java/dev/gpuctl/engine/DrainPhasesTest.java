package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.Remote;
import dev.gpuctl.steps.NodePhases;
import java.io.PrintWriter;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The GPU-aware drain on the one engine: the master's kubectl is a script over a pod table (one line per pod, as the
 * drain's jsonpath prints it) on worker w1: a 4-GPU Job pod, a Deployment's pod and a DaemonSet's pod.
 */
class DrainPhasesTest extends ShHosts {
    static final String KUBECTL = """
        #!/bin/sh
        S=$(dirname "$0")/../state
        shift  # --kubeconfig=...
        case "$1 $2" in
          "get node") cat "$S/cordoned-$3" 2>/dev/null || true ;;
          "cordon "*) echo true > "$S/cordoned-$2"; echo "node/$2 cordoned" ;;
          "uncordon "*) rm -f "$S/cordoned-$2"; echo "node/$2 uncordoned" ;;
          "get pods")
            echo x >> "$S/gets"
            if [ -f "$S/finish-after" ] && [ "$(wc -l < "$S/gets")" -ge "$(cat "$S/finish-after")" ]; then
              sed -i 's/\\tRunning\\t\\(.*nvidia\\)/\\tSucceeded\\t\\1/' "$S/pods"
            fi
            cat "$S/pods" ;;
          "drain "*)
            echo "$*" >> "$S/drains"
            sed -i '/\\tweb-1\\t/d' "$S/pods"
            case "$*" in *--force*) sed -i '/\\ttrain-42\\t/d' "$S/pods" ;; esac
            echo "node/$2 drained" ;;
          *) echo "unexpected: $*" >&2; exit 2 ;;
        esac
        """;

    static String line(String ns, String name, String owner, String phase, String resources) {
        return String.join("\t", ns, name, "2026-01-01T00:00:00Z", "[{\"kind\":\"" + owner + "\",\"name\":\"o\",\"controller\":true}]",
            "w1", phase, "", "", "", resources, "") + "\n";
    }

    Path state;

    @BeforeEach void cluster() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("m/bin"));
        state = Files.createDirectories(dir.resolve("m/state"));
        Files.writeString(bin.resolve("kubectl"), KUBECTL);
        bin.resolve("kubectl").toFile().setExecutable(true);
        Files.writeString(state.resolve("pods"), line("team-a", "train-42", "Job", "Running", "{\"limits\":{\"nvidia.com/gpu\":\"4\"}}")
            + line("default", "web-1", "ReplicaSet", "Running", "{}") + line("kube-flannel", "flannel-x", "DaemonSet", "Running", "{}"));
    }

    /** Host h with the master's bin first on PATH. */
    Remote withPath(String h) {
        Remote inner = host(h);
        return (Remote) Proxy.newProxyInstance(Remote.class.getClassLoader(), new Class<?>[] {Remote.class}, (proxy, m, args) -> {
            if (m.getName().equals("exec")) args[0] = "PATH=" + dir.resolve("m/bin") + ":$PATH; " + args[0];
            return m.invoke(inner, args);
        });
    }

    Runner.Result drain(Duration timeout, boolean force) {
        Runner r = new Runner(inv, n -> withPath(n.name()), new PrintWriter(progress, true),
            new Runner.Options(false, 4, Set.of(), Duration.ofSeconds(30)));
        return r.run(List.of(NodePhases.drain(List.of("w1"), timeout, force)));
    }

    @Test void aRunningGpuJobIsWaitedForThenNamedAndNothingIsEvicted() throws Exception {
        Runner.Result result = drain(Duration.ofSeconds(3), false);
        assertFalse(result.ok());
        StepFailure f = result.failures().get(0);
        assertEquals("gpu-jobs", f.step());
        assertTrue(f.detail().contains("w1: still runs team-a/train-42 on 4 GPUs; re-run later, or with --force to evict it"), f::describe);
        assertEquals("true\n", Files.readString(state.resolve("cordoned-w1")), "the node stays cordoned");
        assertFalse(Files.exists(state.resolve("drains")), "kubectl drain never ran");
        assertTrue(Files.readString(state.resolve("pods")).contains("train-42"));
        assertTrue(progress.toString().contains("gpu-jobs   waiting up to 3s for: w1: still runs team-a/train-42 on 4 GPUs"), progress::toString);
        assertTrue(Files.readAllLines(state.resolve("gets")).size() >= 2, "asked again while waiting");
    }

    @Test void whenTheJobFinishesWithinTheTimeoutTheRestIsDrainedAndARerunChangesNothing() throws Exception {
        Files.writeString(state.resolve("finish-after"), "3");
        Runner.Result result = drain(Duration.ofSeconds(60), false);
        assertTrue(result.ok(), () -> result.failures().toString());
        assertEquals(List.of("drain w1 --ignore-daemonsets --delete-emptydir-data --timeout=60s"), Files.readAllLines(state.resolve("drains")));
        String pods = Files.readString(state.resolve("pods"));
        assertFalse(pods.contains("web-1"));
        assertTrue(pods.contains("flannel-x"), "DaemonSet pods stay");
        assertEquals(Runner.Outcome.CHANGED, result.outcomes().get("m").get("cordon"));

        Runner.Result again = drain(Duration.ofSeconds(60), false);
        assertTrue(again.ok());
        assertEquals(List.of(Runner.Outcome.OK, Runner.Outcome.OK, Runner.Outcome.OK), List.copyOf(again.outcomes().get("m").values()));
        assertEquals(1, Files.readAllLines(state.resolve("drains")).size(), "no second kubectl drain");
    }

    @Test void forceEvictsTheGpuJobWithoutWaiting() throws Exception {
        Runner.Result result = drain(Duration.ofSeconds(60), true);
        assertTrue(result.ok(), () -> result.failures().toString());
        assertEquals(List.of("drain w1 --ignore-daemonsets --delete-emptydir-data --timeout=60s --force"), Files.readAllLines(state.resolve("drains")));
        assertFalse(Files.readString(state.resolve("pods")).contains("train-42"));
        assertFalse(result.outcomes().get("m").containsKey("gpu-jobs"));
    }

    @Test void uncordonMakesTheNodeSchedulableAgain() throws Exception {
        Files.writeString(state.resolve("cordoned-w1"), "true");
        Runner r = new Runner(inv, n -> withPath(n.name()), new PrintWriter(progress, true),
            new Runner.Options(false, 4, Set.of(), Duration.ofSeconds(30)));
        Runner.Result result = r.run(List.of(NodePhases.uncordon(List.of("w1"))));
        assertTrue(result.ok(), () -> result.failures().toString() + progress);
        assertFalse(Files.exists(state.resolve("cordoned-w1")));
        assertTrue(commands.get("w1") == null || commands.get("w1").isEmpty(), "nothing runs on the worker itself");
    }
}
