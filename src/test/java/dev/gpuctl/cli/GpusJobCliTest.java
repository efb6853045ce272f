package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** gpuctl gpus and gpuctl job: exit codes and streams, without a cluster. */
class GpusJobCliTest {
    static final Path EXAMPLE = Path.of("inventory.example.yaml");
    static final Path SPEC = Path.of("src/test/resources/jobs/detector-train.yaml");

    record Run(int code, String out, String err) {
        @Override public String toString() { return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err; }
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(args, new PrintWriter(out), new PrintWriter(err), Map.of());
        return new Run(code, out.toString(), err.toString());
    }

    /** The example inventory beside a state dir of its own. */
    static Path inventoryIn(Path dir) throws IOException {
        Path inv = dir.resolve("inventory.yaml");
        Files.copy(EXAMPLE, inv);
        return inv;
    }

    @Test void jobLogsAndDeleteTakeNameThenInventoryAndCheckTheNameFirst(@TempDir Path dir) {
        for (String cmd : java.util.List.of("logs", "delete")) {
            Run missing = run("job", cmd, "train-a", dir.resolve("nowhere.yaml").toString());
            assertEquals(2, missing.code, missing::toString);
            assertTrue(missing.err.contains("nowhere.yaml") && !missing.err.contains("Unmatched argument"), missing::toString);
            Run bad = run("job", cmd, "train;rm -rf /", "-i", dir.resolve("nowhere.yaml").toString());
            assertEquals(2, bad.code, bad::toString);
            assertTrue(bad.err.contains("NAME 'train;rm -rf /' is not a job name (expected at most 63 lowercase letters"), bad::toString);
            Run ns = run("job", cmd, "train-a", "-n", "Team_A", dir.resolve("nowhere.yaml").toString());
            assertTrue(ns.code == 2 && ns.err.contains("--namespace 'Team_A' is not a job namespace"), ns::toString);
        }
        Run list = run("job", "list", "-n", "x y", dir.resolve("nowhere.yaml").toString());
        assertEquals(2, list.code, list::toString);
    }

    @Test void renderPrintsTheJobAndSaysWhatItCouldNotCheck(@TempDir Path dir) throws IOException {
        Run r = run("job", "render", SPEC.toString(), inventoryIn(dir).toString());
        assertEquals(0, r.code, r::toString);
        assertEquals(Files.readString(Path.of("src/test/resources/golden/job-detector-train.yaml")), r.out, r::toString);
        assertTrue(r.err.contains("gpus not checked against the nodes' GPU counts: none known yet"), r::toString);
    }

    @Test void renderChecksGpusAgainstWhatGpuctlGpusSaw(@TempDir Path dir) throws IOException {
        Path inv = inventoryIn(dir);
        Path seen = dir.resolve(".gpuctl/gpu-lab/gpus.json");
        Files.createDirectories(seen.getParent());
        Files.writeString(seen, """
            {"schema": "gpuctl.gpus/v1", "cluster": "gpu-lab", "time": "2026-12-02T10:00:00Z",
             "nodes": [{"name": "worker-1", "gpus": 1, "allocatable": 1}, {"name": "worker-2", "gpus": 1, "allocatable": 0}]}""");
        Run r = run("job", "render", SPEC.toString(), "-i", inv.toString());
        assertEquals(2, r.code, r::toString);
        assertEquals("", r.out, r::toString);
        assertTrue(r.err.contains(SPEC + ":5:7: gpus: 2 is more than any node has: the largest, worker-1, has 1 GPU"
            + " (as gpuctl gpus saw it at 2026-12-02T10:00:00Z)"), r::toString);
        Files.writeString(seen, Files.readString(seen).replace("\"gpus\": 1, \"allocatable\": 0", "\"gpus\": 2, \"allocatable\": 0"));
        Run fits = run("job", "render", SPEC.toString(), "-i", inv.toString());
        assertEquals(0, fits.code, fits::toString);
        assertEquals("", fits.err, fits::toString);
    }

    @Test void aBrokenSpecListsEveryProblemWithExit2(@TempDir Path dir) throws IOException {
        Path spec = dir.resolve("job.yaml");
        Files.writeString(spec, "name: x\nimage: y\ngpus: 0\ndataset: nope\n");
        Run r = run("job", "render", spec.toString(), inventoryIn(dir).toString());
        assertEquals(2, r.code, r::toString);
        assertTrue(r.err.startsWith("gpuctl: " + spec + " has 2 problems:\n" + spec + ":3:7: gpus: 0"), r::toString);
        assertTrue(r.err.contains(spec + ":4:10: dataset: no export 'nope'"), r::toString);
        assertFalse(r.err.contains("Exception"), r::toString);
        Run missing = run("job", "submit", dir.resolve("none.yaml").toString(), dir.resolve("inventory.yaml").toString());
        assertEquals(2, missing.code, missing::toString);
        assertTrue(missing.err.contains("none.yaml: cannot read: no such file"), missing::toString);
        assertEquals(2, run("job").code);
    }

