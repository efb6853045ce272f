package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.gpu.GpuQuestions;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.workflow.GpusWorkflow;
import dev.gpuctl.workflow.Workflows;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/** gpuctl gpus's workflow, its questions asked on the engine: hosts that are this machine's sh, with kubectl and nvidia-smi faked on their PATH. */
class GpusWorkflowTest extends ShHosts {
    static final String KUBECTL = """
        #!/bin/sh
        case "$*" in
          *"get nodes "*) printf 'm\\t{}\\t{}\\t[]\\nw1\\t{"nvidia.com/gpu.present":"true"}\\t{"nvidia.com/gpu":"1"}\\t[]\\n' ;;
          *"get pods -A "*) ;;
          *) echo "unexpected: $*" >&2; exit 2 ;;
        esac
        """;
    static final String NVIDIA_SMI = """
        #!/bin/sh
        case "$*" in
          *"-lms 500"*) echo '0, GPU-1, 0, 0, 0, 143771'; sleep 0.3; echo '0, GPU-1, 0, 0, 0, 143771'; sleep 5 ;;
          *) echo '0, NVIDIA H200, GPU-1, 143771, 580.159.04, Disabled, Default, 00000000:01:00.0' ;;
        esac
        """;

    final Map<String, List<String>> asked = new ConcurrentHashMap<>();

    Remote faked(String h, Path bin) {
        List<String> mine = asked.computeIfAbsent(h, k -> Collections.synchronizedList(new ArrayList<>()));
        return (Remote) Proxy.newProxyInstance(Remote.class.getClassLoader(), new Class<?>[] {Remote.class}, (proxy, m, args) -> switch (m.getName()) {
            case "exec" -> {
                mine.add((String) args[0]);
                yield ShRemote.run("PATH=" + bin + ":$PATH; export PATH; cd " + dir.resolve(h) + " && { " + args[0] + "\n}");
            }
            case "name", "toString" -> h;
            case "connected" -> true;
            case "close" -> null;
            case "hashCode" -> System.identityHashCode(proxy);
            case "equals" -> proxy == args[0];
            default -> throw new UnsupportedOperationException(m.getName());
        });
    }

    @Test void eachHostIsAskedInOneBatchAndEveryAnswerIsFoundByItsKey() throws IOException {
        inv = inventory(dir, "w1", "w2");
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Files.writeString(bin.resolve("kubectl"), KUBECTL);
        Files.writeString(bin.resolve("nvidia-smi"), NVIDIA_SMI);
        bin.resolve("kubectl").toFile().setExecutable(true);
        bin.resolve("nvidia-smi").toFile().setExecutable(true);
        GpusWorkflow gpus = new GpusWorkflow(inv, Duration.ofMillis(1500));
        GpusWorkflow.Answers a = Workflows.run(gpus, new Workflows.Target(inv, (Node n) -> {
            if (n.name().equals("w2")) throw new RemoteException(RemoteException.Kind.UNREACHABLE, "w2", "w2: cannot connect to 10.0.0.3:22: connection refused.");
            return faked(n.name(), bin);
        }, new PrintWriter(Writer.nullWriter()), gpus.options(), null), Workflows.Guard.NONE);

        assertEquals(Set.of("m", "w1"), asked.keySet(), "the unreachable host is asked nothing");
        assertEquals(1, asked.get("m").size(), "the master: one batch");
        assertEquals(1, asked.get("w1").size(), "a GPU node: one batch, sampling included");
        assertEquals(Map.of("w2", "w2: cannot connect to 10.0.0.3:22: connection refused."), a.unreachable());
        assertTrue(a.answer(GpuQuestions.NODES_KEY).orElseThrow().stdout().startsWith("m\t{}"));
        assertEquals(new ExecResult(0, "", ""), a.answer(GpuQuestions.PODS_KEY).orElseThrow());
        assertTrue(a.answer(GpuQuestions.smiKey("w1")).orElseThrow().stdout().startsWith("0, NVIDIA H200, GPU-1"));
        ExecResult samples = a.answer(GpuQuestions.samplesKey("w1")).orElseThrow();
        assertEquals(124, samples.exit(), "timeout ends the sampling");
        assertEquals(2, samples.stdout().lines().count(), samples::toString);
        assertTrue(a.answer(GpuQuestions.checkpointKey("w1")).isPresent());
        assertTrue(a.answer(GpuQuestions.smiKey("w2")).isEmpty());
        assertTrue(Files.readString(a.logDir().resolve("w1.log")).contains("nvidia-smi --query-gpu="), "each host is logged like any run");
        for (String c : asked.get("m")) assertTrue(!c.contains("-o json") && !c.contains("env"), "only the fields the report reads: " + c);
    }
}
