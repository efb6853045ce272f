package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.Role;
import dev.gpuctl.inventory.SshSettings;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.Remotes;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Op;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes through symbolic links, refusals of unsafe targets, the modes a write gives, and user data written byte for
 * byte: the runner's file ops against this machine as a host ({@code connection: local}, as root).
 */
class HostFilesTest {
    @TempDir Path dir;
    final Facts facts = new Facts();
    Remote local;

    @BeforeEach void open() {
        assumeTrue("0".equals(ShRemote.run("id -u").stdout().strip()), "writes as root, like a host's root");
        SshSettings ssh = new SshSettings("root", 22, Path.of("/nonexistent/id"), Path.of("/nonexistent/kh"),
            Optional.empty(), Optional.empty());
        Remote opened = Remotes.open(new Node("here", "127.0.0.1", Role.MASTER, false, Map.of(), ssh, "local"), SshOptions.defaults(false));
        // the change journal goes to this JVM's own directory, not this machine's
        local = (Remote) java.lang.reflect.Proxy.newProxyInstance(Remote.class.getClassLoader(), new Class<?>[] {Remote.class}, (proxy, m, args) -> {
            if (m.getName().equals("exec")) args[0] = dev.gpuctl.hostfiles.TestJournals.redirect((String) args[0]);
            try {
                return m.invoke(opened, args);
            } catch (java.lang.reflect.InvocationTargetException e) {
                throw e.getCause();
            }
        });
    }

    @AfterEach void close() {
        if (local != null) local.close();
    }

    StepRunner runner() {
        return new StepRunner(local, new HostLog(dir.resolve("logs"), "here", facts), facts, Duration.ofSeconds(30), null);
    }

    String sh(String command) {
        var r = ShRemote.run(command);
        assertEquals(0, r.exit(), command + ": " + r);
        return r.stdout();
    }

    /** A site's config file kept as a link into its config management tree: etc/daemon.json -> cm/docker/daemon.json. */
    Path linkedConfig(String content, String mode, String owner) throws IOException {
        Files.createDirectories(dir.resolve("etc"));
        Files.createDirectories(dir.resolve("cm/docker"));
        Path target = dir.resolve("cm/docker/daemon.json");
        Files.writeString(target, content);
        sh("chmod " + mode + " " + target + " && chown " + owner + " " + target);
        Path link = dir.resolve("etc/daemon.json");
        Files.createSymbolicLink(link, Path.of("../cm/docker/daemon.json"));
        return link;
    }

    @Test void anEditOfALinkEditsItsTargetKeepsLinkModeAndOwnerAndBacksTheTargetUp() throws IOException {
        Path link = linkedConfig("{\"a\": 1}\n", "0640", "1234:2345");
        Op edit = new Op.EditFile("add b", link.toString(), "add b", s -> s.contains("\"b\"") ? s : s.replace("}", ", \"b\": 2}"), "0644");

        assertTrue(runner().apply(List.of(edit)));

        assertTrue(Files.isSymbolicLink(link), "the link was replaced");
        assertEquals("../cm/docker/daemon.json", Files.readSymbolicLink(link).toString());
        Path target = dir.resolve("cm/docker/daemon.json");
        assertEquals("{\"a\": 1, \"b\": 2}\n", Files.readString(target));
        assertEquals("640 1234:2345 regular file\n", sh("stat -c '%a %u:%g %F' " + target));
        Path backup = dir.resolve("etc/daemon.json.gpuctl-orig");
        assertEquals("{\"a\": 1}\n", Files.readString(backup));
        assertEquals("640 1234:2345 regular file\n", sh("stat -c '%a %u:%g %F' " + backup));
        assertEquals("", sh("ls -A " + dir.resolve("cm/docker") + " | grep -v '^daemon.json$' || true"), "a temp file was left");

        assertFalse(runner().apply(List.of(edit)), "a second run changed the file again");
        assertEquals("{\"a\": 1}\n", Files.readString(backup), "the backup was overwritten");
    }

    @Test void aWriteThroughALinkKeepsTheTargetsOwnerAndNeverAddsGroupOrWorldWrite() throws IOException {
        Path link = linkedConfig("old\n", "0600", "1234:2345");
        Op write = Op.WriteFile.of("conf", link.toString(), "new\n", "0666");

        assertTrue(runner().apply(List.of(write)));

        assertTrue(Files.isSymbolicLink(link));
        Path target = dir.resolve("cm/docker/daemon.json");
        assertEquals("new\n", Files.readString(target));
        assertEquals("644 1234:2345\n", sh("stat -c '%a %u:%g' " + target));
        Path fresh = dir.resolve("etc/new.conf");
        runner().apply(List.of(Op.WriteFile.of("new", fresh.toString(), "x\n", "0666")));
        assertEquals("644 0:0\n", sh("stat -c '%a %u:%g' " + fresh), "a new file was made group- or world-writable");
    }

