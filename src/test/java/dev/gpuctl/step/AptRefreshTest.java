package dev.gpuctl.step;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The once-per-run refresh of apt's lists, run through a real sh with an {@code apt-get} of the test's own on PATH
 * that counts its calls: a run refreshes once, a later install of the same run does not, a changed repository or a
 * new run refreshes again, a pin does not, and a failed refresh fails the command and records nothing.
 */
class AptRefreshTest {
    @TempDir Path dir;

    private Path stamp() { return dir.resolve("run/apt-refreshed"); }
    private Path calls() { return dir.resolve("calls"); }

    /** Runs the refresh shell with run id {@code run}, then "installs" (echo); returns the exit status. */
    private int install(String run, int aptExit) throws Exception {
        Path bin = dir.resolve("bin");
        Files.createDirectories(bin);
        Files.createDirectories(dir.resolve("run"));
        Path apt = bin.resolve("apt-get");
        Files.writeString(apt, "#!/bin/sh\necho \"$*\" >> " + calls() + "\nexit " + aptExit + "\n");
        apt.toFile().setExecutable(true);
        String cmd = Sh.aptRefresh(stamp().toString(), dir.resolve("etc-apt").toString(), run) + "echo installed";
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", cmd).redirectInput(new File("/dev/null"))
            .redirectErrorStream(true).redirectOutput(dir.resolve("out").toFile());
        pb.environment().put("PATH", bin + ":/usr/bin:/bin");
        return pb.start().waitFor();
    }

    private int refreshes() throws IOException {
        return Files.exists(calls()) ? Files.readAllLines(calls()).size() : 0;
    }

    /** Sets a file's modification time {@code secondsAgo} seconds back (negative: ahead), creating it. */
    private void file(String rel, long secondsAgo) throws IOException {
        Path p = dir.resolve("etc-apt").resolve(rel);
        Files.createDirectories(p.getParent());
        Files.writeString(p, "x", StandardCharsets.UTF_8);
        Files.setLastModifiedTime(p, FileTime.from(Instant.now().minusSeconds(secondsAgo)));
    }

    /** /etc/apt as a host has it: its directories there before the run, an hour old. */
    private void aptDirs() throws IOException {
        for (String d : List.of("preferences.d", "sources.list.d", "")) {
            Path p = dir.resolve("etc-apt").resolve(d);
            Files.createDirectories(p);
        }
        file("sources.list", 3600);
        for (String d : List.of("preferences.d", "sources.list.d", "")) {
            Files.setLastModifiedTime(dir.resolve("etc-apt").resolve(d), FileTime.from(Instant.now().minusSeconds(3600)));
        }
    }

    @Test void oncePerRunWhileNoRepositoryChanged() throws Exception {
        aptDirs();
        assertEquals(0, install("aaaa", 0));
        assertEquals(1, refreshes(), "the run's first install refreshes");
        assertEquals("aaaa", Files.readString(stamp()).strip(), "and records the run");
        assertEquals(List.of("update -q"), Files.readAllLines(calls()));

        assertEquals(0, install("aaaa", 0));
        assertEquals(1, refreshes(), "a later install of the same run does not");

        file("preferences.d/gpuctl-kubernetes", -5);
        assertEquals(0, install("aaaa", 0));
        assertEquals(1, refreshes(), "a pin is read at install time: no refresh for it");

        file("sources.list.d/kubernetes.list", -5);
        assertEquals(0, install("aaaa", 0));
        assertEquals(2, refreshes(), "a repository written after the refresh refreshes again");

        assertEquals(0, install("bbbb", 0));
        assertEquals(3, refreshes(), "a new run refreshes once");
        assertEquals("bbbb", Files.readString(stamp()).strip());
    }

    @Test void aFailedRefreshFailsTheCommandAndRecordsNothing() throws Exception {
        aptDirs();
        assertEquals(100, install("aaaa", 100), "apt's status ends the command before the install");
        assertFalse(Files.readString(dir.resolve("out")).contains("installed"));
        assertFalse(Files.exists(stamp()));
        assertEquals(0, install("aaaa", 0));
        assertEquals(2, refreshes(), "the next install of the run refreshes again");
        assertTrue(Files.readString(dir.resolve("out")).contains("installed"));
    }

    @Test void everyRunHasItsOwnId() {
        String a = new Facts().get(Facts.RUN_ID).orElseThrow();
        String b = new Facts().get(Facts.RUN_ID).orElseThrow();
        assertTrue(a.matches("[0-9a-f]{16}"), a);
        assertFalse(a.equals(b));
    }

    @Test void installsRefreshThroughTheRunsId() {
        String cmd = Sh.aptInstall("install chrony", List.of("chrony")).command();
        assertTrue(cmd.contains("{{" + Facts.RUN_ID + "}}"), cmd);
        assertTrue(cmd.startsWith("export DEBIAN_FRONTEND=noninteractive; if [ \"$(cat /run/gpuctl-apt-refreshed "), cmd);
        assertTrue(cmd.endsWith("apt-get install -y -q --no-install-recommends chrony"), cmd);
    }
}
