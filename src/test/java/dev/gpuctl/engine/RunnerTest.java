package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
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
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner's control flow with scripted hosts: a host here is a set of files and a command log, and the one
 * step used writes a marker file. Real hosts are exercised by the end-to-end tests on the test bed.
 */
class RunnerTest {
    /** A scripted host: answers "cat PATH"-style probes from its files, records every command it ran. */
    static final class ScriptedHost implements Remote {
        final String name;
        final Map<String, String> files = new ConcurrentHashMap<>();
        final List<String> commands = Collections.synchronizedList(new ArrayList<>());
        volatile boolean broken;
        volatile String brokenErr = "disk full\nreally full";
        /** When set, apply-marker announces itself on {@link #started} and waits for the gate to open. */
        volatile java.util.concurrent.CountDownLatch gate;
        final java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);

        ScriptedHost(String name) { this.name = name; }

        @Override public String name() { return name; }

        @Override public ExecResult exec(String command, Duration timeout) {
            commands.add(command);
            if (command.startsWith("cat ")) {
                String f = files.get(command.substring(4).trim());
                return f == null ? new ExecResult(1, "", "No such file") : new ExecResult(0, f, "");
            }
            if (command.startsWith("p=") && command.contains("; me=$(id -u);")) {
                // where a file op's write lands (HostFiles.probeCommand): these hosts have no links
                String path = command.substring(2, command.indexOf(';'));
                return new ExecResult(0, files.containsKey(path) ? "file 644 0:0 " + path + "\n" : "absent\n", "");
            }
            if (command.equals("make-secret")) return new ExecResult(0, "s3cr3t-value\n", "");
            if (command.startsWith("apply-marker")) {
                java.util.concurrent.CountDownLatch g = gate;
                if (g != null) {
                    started.countDown();
                    try {
                        g.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                if (broken) return new ExecResult(7, "", brokenErr);
                files.put("/etc/marker", command.substring("apply-marker ".length()) + "\n");
                return new ExecResult(0, "", "");
            }
            return new ExecResult(0, "", "");
        }

        @Override public void upload(byte[] content, String path, String mode, String owner) {
            files.put(path, new String(content, java.nio.charset.StandardCharsets.UTF_8));
        }

        @Override public byte[] download(String path) { return files.getOrDefault(path, "").getBytes(java.nio.charset.StandardCharsets.UTF_8); }

        @Override public void upload(java.nio.file.Path from, String path, String mode, String owner) {
            try {
                files.put(path, java.nio.file.Files.readString(from));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override public void download(String path, java.nio.file.Path to) {
            try {
                java.nio.file.Files.writeString(to, files.getOrDefault(path, ""));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        /** The bootstrap lock, as the real command answers: held by one run at a time, the holder named. */
        volatile String lockedBy;

        @Override public dev.gpuctl.remote.Held hold(String command, Duration timeout) {
            commands.add("hold: " + command);
            synchronized (this) {
                if (lockedBy != null) return dev.gpuctl.remote.Held.running("gpuctl-lock: busy " + lockedBy, () -> { });
                lockedBy = command.replaceAll("(?s).*printf '%s \\(lock held by pid %s on this host\\)\\\\n' '([^']*)'.*", "$1");
                return dev.gpuctl.remote.Held.running("gpuctl-lock: held", () -> lockedBy = null);
            }
        }

        @Override public void close() {}
    }

    /** A step that makes /etc/marker hold "v1", with a secret in its command. */
    static final class MarkerStep implements Step {
        @Override public String id() { return "marker"; }
        @Override public String title() { return "marker file"; }
        @Override public boolean runsOn(HostContext ctx) { return true; }
        @Override public List<Probe> check(HostContext ctx) { return List.of(Probe.of("marker is v1", "cat /etc/marker",
            r -> r.stdout().startsWith("v1") ? java.util.Optional.empty() : java.util.Optional.of("marker is '" + r.stdout() + "'"))); }
        @Override public List<Op> apply(HostContext ctx) {
            return List.of(
                new Op.Capture("a secret", "make-secret", out -> Map.of("secret", "s3cr3t-value"), true),
                Op.Run.of("write the marker", "apply-marker v1 --token={{secret}}"),
                Op.WriteFile.of("config", "/etc/other.conf", "token={{secret}}\n", "0600").asSecret());
        }
    }

    static final class AlwaysRightStep implements Step {
        @Override public String id() { return "probe"; }
        @Override public String title() { return "probe"; }
        @Override public boolean runsOn(HostContext ctx) { return true; }
        @Override public List<Probe> check(HostContext ctx) { return List.of(Probe.equals("os", "cat /etc/os", "debian")); }
        @Override public List<Op> apply(HostContext ctx) { return List.of(); }
    }

    Inventory inv(Path dir) throws IOException {
        return ShHosts.inventory(dir, "w1", "w2");
    }

    final Map<String, ScriptedHost> hosts = new ConcurrentHashMap<>();
    final StringWriter progress = new StringWriter();

    Runner.Result run(Inventory inv, boolean dryRun, Phase... phases) {
        return runner(inv, dryRun).run(List.of(phases));
    }

    Runner runner(Inventory inv, boolean dryRun) {
        return new Runner(inv, n -> hosts.computeIfAbsent(n.name(), ScriptedHost::new), new PrintWriter(progress),
            new Runner.Options(dryRun, 2, Set.of(), Duration.ofSeconds(5)));
    }

    static Phase preflight() { return new Phase("preflight", "preflight", List.of(new AlwaysRightStep()), true); }
    static Phase marker() { return new Phase("hosts", "hosts", List.of(new MarkerStep()), false); }

    void osOnAllHosts(String os) {
        for (String h : List.of("m", "w1", "w2")) hosts.computeIfAbsent(h, ScriptedHost::new).files.put("/etc/os", os + "\n");
    }

    @Test void appliesThenReRunChangesNothing(@TempDir Path dir) throws IOException {
        Inventory inv = inv(dir);
        osOnAllHosts("debian");
        Runner.Result first = run(inv, false, preflight(), marker());
        assertTrue(first.ok(), progress::toString);
        assertEquals(Runner.Outcome.CHANGED, first.outcomes().get("w1").get("marker"));
        assertEquals("v1 --token=s3cr3t-value\n", hosts.get("w1").files.get("/etc/marker"));
        int commandsBefore = hosts.get("w1").commands.size();
        Runner.Result second = run(inv, false, preflight(), marker());
        assertTrue(second.ok());
        assertEquals(Runner.Outcome.OK, second.outcomes().get("w1").get("marker"));
        assertEquals(List.of("cat /etc/os", "cat /etc/marker"), hosts.get("w1").commands.subList(commandsBefore, hosts.get("w1").commands.size()));
        assertTrue(progress.toString().contains("== phase 1: hosts =="), progress::toString);
    }

    @Test void secretsNeverReachTheLogs(@TempDir Path dir) throws IOException {
        Inventory inv = inv(dir);
        osOnAllHosts("debian");
        Runner.Result r = run(inv, false, preflight(), marker());
        assertTrue(r.ok());
        String log = Files.readString(r.logDir().resolve("w1.log"));
        assertTrue(log.contains("apply-marker v1 --token=<secret>"), log);
        assertFalse(log.contains("s3cr3t-value"), log);
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(r.logDir().resolve("w1.log"))));
    }

    @Test void dryRunReportsAndChangesNothing(@TempDir Path dir) throws IOException {
        Inventory inv = inv(dir);
        osOnAllHosts("debian");
        Runner.Result r = run(inv, true, preflight(), marker());
        assertTrue(r.ok());
        assertEquals(Runner.Outcome.WOULD_CHANGE, r.outcomes().get("m").get("marker"));
        assertFalse(hosts.get("m").files.containsKey("/etc/marker"));
        assertTrue(progress.toString().contains("would change: marker is v1"), progress::toString);
    }

    @Test void aHostsEscapeSequencesReachTheFailureAndTheLogEscaped(@TempDir Path dir) throws IOException {
        Inventory inv = inv(dir);
        osOnAllHosts("debian");
        hosts.get("w1").broken = true;
        hosts.get("w1").brokenErr = "Debian\u001b]0;title\u0007\u001b[2J\n\u001b[1A\u001b[2K\r ok \u009b";
        Runner.Result r = run(inv, false, preflight(), marker());
        StepFailure f = r.failures().get(0);
        String shown = f.toString() + f.detail();
        assertTrue(f.detail().contains("Debian\\x1b]0;title\\x07\\x1b[2J\n\\x1b[1A\\x1b[2K\\x0d ok \\x9b"), f.detail());
        String log = Files.readString(r.logDir().resolve("w1.log"));
        assertTrue(log.contains("\\x1b]0;title\\x07"), log);
        for (String text : List.of(shown, log, progress.toString())) {
            assertTrue(text.chars().noneMatch(c -> c == 0x1b || c == 0x07 || c == 0x9b || c == '\r'), text);
        }
    }

    @Test void preflightFailureOnOneHostChangesNoHost(@TempDir Path dir) throws IOException {
        Inventory inv = inv(dir);
        osOnAllHosts("debian");
        hosts.get("w2").files.put("/etc/os", "centos\n");
        Runner.Result r = run(inv, false, preflight(), marker());
        assertTrue(r.preflightRefused());
        assertTrue(String.join("\n", r.preflightProblems()).contains("w2"), r.preflightProblems()::toString);
        for (ScriptedHost h : hosts.values()) assertFalse(h.files.containsKey("/etc/marker"), h.name);
    }

    @Test void aFailingHostLetsThePhaseFinishThenStops(@TempDir Path dir) throws IOException {
        Inventory inv = inv(dir);
        osOnAllHosts("debian");
        hosts.get("w1").broken = true;
        Runner.Result r = run(inv, false, preflight(), marker(), new Phase("later", "later", List.of(new AlwaysRightStep()), false));
        assertEquals(1, r.failures().size());
        StepFailure f = r.failures().get(0);
        assertEquals("w1", f.host());
        assertEquals("marker", f.step());
        assertEquals(7, f.exit());
        assertEquals("apply-marker v1 --token=<secret>", f.command());
        assertTrue(f.detail().contains("really full"));
        assertTrue(hosts.get("w2").files.containsKey("/etc/marker"), "the phase's other hosts finish");
        assertFalse(progress.toString().contains("phase 2"), "the run stops after the failed phase");
    }

    /** A step whose pure edit refuses the host's file (like daemon.json that is not JSON). */
    static final class RefusingEditStep implements Step {
        @Override public String id() { return "edit"; }
        @Override public String title() { return "edit"; }
        @Override public boolean runsOn(HostContext ctx) { return true; }
        @Override public List<Probe> check(HostContext ctx) { return List.of(Probe.equals("os", "cat /etc/os", "never")); }
        @Override public List<Op> apply(HostContext ctx) {
            return List.of(new Op.EditFile("merge", "/etc/os", "merge", text -> {
                throw new dev.gpuctl.text.HostConfException("/etc/os is not valid JSON at line 1 column 1; fix or move it");
            }, "0644"));
        }
    }

    @Test void aFileGpuctlRefusesToEditStopsThatHostWithAMessageAndIsNotReplaced(@TempDir Path dir) throws IOException {
        Inventory inv = inv(dir);
        osOnAllHosts("debian");
        Runner.Result r = run(inv, false, preflight(), new Phase("edit", "edit", List.of(new RefusingEditStep()), false));
        assertEquals(3, r.failures().size());
        assertTrue(r.failures().get(0).detail().contains("not valid JSON"), r.failures()::toString);
        assertEquals("debian\n", hosts.get("w1").files.get("/etc/os"));
    }

    @Test void aRunTakesTheMastersLockBeforeChangingAnythingAndLetsItGo(@TempDir Path dir) throws IOException {
        Inventory inv = inv(dir);
        osOnAllHosts("debian");
        Runner.Result r = runner(inv, false).lockingMaster("gpuctl bootstrap by alice@laptop").run(List.of(preflight(), marker()));
        assertTrue(r.ok(), progress::toString);
        List<String> m = hosts.get("m").commands;
        int lockAt = m.indexOf(m.stream().filter(c -> c.startsWith("hold: ")).findFirst().orElseThrow());
        assertTrue(lockAt < m.indexOf("cat /etc/marker"), "the lock comes before the first step that may change: " + m);
        assertEquals(null, hosts.get("m").lockedBy, "let go at the end of the run");
        runner(inv, true).lockingMaster("dry").run(List.of(preflight(), marker()));
        assertEquals(1, hosts.get("m").commands.stream().filter(c -> c.startsWith("hold: ")).count(), "a dry run takes no lock");
    }

    @Test void aRunFindingTheLockHeldIsRefusedNamingTheHolderAndChangesNothing(@TempDir Path dir) throws IOException {
        Inventory inv = inv(dir);
        osOnAllHosts("debian");
        hosts.get("m").lockedBy = "gpuctl bootstrap by bob@desk (pid 77) since 2026-12-02T10:00:00Z (lock held by pid 901 on this host)";
        Runner.Result r = runner(inv, false).lockingMaster("gpuctl bootstrap by alice@laptop").run(List.of(preflight(), marker()));
        assertTrue(r.preflightRefused());
        String msg = String.join("\n", r.preflightProblems());
        assertTrue(msg.contains("another gpuctl bootstrap is running against this cluster"), msg);
        assertTrue(msg.contains("bob@desk (pid 77)") && msg.contains("pid 901") && msg.contains(" on m"), msg);
        for (ScriptedHost h : hosts.values()) assertFalse(h.files.containsKey("/etc/marker"), h.name);
        assertTrue(hosts.get("m").lockedBy.contains("bob@desk"), "the holder keeps its lock");
    }

    @Test void aStopLetsRunningCommandsFinishStartsNoOtherAndSaysWhereEachHostStopped(@TempDir Path dir) throws Exception {
        Inventory inv = inv(dir);
        osOnAllHosts("debian");
        java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        ScriptedHost w1 = hosts.get("w1");
        w1.gate = gate;
        Runner runner = new Runner(inv, n -> hosts.computeIfAbsent(n.name(), ScriptedHost::new), new PrintWriter(progress),
            new Runner.Options(false, 1, Set.of(), Duration.ofSeconds(5))); // one host at a time: w2 waits its turn
        var result = java.util.concurrent.Executors.newSingleThreadExecutor().submit(
            () -> runner.run(List.of(preflight(), marker(), new Phase("later", "later", List.of(new AlwaysRightStep()), false))));
        assertTrue(w1.started.await(10, java.util.concurrent.TimeUnit.SECONDS), "w1 is in the middle of its step");
        runner.requestStop();
        gate.countDown();
        Runner.Result r = result.get(10, java.util.concurrent.TimeUnit.SECONDS);
        assertTrue(r.wasInterrupted());
        assertFalse(r.ok());
        assertEquals("v1 --token=s3cr3t-value\n", w1.files.get("/etc/marker"), "the running command finished");
        assertFalse(w1.files.containsKey("/etc/other.conf"), "the step's next write did not start");
        assertEquals(Runner.Outcome.INTERRUPTED, r.outcomes().get("w1").get("marker"));
        assertTrue(r.failures().isEmpty(), "a stop is not a host failure: " + r.failures());
        String where = String.join("\n", r.interrupted());
        assertTrue(where.contains("w1 in step marker"), where);
        assertTrue(where.contains("w2 before step marker (not started)"), where);
        assertFalse(hosts.get("w2").files.containsKey("/etc/marker"));
        assertFalse(progress.toString().contains("phase 2"), "no later phase starts: " + progress);
        assertTrue(progress.toString().contains("w1           marker     interrupted"), progress::toString);
    }

    /** A step on w1 whose apply waits (Op.Await) for /etc/up to say yes, then writes the marker. */
    static final class AwaitStep implements Step {
        static final Probe UP = Probe.equals("up", "cat /etc/up", "yes");
        @Override public String id() { return "await"; }
        @Override public String title() { return "await"; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().name().equals("w1"); }
        @Override public List<Probe> check(HostContext ctx) { return List.of(UP); }
        @Override public List<Op> apply(HostContext ctx) {
            return List.of(Op.Await.of("wait until up", UP.waitingUpTo(Duration.ofMinutes(10))), Op.Run.of("after", "apply-marker after"));
        }
        @Override public String whileWaiting(String problem, Duration upTo) { return "waiting: " + problem; }
    }

    @Test void aStopEndsAnAwaitBeforeItsNextAskAndTheOpsAfterItDoNotRun(@TempDir Path dir) throws Exception {
        Inventory inv = inv(dir);
        osOnAllHosts("debian");
        Runner runner = new Runner(inv, n -> hosts.computeIfAbsent(n.name(), ScriptedHost::new), new PrintWriter(progress),
            new Runner.Options(false, 1, Set.of(), Duration.ofSeconds(5)));
        var result = java.util.concurrent.Executors.newSingleThreadExecutor().submit(
            () -> runner.run(List.of(preflight(), new Phase("wait", "wait", List.of(new AwaitStep()), false))));
        ScriptedHost w1 = hosts.get("w1");
        // the wait has begun once the probe was asked again after the check and the first ask of the wait
        while (w1.commands.stream().filter(c -> c.equals("cat /etc/up")).count() < 3) Thread.sleep(50);
        runner.requestStop();
        Runner.Result r = result.get(60, java.util.concurrent.TimeUnit.SECONDS);
        assertTrue(r.wasInterrupted());
        assertEquals(Runner.Outcome.INTERRUPTED, r.outcomes().get("w1").get("await"));
        assertFalse(w1.files.containsKey("/etc/marker"), "the op after the wait did not run");
        assertTrue(String.join("\n", r.interrupted()).contains("w1 in step await"), r.interrupted()::toString);
        assertTrue(progress.toString().contains("w1           await      waiting: got ''"), progress::toString);
    }

    @Test void abortCutsRunningCommandsOffByClosingTheConnections(@TempDir Path dir) throws Exception {
        Inventory inv = inv(dir);
        osOnAllHosts("debian");
        java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        ScriptedHost w1 = hosts.get("w1");
        w1.gate = gate;
        List<String> closed = Collections.synchronizedList(new ArrayList<>());
        Runner runner = new Runner(inv, n -> {
            ScriptedHost h = hosts.computeIfAbsent(n.name(), ScriptedHost::new);
            return new Remote() {
                @Override public String name() { return h.name(); }
                @Override public ExecResult exec(String c, Duration t) {
                    ExecResult e = h.exec(c, t);
                    if (closed.contains(h.name())) throw new dev.gpuctl.remote.RemoteException(dev.gpuctl.remote.RemoteException.Kind.CONNECTION_LOST, h.name(), h.name() + ": connection closed");
                    return e;
                }
                @Override public dev.gpuctl.remote.Held hold(String c, Duration t) { return h.hold(c, t); }
                @Override public void upload(byte[] b, String p, String m, String o) { h.upload(b, p, m, o); }
                @Override public byte[] download(String p) { return h.download(p); }
                @Override public void upload(java.nio.file.Path f, String p, String m, String o) { h.upload(f, p, m, o); }
                @Override public void download(String p, java.nio.file.Path t) { h.download(p, t); }
                @Override public void close() { closed.add(h.name()); gate.countDown(); }
            };
        }, new PrintWriter(progress), new Runner.Options(false, 3, Set.of(), Duration.ofSeconds(5)));
        var result = java.util.concurrent.Executors.newSingleThreadExecutor().submit(() -> runner.run(List.of(preflight(), marker())));
        assertTrue(w1.started.await(10, java.util.concurrent.TimeUnit.SECONDS));
        runner.abort();
        Runner.Result r = result.get(10, java.util.concurrent.TimeUnit.SECONDS);
        assertTrue(closed.contains("w1"), "abort closes the connections");
        assertEquals(Runner.Outcome.INTERRUPTED, r.outcomes().get("w1").get("marker"));
        assertTrue(String.join("\n", r.interrupted()).contains("w1 in step marker, while running: w1: connection closed"), r.interrupted()::toString);
    }
}