    @Test void aLinkIntoADirectoryOtherUsersCanWriteIsRefusedAndNothingIsWritten() throws IOException {
        Path link = linkedConfig("{}\n", "0644", "0:0");
        sh("chmod 0777 " + dir.resolve("cm/docker"));
        Op edit = new Op.EditFile("merge", link.toString(), "merge", s -> "changed\n", "0644");

        var failed = assertThrows(StepRunner.OpFailed.class, () -> runner().apply(List.of(edit)));

        String message = failed.result.stderr();
        assertTrue(message.contains("refusing to write " + link), message);
        assertTrue(message.contains("directory " + dir.resolve("cm/docker") + " (mode 777) can be written by users other than root"), message);
        assertEquals("{}\n", Files.readString(dir.resolve("cm/docker/daemon.json")));
        assertTrue(Files.isSymbolicLink(link));
        assertFalse(Files.exists(dir.resolve("etc/daemon.json.gpuctl-orig")), "a refusal wrote a backup");
    }

    @Test void aTargetOwnedByAnotherUsersDirectoryOrNotARegularFileIsRefused() throws IOException {
        Path link = linkedConfig("{}\n", "0644", "0:0");
        sh("chown 1234 " + dir.resolve("cm"));
        var owned = HostFiles.parse(link.toString(), 0, sh(HostFiles.probeCommand(link.toString())));
        assertEquals(new HostFiles.Refused(link.toString(), "directory " + dir.resolve("cm") + " is owned by uid 1234, not root"), owned);

        Files.createDirectories(dir.resolve("etc/d"));
        Path toDir = dir.resolve("etc/to-dir");
        Files.createSymbolicLink(toDir, dir.resolve("etc/d"));
        var refusedDir = HostFiles.parse(toDir.toString(), 0, sh(HostFiles.probeCommand(toDir.toString())));
        assertTrue(refusedDir instanceof HostFiles.Refused r && r.reason().contains("is not a regular file (directory)"), refusedDir.toString());

        Path dangling = dir.resolve("etc/dangling");
        Files.createSymbolicLink(dangling, dir.resolve("nowhere"));
        var refusedDangling = HostFiles.parse(dangling.toString(), 0, sh(HostFiles.probeCommand(dangling.toString())));
        assertTrue(refusedDangling instanceof HostFiles.Refused r && r.reason().contains("a symbolic link to nothing"), refusedDangling.toString());

        assertInstanceOf(HostFiles.Absent.class, HostFiles.parse("/x", 0, sh(HostFiles.probeCommand(dir.resolve("etc/none").toString()))));
    }

    @Test void userDataIsWrittenByteForByteAndGpuctlsTemplatesStillGetTheirFacts() throws IOException {
        String manifest = "metadata:\n  annotations:\n    a: \"{{ .Values.x }}\"\n    b: \"{{.Values.x}}\"\n    c: \"{{kubeadm.version}}\"\n";
        Path file = dir.resolve("m.yaml");
        assertTrue(runner().apply(List.of(Op.WriteFile.literal("manifest", file.toString(), manifest, "0600"))));
        assertEquals(manifest, Files.readString(file));
        assertFalse(runner().apply(List.of(Op.WriteFile.literal("manifest", file.toString(), manifest, "0600"))));

        facts.put("kubeadm.version", "v1.35.0", false);
        Path config = dir.resolve("kubeadm.yaml");
        runner().apply(List.of(Op.WriteFile.of("config", config.toString(), "kubernetesVersion: {{kubeadm.version}}\n", "0600")));
        assertEquals("kubernetesVersion: v1.35.0\n", Files.readString(config));
    }

    @Test void aWriteGivesGpuctlsModeButNeverAddsGroupOrWorldWrite() {
        assertEquals("0644", HostFiles.mode(Optional.empty(), "0644", false));
        assertEquals("0644", HostFiles.mode(Optional.empty(), "0666", false));
        assertEquals("0600", HostFiles.mode(Optional.of("0644"), "0600", false));
        assertEquals("0644", HostFiles.mode(Optional.of("0600"), "0666", false));
        assertEquals("0664", HostFiles.mode(Optional.of("0664"), "0666", false));
        assertEquals("0640", HostFiles.mode(Optional.of("0640"), "0644", true));
        assertEquals("0600", HostFiles.mode(Optional.empty(), "0600", true));
    }

    @Test void theHostsAnswerIsReadStrictly() {
        assertEquals(new HostFiles.Existing("/etc/fstab", "/srv/cm/fstab", "0640", "0:4"),
            HostFiles.parse("/etc/fstab", 0, "file 640 0:4 /srv/cm/fstab\n"));
        assertEquals(new HostFiles.Existing("/etc/a b", "/etc/a b", "4755", "0:0"),
            HostFiles.parse("/etc/a b", 0, "file 4755 0:0 /etc/a b\n"));
        assertInstanceOf(HostFiles.Refused.class, HostFiles.parse("/etc/fstab", 1, "file 640 0:4 /srv/cm/fstab\n"));
        assertInstanceOf(HostFiles.Refused.class, HostFiles.parse("/etc/fstab", 0, ""));
        assertInstanceOf(HostFiles.Refused.class, HostFiles.parse("/etc/fstab", 0, "file 640 root:root /srv/cm/fstab\n"));
    }
}