    static Path key(Path dir) throws IOException {
        Path key = dir.resolve("id");
        try {
            Process p = new ProcessBuilder("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key.toString()).inheritIO().start();
            assertEquals(0, p.waitFor());
        } catch (InterruptedException e) {
            throw new IOException(e);
        }
        return key;
    }

    /** --sample: a duration up to 5m, 0 for none; anything else is exit 2 before an inventory is read or a host asked. */
    @Test void aWrongSampleWindowIsExit2BeforeAnythingIsAsked(@TempDir Path dir) {
        String nowhere = dir.resolve("nowhere.yaml").toString();
        Run tooLong = run("gpus", "--sample", "6m", nowhere);
        assertEquals(2, tooLong.code, tooLong::toString);
        assertTrue(tooLong.err.contains("--sample 360s is too long: at most 5m"), tooLong::toString);
        Run notADuration = run("gpus", "--sample", "fast", nowhere);
        assertEquals(2, notADuration.code, notADuration::toString);
        assertTrue(notADuration.err.contains("'fast' is not a duration"), notADuration::toString);
        Run zero = run("gpus", "--sample", "0", nowhere);
        assertEquals(2, zero.code, zero::toString);
        assertTrue(zero.err.contains("nowhere.yaml") && !zero.err.contains("--sample"), "0 is no sampling, accepted: " + zero);
    }

    /** A master that refuses connections (a loopback port nobody listens on): exit 1, the host named. */
    @Test void anUnreachableMasterIsExit6WithTheHostNamed(@TempDir Path dir) throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path inv = dir.resolve("inventory.yaml");
        Files.writeString(inv, """
            cluster: { name: loop, kubernetesVersion: "1.35" }
            ssh: { port: %d, identityFile: %s, knownHosts: %s }
            nodes:
              - { name: m, address: 127.0.0.1, role: master }
              - { name: w, address: 127.0.0.2, role: worker }
            storage: { nfs: { server: m, exports: [ { path: /export/ckpt } ] } }
            """.formatted(port, key(dir), dir.resolve("known_hosts")));
        Run gpus = run("gpus", inv.toString());
        assertEquals(6, gpus.code, gpus::toString);
        assertTrue(gpus.err.startsWith("gpuctl: m: cannot connect to 127.0.0.1:" + port), gpus::toString);
        Path spec = dir.resolve("job.yaml");
        Files.writeString(spec, "{name: a, image: b, gpus: 1, checkpoint: ckpt}\n");
        Run submit = run("job", "submit", spec.toString(), inv.toString());
        assertEquals(6, submit.code, submit::toString);
        assertTrue(submit.err.startsWith("gpuctl: m: cannot connect to 127.0.0.1:" + port), submit::toString);
    }

    /** No identity file: gpus and job submit, like bootstrap and verify, are exit 2 before connecting to anything. */
    @Test void aMissingIdentityFileIsExit2ForGpusAndJobSubmit(@TempDir Path dir) throws IOException {
        Path inv = CliTest.loopbackInventory(dir, dir.resolve("no_such_key"));
        Files.writeString(inv, Files.readString(inv) + "storage: { nfs: { server: m, exports: [ { path: /export/ckpt } ] } }\n");
        Path spec = dir.resolve("job.yaml");
        Files.writeString(spec, "{name: a, image: b, gpus: 1, checkpoint: ckpt}\n");
        for (String[] args : new String[][] {{"gpus", inv.toString()}, {"job", "submit", spec.toString(), inv.toString()}}) {
            Run r = run(args);
            assertEquals(2, r.code, () -> String.join(" ", args) + ": " + r);
            assertTrue(r.err.contains("cannot use the identity file " + dir.resolve("no_such_key")), r::toString);
            assertTrue(r.err.contains("Nothing was connected to."), r::toString);
        }
    }

    /** A master with no admin.conf (here: this machine, connection: local) has no cluster yet: exit 2 and what to run. */
    @Test void withoutAClusterGpusJobSubmitAndJoinTokenAreExit2(@TempDir Path dir) throws IOException {
        org.junit.jupiter.api.Assumptions.assumeFalse(Files.exists(Path.of("/etc/kubernetes/admin.conf")), "this machine is a cluster's master");
        Path inv = dir.resolve("inventory.yaml");
        Files.writeString(inv, """
            cluster: { name: local, kubernetesVersion: "1.35" }
            ssh: { identityFile: %s, knownHosts: %s }
            nodes:
              - { name: here, address: 127.0.0.1, role: master, connection: local }
              - { name: w, address: 127.0.0.2, role: worker }
            storage: { nfs: { server: here, exports: [ { path: /export/ckpt } ] } }
            """.formatted(key(dir), dir.resolve("known_hosts")));
        Path spec = dir.resolve("job.yaml");
        Files.writeString(spec, "{name: a, image: b, gpus: 1, checkpoint: ckpt}\n");
        for (String[] args : new String[][] {{"gpus", inv.toString()}, {"job", "submit", spec.toString(), inv.toString()},
                {"join-token", "--refresh", "--allow-local", inv.toString()}}) {
            Run r = run(args);
            assertEquals(2, r.code, () -> String.join(" ", args) + ": " + r);
            assertEquals("gpuctl: here: no cluster yet: the master has no /etc/kubernetes/admin.conf (`test -s /etc/kubernetes/admin.conf`"
                + " exit 1). Create it with: gpuctl bootstrap " + inv + "\n", r.err, r::toString);
            assertEquals("", r.out, r::toString);
        }
        Run cached = run("join-token", inv.toString());
        assertEquals(2, cached.code, cached::toString);
        assertTrue(cached.err.startsWith("gpuctl: no cached join command (" + dir.resolve(".gpuctl/local/join-command")
            + "); create one: gpuctl join-token --refresh " + inv), cached::toString);
    }
}
