package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Faults on real hosts: a changed host key, a failing command, a slow host, Ctrl-C, a second run while one
 * runs, a run killed outright, a host that goes down in the middle of a step. After each, nothing is half
 * done and a plain re-run completes.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReliabilityE2E {
    static TestBed bed;
    static Path inventory;
    static String h1;
    static String h2;

    /** What a step changes on a fresh host (time sync, swap), read from the host. */
    static final String FINGERPRINT = "sha256sum /etc/fstab /proc/swaps 2>&1; dpkg-query -W -f='${Status}' chrony 2>&1; "
        + "ls /etc/chrony/sources.d 2>&1; ls /etc/modules-load.d /etc/sysctl.d 2>&1";

    /**
     * A one-shot slow dpkg-query on a host: the next query about chrony (the time step's first probe, never a
     * preflight one) marks /run/gpuctl-test-slow and sleeps; later calls are the real dpkg-query.
     */
    static void slowNextChronyQuery(String host, int seconds) {
        bed.ok(host, "printf '%s\\n' '#!/bin/sh' 'case \"$*\" in *chrony*) if [ -e /etc/gpuctl-test-slow ]; then rm -f /etc/gpuctl-test-slow;"
            + " touch /run/gpuctl-test-slow; sleep " + seconds + "; fi ;; esac' 'exec /usr/bin/dpkg-query \"$@\"' > /usr/local/bin/dpkg-query"
            + " && chmod 755 /usr/local/bin/dpkg-query && touch /etc/gpuctl-test-slow && rm -f /run/gpuctl-test-slow");
    }

    static void noSlowQueries(String host) {
        bed.ssh(host, "rm -f /usr/local/bin/dpkg-query /etc/gpuctl-test-slow /run/gpuctl-test-slow");
    }

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() {
        bed = TestBed.own("rel", 2);
        inventory = bed.inventory("docker", "flannel");
        h1 = bed.workers().get(0);
        h2 = bed.workers().get(1);
    }

    static boolean sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return true;
    }

    /** gpuctl in a process of its own (for signals and kill -9), started by this test and ended by its PID only. */
    static final class Child {
        final Process process;
        final StringBuffer err = new StringBuffer();
        final CompletableFuture<Void> drained;

        Child(String... args) throws IOException {
            // as a terminal would start it: a JVM that inherits an ignored SIGINT (a background job of a
            // non-interactive shell) never installs its handler, so Ctrl-C is restored to the default first
            List<String> cmd = new java.util.ArrayList<>(List.of("env", "--default-signal=INT",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "dev.gpuctl.cli.Main"));
            cmd.addAll(List.of(args));
            process = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            drained = CompletableFuture.runAsync(() -> {
                try (var in = process.getErrorStream()) {
                    byte[] b = new byte[4096];
                    int n;
                    while ((n = in.read(b)) >= 0) err.append(new String(b, 0, n, StandardCharsets.UTF_8));
                } catch (IOException ignored) {
                    // the process ended
                }
            });
        }

        /** Waits until stderr shows {@code text}; false when the process ended or the deadline passed first. */
        boolean awaitErr(String text, long seconds) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (!err.toString().contains(text) && process.isAlive() && System.nanoTime() < deadline) sleep(100);
            return err.toString().contains(text);
        }

        int exit(long seconds) throws InterruptedException {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor();
                drained.join();
                throw new AssertionError("gpuctl did not end within " + seconds + " s:\n" + err);
            }
            drained.join();
            return process.exitValue();
        }
    }

    @Test @Order(1) void aChangedHostKeyIsRefusedAtPreflightWithBothFingerprintsAndNothingChanges() throws Exception {
        // known_hosts where h1's address carries h2's key: what a man in the middle (or a reinstalled h1) looks like
        String known = Files.readString(bed.knownHosts());
        String keyOfH2 = known.lines().filter(l -> l.startsWith(bed.address(h2) + ",")).findFirst().orElseThrow().split(" ", 2)[1];
        String keyOfH1 = known.lines().filter(l -> l.startsWith(bed.address(h1) + ",")).findFirst().orElseThrow().split(" ", 2)[1];
        Path fake = inventory.resolveSibling("known_hosts.changed");
        Files.writeString(fake, known.replace(keyOfH1, keyOfH2));
        Path inv = inventory.resolveSibling("changed-key.yaml");
        Files.writeString(inv, Files.readString(inventory).replace(bed.knownHosts().toString(), fake.toString()));
        Map<String, String> before = bed.fingerprints(FINGERPRINT);

        Gpuctl.Run r = Gpuctl.run("bootstrap", inv.toString());
        assertEquals(3, r.code(), r::toString);
        assertTrue(r.err().contains(h1 + ": HOST KEY CHANGED"), r::toString);
        assertTrue(r.err().contains(fingerprint(keyOfH1)) && r.err().contains(fingerprint(keyOfH2)), () -> "both fingerprints:\n" + r);
        assertTrue(r.err().contains("nothing was changed"), r::toString);
        assertEquals(before, bed.fingerprints(FINGERPRINT), "a refused preflight changed a host");
    }

    /** The SHA256 fingerprint of a known_hosts key ("ssh-ed25519 AAAA..."), as ssh-keygen prints it. */
    static String fingerprint(String key) throws Exception {
        Path f = Files.createTempFile("key", ".pub");
        Files.writeString(f, key + "\n");
        Process p = new ProcessBuilder("ssh-keygen", "-lf", f.toString()).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        Files.delete(f);
        Matcher m = Pattern.compile("SHA256:\\S+").matcher(out);
        assertTrue(m.find(), out);
        return m.group();
    }

    @Test @Order(2) void aFailingCommandIsShownWithHostStepCommandExitStatusStderrAndLog() throws Exception {
        // h1 loses its only apt source: installing chrony fails there, with apt's own words
        bed.ok(h1, "mv /etc/apt/sources.list.d/bedrepo.list /root/bedrepo.list.away && apt-get -qq update");
        try {
            Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", "time", inventory.toString());
            assertEquals(1, r.code(), r::toString);
            String err = r.err();
            assertTrue(err.contains(h1 + ": step time failed"), r::toString);
            assertTrue(err.contains("command: ") && err.contains("apt-get"), r::toString);
            assertTrue(err.contains("exit status: 100"), r::toString);
            assertTrue(err.contains("| E: ") && err.contains("chrony"), () -> "apt's own error line:\n" + r);
            Matcher log = Pattern.compile("log: (\\S+" + h1 + "\\.log)").matcher(err);
            assertTrue(log.find(), r::toString);
            assertTrue(Files.readString(Path.of(log.group(1))).contains("E: "), "the log has it too");
            assertTrue(err.contains("run bootstrap again"), r::toString);
        } finally {
            bed.ok(h1, "mv /root/bedrepo.list.away /etc/apt/sources.list.d/bedrepo.list && apt-get -qq update");
        }
    }

    @Test @Order(3) void ctrlCStartsNoMoreCommandsExits130AndAReRunResumesAndCompletes() throws Exception {
        Child run = new Child("bootstrap", inventory.toString());
        // interrupt in the middle of host preparation, when at least one step has changed a host
        assertTrue(run.awaitErr(" changed (", 240), () -> "no step changed anything:\n" + run.err);
        Runtime.getRuntime().exec(new String[] {"kill", "-INT", Long.toString(run.process.pid())}).waitFor();
        int code = run.exit(120);
        String err = run.err.toString();
        assertEquals(130, code, err);
        assertTrue(err.contains("interrupt: starting no more commands"), err);
        assertTrue(err.contains("interrupted; where each host stopped:"), err);
        assertTrue(err.contains("Run the same command again to resume"), err);
        assertFalse(err.contains("control plane"), "no later phase starts after the interrupt:\n" + err);
        // nothing is half-done: the re-run completes the cluster, and the next one changes nothing
        Gpuctl.Run resumed = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, resumed.code(), resumed::toString);
        Gpuctl.Run again = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
    }

    @Test @Order(4) void aCommandSlowerThanTheTimeoutIsStoppedAndNamed() {
        slowNextChronyQuery(h2, 60);
        try {
            long t0 = System.nanoTime();
            Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", "time", "--command-timeout", "8", inventory.toString());
            long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
            assertEquals(1, r.code(), r::toString);
            assertTrue(r.err().contains(h2 + ": step time failed"), r::toString);
            assertTrue(r.err().contains(h2 + ": step time failed: a command timed out"), r::toString);
            assertTrue(r.err().contains(h2 + ": command did not finish within 8s: `dpkg-query"), () -> "the slow command is named:\n" + r);
            assertTrue(seconds < 50, "the run did not wait for the slow command: " + seconds + " s");
        } finally {
            noSlowQueries(h2);
        }
    }

    @Test @Order(5) void aSecondBootstrapIsRefusedWhileOneRunsAndAKilledRunLeavesNoStaleLock() throws Exception {
        slowNextChronyQuery(h1, 120); // keeps the first run inside its time step, holding the lock
        Child first = new Child("bootstrap", inventory.toString());
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (bed.ssh(h1, "test -e /run/gpuctl-test-slow").exit() != 0 && first.process.isAlive() && System.nanoTime() < deadline) sleep(300);
            assertTrue(first.process.isAlive(), () -> "the first run ended early:\n" + first.err);
            String holder = bed.ok(bed.master(), "cat /run/gpuctl/bootstrap.holder");
            assertTrue(holder.contains("(pid " + first.process.pid() + ")"), holder);
            assertEquals(1, bed.ssh(bed.master(), "flock -n /run/gpuctl/bootstrap.lock true").exit(), "the lock is held");

            Map<String, String> before = bed.fingerprints(FINGERPRINT);
            Gpuctl.Run second = Gpuctl.run("bootstrap", inventory.toString());
            assertEquals(3, second.code(), second::toString);
            assertTrue(second.err().contains("another gpuctl bootstrap is running against this cluster"), second::toString);
            assertTrue(second.err().contains("(pid " + first.process.pid() + ")"), () -> "the holder is named:\n" + second);
            assertTrue(second.err().contains("nothing was changed"), second::toString);
            assertEquals(before, bed.fingerprints(FINGERPRINT));

            // the first run dies without a word (kill -9): its SSH session ends, and with it the lock
            first.process.destroyForcibly();
            first.exit(30);
        } finally {
            if (first.process.isAlive()) first.process.destroyForcibly();
            noSlowQueries(h1);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (bed.ssh(bed.master(), "flock -n /run/gpuctl/bootstrap.lock true").exit() != 0 && System.nanoTime() < deadline) sleep(500);
        Gpuctl.Run third = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, third.code(), third::toString);
        assertEquals(0, bed.ssh(bed.master(), "flock -n /run/gpuctl/bootstrap.lock true").exit(), "let go after a run that ended normally");
    }

    @Test @Order(6) void aHostThatGoesDownMidStepEndsTheRunAfterThePhaseNamedAndAReRunCompletes() throws Exception {
        slowNextChronyQuery(h2, 120);
        try {
            CompletableFuture<Gpuctl.Run> run = CompletableFuture.supplyAsync(() -> Gpuctl.run("bootstrap", inventory.toString()));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (bed.ssh(h2, "test -e /run/gpuctl-test-slow").exit() != 0 && !run.isDone() && System.nanoTime() < deadline) sleep(300);
            assertFalse(run.isDone(), () -> "the run ended before h2 went down:\n" + run.join());
            bed.reboot(h2); // h2 stops in the middle of its time step (and comes back later)
            Gpuctl.Run r = run.get(300, TimeUnit.SECONDS);
            assertEquals(1, r.code(), r::toString);
            assertTrue(r.err().contains(h2 + ": step time failed"), r::toString);
            assertTrue(r.err().contains("connection lost") || r.err().contains("cannot reach"), r::toString);
            assertFalse(r.err().contains("== phase 2"), "the run ends after the phase of the failure:\n" + r.err());
            assertTrue(r.err().contains("run bootstrap again"), r::toString);
        } finally {
            noSlowQueries(h2);
        }
        Gpuctl.Run resumed = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, resumed.code(), resumed::toString);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        Gpuctl.Run verify;
        do {
            verify = Gpuctl.run("verify", inventory.toString());
        } while (verify.code() != 0 && System.nanoTime() < deadline && sleep(3000));
        assertEquals(0, verify.code(), verify.toString());
    }

    @Test @Order(7) void editedFilesAreBackedUpOnceAndAnInvalidDaemonJsonIsNeverReplaced() throws Exception {
        // the fstab as the host came: its swap line active; the backup gpuctl took before its first edit
        assertTrue(bed.ok(h1, "cat /etc/fstab.gpuctl-orig").contains("/swap.img\tnone\tswap\tsw\t0\t0\n"), "the original fstab is kept");
        assertFalse(bed.ok(h1, "cat /etc/fstab").contains("\n/swap.img\t"), "and the live one has no active swap line");
        assertEquals("", bed.ok(h1, "ls -a /etc /etc/docker | grep -F .gpuctl-tmp || true"), "no temp file left beside an edited one");

        String daemon = "/etc/docker/daemon.json";
        String backupBefore = bed.ssh(h1, "sha256sum " + daemon + ".gpuctl-orig 2>&1").out();
        try {
            // not JSON: the step stops, says why, and leaves the file exactly as it is
            bed.ok(h1, "printf '{\"registry-mirrors\": [\"https://mirror.example\"],\n' > " + daemon + " && chmod 640 " + daemon);
            String broken = bed.ok(h1, "sha256sum " + daemon);
            Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", "runtime", "--hosts", h1, inventory.toString());
            assertEquals(1, r.code(), r::toString);
            assertTrue(r.err().contains(h1 + ": step runtime failed") && r.err().contains("not valid JSON"), r::toString);
            assertEquals(broken, bed.ok(h1, "sha256sum " + daemon), "an invalid daemon.json is not replaced");

            // valid JSON with the admin's own keys and no nvidia default: merged, the admin's keys stay, mode kept
            bed.ok(h1, "printf '{\"registry-mirrors\": [\"https://mirror.example\"], \"live-restore\": true,"
                + " \"exec-opts\": [\"native.cgroupdriver=cgroupfs\"]}\n' > " + daemon + " && chmod 640 " + daemon);
            String admins = bed.ok(h1, "sha256sum < " + daemon).strip();
            Gpuctl.Run fixed = Gpuctl.run("bootstrap", "--only", "runtime", "--hosts", h1, inventory.toString());
            assertEquals(0, fixed.code(), fixed::toString);
            assertEquals(1, fixed.count("changed"), fixed::toString);
            var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(bed.ok(h1, "cat " + daemon));
            assertEquals("https://mirror.example", json.path("registry-mirrors").path(0).asText());
            assertTrue(json.path("live-restore").asBoolean(), json::toString);
            assertEquals("nvidia", json.path("default-runtime").asText(), json::toString);
            assertEquals("native.cgroupdriver=systemd", json.path("exec-opts").path(0).asText(), json::toString);
            assertEquals("640 root:root", bed.ok(h1, "stat -c '%a %U:%G' " + daemon).strip(), "mode and owner are kept");
            // the first file gpuctl changed is the one kept: the host's own if gpuctl had edited it before, else the admin's
            String backup = bed.ok(h1, "sha256sum < " + daemon + ".gpuctl-orig").strip();
            if (backupBefore.contains("No such file")) assertEquals(admins, backup, "the backup is the file as it was before gpuctl's change");
            else assertEquals(backupBefore.split(" ")[0], backup.split(" ")[0], "the backup is taken once, never overwritten");
            // a second change keeps that first backup
            bed.ok(h1, "python3 -c \"import json;p='" + daemon + "';d=json.load(open(p));d.pop('default-runtime');json.dump(d,open(p,'w'))\"");
            Gpuctl.Run again = Gpuctl.run("bootstrap", "--only", "runtime", "--hosts", h1, inventory.toString());
            assertEquals(0, again.code(), again::toString);
            assertEquals(backup, bed.ok(h1, "sha256sum < " + daemon + ".gpuctl-orig").strip(), "never overwritten");
            assertTrue(bed.ok(h1, "docker info --format '{{.DefaultRuntime}} {{.CgroupDriver}}'").contains("nvidia systemd"), "the runtime's own answer");
        } finally {
            bed.ssh(h1, "chmod 644 " + daemon);
        }
    }
}
