package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.Remote;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Op;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The op that puts a master's admin.conf on this machine, as the runner applies it: rebuilt; a hostile one fails the
 * op naming the field with nothing written; a new CA is adopted (the old copy archived, the user told) only when this
 * run made the control plane; the master's IP from a fact.
 */
class FetchKubeconfigOpTest {
    @TempDir Path dir;
    final Facts facts = new Facts();
    final List<String> told = new ArrayList<>();
    String served;

    Remote master() {
        return (Remote) Proxy.newProxyInstance(Remote.class.getClassLoader(), new Class<?>[] {Remote.class}, (proxy, m, args) -> switch (m.getName()) {
            case "download" -> served.getBytes(StandardCharsets.UTF_8);
            case "name" -> "m";
            case "connected" -> true;
            case "hashCode" -> System.identityHashCode(proxy);
            case "equals" -> proxy == args[0];
            case "toString" -> "master";
            default -> throw new UnsupportedOperationException(m.getName());
        });
    }

    boolean apply(Op op) throws Exception {
        try (HostLog log = new HostLog(dir.resolve("logs"), "m", facts)) {
            return new StepRunner(master(), log, facts, Duration.ofSeconds(30), null).telling(told::add).apply(List.of(op));
        }
    }

    Op op(Path local) {
        return new Op.FetchKubeconfig("admin.conf rebuilt on this machine", "/etc/kubernetes/admin.conf", local, "t",
            "https://" + Facts.ref("node.m.ip") + ":6443", "controlplane.before");
    }

    @Test void rebuiltThenAnotherCaRefusedUnlessThisRunMadeTheControlPlane() throws Exception {
        Path local = dir.resolve(".gpuctl/t/admin.conf");
        facts.put("node.m.ip", "10.0.0.1", false);
        facts.put("controlplane.before", "new", false);
        served = LaptopKubeconfigsTest.admin("ca", "");
        assertTrue(apply(op(local)));
        assertTrue(Files.readString(local).contains("name: t-admin"));
        assertEquals(false, apply(op(local)), "the same admin.conf again: no change");
        byte[] first = Files.readAllBytes(local);

        served = LaptopKubeconfigsTest.admin("ca", LaptopKubeconfigsTest.EXEC);
        StepRunner.OpFailed hostile = assertThrows(StepRunner.OpFailed.class, () -> apply(op(local)));
        assertTrue(hostile.result.stderr().contains("users[0].user.exec is refused"), hostile.result::toString);
        assertArrayEquals(first, Files.readAllBytes(local));

        served = LaptopKubeconfigsTest.admin("ca", "").replace("10.0.0.1", "10.0.0.66");
        assertTrue(assertThrows(StepRunner.OpFailed.class, () -> apply(op(local))).result.stderr()
            .contains("is not the cluster's endpoint https://10.0.0.1:6443"));

        facts.put("controlplane.before", "existing", false);
        served = LaptopKubeconfigsTest.admin("other-ca", "");
        StepRunner.OpFailed other = assertThrows(StepRunner.OpFailed.class, () -> apply(op(local)));
        assertTrue(other.result.stderr().startsWith("the master's CA is not the one this cluster was bootstrapped with"), other.result::toString);
        assertArrayEquals(first, Files.readAllBytes(local));

        facts.put("controlplane.before", "new", false);
        assertTrue(apply(op(local)));
        assertEquals(1, told.size(), told::toString);
        assertTrue(told.get(0).startsWith("the master has a new CA"), told::toString);
        try (var s = Files.list(local.getParent())) {
            assertEquals(1, s.filter(p -> p.getFileName().toString().startsWith("admin.conf.")).count(), "the old copy archived");
        }
    }
}
