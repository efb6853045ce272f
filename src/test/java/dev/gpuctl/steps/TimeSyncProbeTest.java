package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The time step's synchronisation probe, run by a real shell against fake {@code chronyc} and {@code timedatectl}
 * (each prints what the real one prints; timedatectl also leaves a mark that it was asked).
 */
class TimeSyncProbeTest {
    @TempDir Path dir;

    private ExecResult run(String tracking, String sources, String ntpSynchronized) throws Exception {
        write("chronyc", "case \"$2\" in tracking) printf '%s' '" + tracking + "';; sources) printf '%s' '" + sources + "';; esac");
        write("timedatectl", "touch " + dir.resolve("asked") + "; echo " + ntpSynchronized);
        Process p = new ProcessBuilder("sh", "-c", "PATH=" + dir + ":$PATH; " + TimeSyncStep.synchronized_().command())
            .redirectInput(new File("/dev/null")).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new ExecResult(p.waitFor(), out, new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    private void write(String name, String body) throws Exception {
        Path f = dir.resolve(name);
        Files.writeString(f, "#!/bin/sh\n" + body + "\n");
        assertTrue(f.toFile().setExecutable(true));
    }

    private Optional<String> judge(ExecResult r) {
        return TimeSyncStep.synchronized_().judge().apply(r, new Facts());
    }

    private boolean timedatectlAsked() { return Files.exists(dir.resolve("asked")); }

    private static final String SYNCED = "Reference ID    : 0A000001 (10.0.0.1)\nStratum         : 3\nLeap status     : Normal\n";
    private static final String UNSYNCED = "Reference ID    : 00000000 ()\nStratum         : 0\nLeap status     : Not synchronised\n";
    private static final String SELECTED = "MS Name/IP address         Stratum Poll Reach LastRx Last sample\n"
        + "===============================================================================\n"
        + "^* 10.0.0.1                      2   6   377    12   +101us[ +130us] +/-  900us\n";
    private static final String NONE_SELECTED = "MS Name/IP address         Stratum Poll Reach LastRx Last sample\n"
        + "===============================================================================\n"
        + "^? 10.0.0.1                      0   6     0     -     +0ns[   +0ns] +/-    0ns\n";

    @Test void chronyWithASelectedSourceIsEnoughAndSystemdIsNotAsked() throws Exception {
        ExecResult r = run(SYNCED, SELECTED, "yes");
        assertEquals(Optional.empty(), judge(r), r.stdout());
        assertFalse(timedatectlAsked(), "timedatectl (D-Bus, can hang on a first start) is not asked when chrony proves it");
    }

    @Test void whenChronyDoesNotProveItSystemdIsAsked() throws Exception {
        ExecResult r = run(UNSYNCED, NONE_SELECTED, "yes");
        assertEquals(Optional.empty(), judge(r), r.stdout());
        assertTrue(timedatectlAsked());
    }

    @Test void normalLeapStatusWithoutASelectedSourceIsNotEnough() throws Exception {
        ExecResult r = run(SYNCED, NONE_SELECTED, "no");
        assertTrue(timedatectlAsked());
        assertTrue(judge(r).orElseThrow().contains("no source selected"), r.stdout());
    }

    @Test void neitherChronyNorSystemdSaysSoIsNotSynchronised() throws Exception {
        ExecResult r = run(UNSYNCED, NONE_SELECTED, "no");
        String problem = judge(r).orElseThrow();
        assertTrue(problem.contains("leap status not normal") && problem.contains("chronyc -n sources"), problem);
    }

    @Test void noChronyAtAllIsNotSynchronised() throws Exception {
        ExecResult r = run("", "", "no");
        assertTrue(judge(r).isPresent(), r.stdout());
    }
}
