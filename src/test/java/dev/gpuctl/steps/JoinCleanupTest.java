package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The join command's real shell on this machine, with a stand-in kubeadm: the JoinConfiguration (it holds the
 * token) is used from a fresh private directory and is gone on every way out: success, failure, a signal; and
 * what a run killed outright leaves is found by the check and removed by the first op.
 */
class JoinCleanupTest {
    @TempDir Path dir;
    @TempDir Path bin;

    /** Runs a command with sh -c here, as the host's shell runs it. */
    static ExecResult sh(String command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("sh", "-c", command).start();
        var out = java.util.concurrent.CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
        String err = read(p.getErrorStream());
        assertTrue(p.waitFor(20, TimeUnit.SECONDS), command);
        return new ExecResult(p.exitValue(), out.join(), err);
    }

    static String read(java.io.InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @BeforeEach void upload() throws IOException {
        Files.writeString(dir.resolve("kubeadm-join.yaml"), "token: abcdef.0123456789abcdef\n");
        Files.setPosixFilePermissions(dir.resolve("kubeadm-join.yaml"), PosixFilePermissions.fromString("rw-------"));
    }

    /** A kubeadm that records where its --config was and that file's mode, then runs {@code then}. */
    void kubeadm(String then) throws IOException {
        Path k = bin.resolve("kubeadm");
        Files.writeString(k, "#!/bin/sh\nf=\"$3\"; echo \"$f $(stat -c %a \"$f\") $(stat -c %a \"$(dirname \"$f\")\")\" > " + dir.resolve("seen")
            + "\n" + then + "\n");
        Files.setPosixFilePermissions(k, PosixFilePermissions.fromString("rwx------"));
    }

    String command() { return "PATH=" + bin + ":$PATH; " + JoinStep.joinCommand(dir.toString()); }

    List<String> left() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> !n.equals("seen")).sorted().toList();
        }
    }

    @Test void aJoinUsesAFreshPrivateDirectoryAndLeavesNothing() throws Exception {
        kubeadm("exit 0");
        ExecResult r = sh(command());
        assertEquals(0, r.exit(), r::toString);
        String[] seen = Files.readString(dir.resolve("seen")).strip().split(" ");
        assertTrue(seen[0].matches(java.util.regex.Pattern.quote(dir.toString()) + "/join\\.[A-Za-z0-9]{8}/kubeadm-join\\.yaml"), seen[0]);
        assertEquals("600", seen[1], "the file is 0600");
        assertEquals("700", seen[2], "in a mktemp -d directory (0700)");
        assertEquals(List.of(), left());
    }

    @Test void aFailedJoinLeavesNothingAndKeepsKubeadmsExitStatus() throws Exception {
        kubeadm("echo 'error execution phase preflight' >&2; exit 1");
        ExecResult r = sh(command());
        assertEquals(1, r.exit());
        assertTrue(r.stderr().contains("error execution phase"));
        assertEquals(List.of(), left());
    }

    @Test void aSignalMidJoinLeavesNothing() throws Exception {
        kubeadm("touch " + dir.resolve("started") + "; sleep 30");
        // a session of its own, so that the signal reaches the shell and kubeadm as a hang-up of the connection would
        Process p = new ProcessBuilder("setsid", "sh", "-c", command()).redirectErrorStream(true).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!Files.exists(dir.resolve("started")) && System.nanoTime() < deadline) Thread.sleep(20);
        assertTrue(Files.exists(dir.resolve("started")), "kubeadm started");
        assertTrue(left().stream().anyMatch(n -> n.startsWith("join.")), "the private directory exists while kubeadm runs");
        new ProcessBuilder("kill", "-TERM", "--", "-" + p.pid()).start().waitFor();
        assertTrue(p.waitFor(20, TimeUnit.SECONDS), "the join command ended");
        assertEquals(143, p.exitValue());
        Files.deleteIfExists(dir.resolve("started"));
        assertEquals(List.of(), left(), "no file holding the token is left");
    }

    @Test void whatAKilledRunLeftIsFoundAndRemoved() throws Exception {
        Path stale = Files.createDirectory(dir.resolve("join.Ab12Cd34"));
        Files.writeString(stale.resolve("kubeadm-join.yaml"), "token: abcdef.0123456789abcdef\n");
        Probe probe = JoinStep.noneLeftBehind();
        ExecResult found = sh(JoinStep.leftBehind(dir.toString()));
        Optional<String> problem = probe.judge().apply(found, new Facts());
        assertEquals(Optional.of(dir.resolve("kubeadm-join.yaml") + " is left from an interrupted join"), problem);
        // the first op removes both (its command, with this directory)
        ExecResult rm = sh("rm -rf " + dir + "/kubeadm-join.yaml " + dir + "/join.*");
        assertEquals(0, rm.exit());
        assertEquals(0, sh(JoinStep.leftBehind(dir.toString())).exit(), "nothing left: the check is right");
        assertFalse(Files.exists(stale));
    }

    @Test void theFirstOpRemovesWhatIsLeftAndTheCheckAndVerifyAskForIt() {
        var ctx = new HostContext(GpuStepTest.INV, GpuStepTest.INV.node("worker-1").orElseThrow());
        JoinStep step = new JoinStep();
        Op.Run first = (Op.Run) step.apply(ctx).get(0);
        assertEquals("rm -rf /etc/kubernetes/gpuctl/kubeadm-join.yaml /etc/kubernetes/gpuctl/join.*", first.command());
        assertEquals(JoinStep.LEFT_BEHIND, first.unless());
        assertTrue(step.check(ctx).stream().anyMatch(p -> p.command().equals(JoinStep.LEFT_BEHIND)));
        Probe registered = step.verify(ctx).get(step.verify(ctx).size() - 1);
        assertEquals("node worker-1 registered by its kubelet", registered.what());
        assertEquals(JoinStep.REGISTER_WAIT, registered.waitUpTo(), "waited for, bounded");
        assertEquals(Optional.of("the kubelet has not registered node worker-1 yet (Error from server (NotFound): nodes \"worker-1\" not found);"
                + " check the kubelet on worker-1: journalctl -u kubelet"),
            registered.judge().apply(new ExecResult(1, "", "Error from server (NotFound): nodes \"worker-1\" not found\n"), new Facts()));
    }
}
