package dev.gpuctl.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.engine.JoinTokensTest;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Held;
import dev.gpuctl.remote.Remote;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** join-token's two runs on the engine: the master's commands in its log (the token masked), as every run's. */
class JoinTokenRunsTest {
    @TempDir Path dir;
    final List<String> commands = Collections.synchronizedList(new ArrayList<>());
    final StringWriter progress = new StringWriter();

    static final String SECRET = "0123456789abcdef";

    /** A master whose kubeadm prints a join command on token create and the token list given. */
    Remote master(String tokenList) {
        return new Remote() {
            @Override public String name() { return "m"; }
            @Override public ExecResult exec(String command, Duration timeout) {
                commands.add(command);
                if (command.startsWith("kubeadm token create")) {
                    return new ExecResult(0, "kubeadm join 10.0.0.1:6443 --token abcdef." + SECRET + " --discovery-token-ca-cert-hash "
                        + JoinTokensTest.HASH + " \n", "");
                }
                if (command.equals("kubeadm token list -o json")) return new ExecResult(0, tokenList, "");
                return new ExecResult(0, "", "");
            }
            @Override public Held hold(String command, Duration timeout) { throw new UnsupportedOperationException(); }
            @Override public void upload(byte[] content, String path, String mode, String owner) { throw new UnsupportedOperationException(); }
            @Override public byte[] download(String path) { throw new UnsupportedOperationException(); }
            @Override public void upload(java.nio.file.Path from, String path, String mode, String owner) { throw new UnsupportedOperationException(); }
            @Override public void download(String path, java.nio.file.Path to) { throw new UnsupportedOperationException(); }
            @Override public void close() { }
        };
    }

    Inventory inv() throws IOException {
        return TestInventory.of(dir, "w1");
    }

    static String onlyLog(Path logDir) throws IOException {
        try (var files = Files.list(logDir)) {
            List<Path> logs = files.toList();
            assertEquals(List.of(logDir.resolve("m.log")), logs, "one log, the master's");
            return Files.readString(logs.get(0));
        }
    }

    @Test void refreshCreatesTheTokenWithJoinStepsCodeAndLogsItMasked() throws IOException {
        Inventory inv = inv();
        Remote m = master("");
        JoinTokenWorkflow.Refreshed made = Workflows.run(JoinTokenWorkflow.refresh(inv, Duration.ofHours(2)),
            new Workflows.Target(inv, n -> m, new PrintWriter(progress), new Runner.Options(false, 1, Set.of("m"), Duration.ofSeconds(30)), null),
            Workflows.Guard.NONE);
        assertTrue(made.result().ok(), made.result()::toString);
        assertEquals("kubeadm join 10.0.0.1:6443 --token abcdef." + SECRET + " --discovery-token-ca-cert-hash " + JoinTokensTest.HASH
            + " --cri-socket " + inv.cluster().runtime().criSocket(), made.command().orElseThrow());
        assertEquals(List.of("kubeadm token create --ttl 7200s --description 'gpuctl join-token' --print-join-command"),
            commands.stream().filter(c -> c.startsWith("kubeadm")).toList());
        String log = onlyLog(made.result().logDir());
        assertTrue(log.contains("$ kubeadm token create --ttl 7200s"), log);
        assertFalse(log.contains(SECRET), "the token is masked in the log:\n" + log);
    }

    @Test void theCachedCommandIsCheckedOnTheMasterInAVerifyRunWithALog() throws IOException {
        Inventory inv = inv();
        String cached = JoinTokensTest.CACHED;
        Runner.Result ok = check(master(JoinTokensTest.list("abcdef." + SECRET, "2999-01-01T00:00:00Z")), inv, cached);
        assertTrue(ok.report().ok(), ok.report()::toString);
        assertEquals(1, ok.report().hosts().size());
        assertEquals(1, ok.report().hosts().get(0).checks().size(), ok.report()::toString);
        assertTrue(onlyLog(ok.logDir()).contains("$ kubeadm token list -o json"));

        Runner.Result wrong = check(master(""), inv, cached);
        assertFalse(wrong.report().ok());
        assertTrue(wrong.report().hosts().get(0).checks().get(0).problem().contains("no longer on the master"), wrong.report()::toString);
        assertFalse(commands.stream().anyMatch(c -> c.startsWith("kubeadm token create")), "checking creates nothing");
    }

    Runner.Result check(Remote m, Inventory inv, String cached) {
        return Workflows.run(JoinTokenWorkflow.check(cached, JoinTokensTest.NOW), new Workflows.Target(inv, n -> m, new PrintWriter(progress),
            Runner.Options.verify(1, Set.of("m"), Duration.ofSeconds(30), Duration.ZERO), null), Workflows.Guard.NONE);
    }
}
