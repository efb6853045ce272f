package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Nfs;
import dev.gpuctl.inventory.NfsExport;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.Role;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The NFS server step's exports file and its live-table comparison, run with sh and awk against exportfs -s output. */
class NfsStepsTest {
    /** The guide's exports, its checkpoints opened to root on the nodes on purpose (rootSquash: false). */
    static final Nfs NFS = new Nfs("m", List.of(new NfsExport("/export/dataset", true), new NfsExport("/export/ckpt", false, false)));
    static final List<Node> NODES = List.of(node("m", "10.0.0.10", Role.MASTER), node("w1", "10.0.0.11", Role.WORKER));

    static Node node(String name, String address, Role role) {
        return new Node(name, address, role, role == Role.WORKER, Map.of(), null, "ssh");
    }

    @Test void rootIsSquashedOnEveryExportByDefault() {
        Nfs nfs = new Nfs("m", List.of(new NfsExport("/export/dataset", true), new NfsExport("/export/ckpt", false)));
        assertEquals("""
            # Written by gpuctl from the inventory's storage.nfs.
            /export/dataset 10.0.0.10(ro,sync,no_subtree_check,root_squash) 10.0.0.11(ro,sync,no_subtree_check,root_squash)
            /export/ckpt 10.0.0.10(rw,sync,no_subtree_check,root_squash) 10.0.0.11(rw,sync,no_subtree_check,root_squash)
            """, NfsServerStep.exportsFile(nfs, NODES));
    }

    @Test void exportsFileNamesEveryNodeWithTheExportsMode() {
        assertEquals("""
            # Written by gpuctl from the inventory's storage.nfs.
            /export/dataset 10.0.0.10(ro,sync,no_subtree_check,root_squash) 10.0.0.11(ro,sync,no_subtree_check,root_squash)
            /export/ckpt 10.0.0.10(rw,sync,no_subtree_check,no_root_squash) 10.0.0.11(rw,sync,no_subtree_check,no_root_squash)
            """, NfsServerStep.exportsFile(NFS, NODES));
    }

    @Test void rootSquashDecidesNoRootSquashInTheExportsFile() {
        Nfs nfs = new Nfs("m", List.of(new NfsExport("/export/a", false, true), new NfsExport("/export/b", true, false)));
        assertEquals("""
            # Written by gpuctl from the inventory's storage.nfs.
            /export/a 10.0.0.10(rw,sync,no_subtree_check,root_squash) 10.0.0.11(rw,sync,no_subtree_check,root_squash)
            /export/b 10.0.0.10(ro,sync,no_subtree_check,no_root_squash) 10.0.0.11(ro,sync,no_subtree_check,no_root_squash)
            """, NfsServerStep.exportsFile(nfs, NODES));
    }

    /** The loader admits none of these; the writer still writes each so that exportfs decodes it back to itself. */
    @Test void aPathIsWrittenSoThatExportfsDecodesItToItself() {
        assertEquals("/export/Data_set-2.v1+x@y", NfsServerStep.exportsPath("/export/Data_set-2.v1+x@y"));
        assertEquals("/export/a\\040b\\042\\134057\\043\\054\\050rw\\051\\012\\303\\251",
            NfsServerStep.exportsPath("/export/a b\"\\057#,(rw)\n\u00e9"));
        Nfs hostile = new Nfs("m", List.of(new NfsExport("/x\"/ *(rw,no_root_squash)", true)));
        String file = NfsServerStep.exportsFile(hostile, NODES);
        assertEquals("/x\\042/\\040\\052\\050rw\\054no_root_squash\\051 10.0.0.10(ro,sync,no_subtree_check,root_squash)"
            + " 10.0.0.11(ro,sync,no_subtree_check,root_squash)", file.lines().toList().get(1));
    }

    static String withPath(Path dir, String cmd) {
        return "PATH=" + dir + ":$PATH; " + cmd;
    }

    /** Runs the live-table comparison with a fake exportfs that prints {@code table}. */
    static String run(Path dir, String table) throws IOException, InterruptedException {
        return run(dir, table, NFS);
    }

    static String run(Path dir, String table, Nfs nfs) throws IOException, InterruptedException {
        Path fake = dir.resolve("exportfs");
        Files.writeString(fake, "#!/bin/sh\ncat <<'EOF'\n" + table + "EOF\n");
        fake.toFile().setExecutable(true);
        Process p = new ProcessBuilder("sh", "-c", withPath(dir, NfsServerStep.liveTableDiff(nfs, NODES)))
            .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor());
        return out;
    }

    @Test void liveTableThatMatchesPrintsNothing(@TempDir Path dir) throws Exception {
        assertEquals("", run(dir, """
            /export/dataset  10.0.0.10(sync,wdelay,hide,no_subtree_check,sec=sys,ro,root_squash,no_all_squash)
            /export/dataset  10.0.0.11(sync,wdelay,hide,no_subtree_check,sec=sys,ro,root_squash,no_all_squash)
            /export/ckpt  10.0.0.10(sync,wdelay,hide,no_subtree_check,sec=sys,rw,no_root_squash,no_all_squash)
            /export/ckpt  10.0.0.11(sync,wdelay,hide,no_subtree_check,sec=sys,rw,no_root_squash,no_all_squash)
            /home  192.168.1.0/24(sync,rw)
            """));
    }

    @Test void liveTableDifferencesAreNamed(@TempDir Path dir) throws Exception {
        assertEquals("""
            /export/ckpt is exported to *, which is not a node
            /export/ckpt is not exported to 10.0.0.11
            /export/dataset is rw to 10.0.0.11, expected ro
            """, run(dir, """
            /export/dataset  10.0.0.10(sync,wdelay,hide,no_subtree_check,sec=sys,ro,root_squash,no_all_squash)
            /export/dataset  10.0.0.11(sync,wdelay,hide,no_subtree_check,sec=sys,rw,root_squash,no_all_squash)
            /export/ckpt  10.0.0.10(sync,wdelay,hide,no_subtree_check,sec=sys,rw,no_root_squash,no_all_squash)
            /export/ckpt  *(sync,wdelay,hide,no_subtree_check,sec=sys,rw,no_root_squash,no_all_squash)
            """));
        assertEquals("""
            /export/ckpt is not exported to 10.0.0.10
            /export/ckpt is not exported to 10.0.0.11
            /export/dataset is not exported to 10.0.0.10
            /export/dataset is not exported to 10.0.0.11
            """, run(dir, ""));
    }

    @Test void rootSquashInTheLiveTableIsCompared(@TempDir Path dir) throws Exception {
        assertEquals("""
            /export/ckpt is root_squash to 10.0.0.11, expected no_root_squash (rootSquash: false in the inventory)
            /export/dataset is no_root_squash to 10.0.0.10, expected root_squash (root on the client must not act as root)
            """, run(dir, """
            /export/dataset  10.0.0.10(sync,wdelay,hide,no_subtree_check,sec=sys,ro,no_root_squash,no_all_squash)
            /export/dataset  10.0.0.11(sync,wdelay,hide,no_subtree_check,sec=sys,ro,root_squash,no_all_squash)
            /export/ckpt  10.0.0.10(sync,wdelay,hide,no_subtree_check,sec=sys,rw,no_root_squash,no_all_squash)
            /export/ckpt  10.0.0.11(sync,wdelay,hide,no_subtree_check,sec=sys,rw,root_squash,no_all_squash)
            """));
    }

    /** awk gets the wanted table from its environment, which it does not decode: a backslash stays a backslash. */
    @Test void theWantedTableReachesAwkUndecoded(@TempDir Path dir) throws Exception {
        Nfs odd = new Nfs("m", List.of(new NfsExport("/export/a\\057b", true)));
        assertEquals("", run(dir, """
            /export/a\\057b  10.0.0.10(ro,root_squash)
            /export/a\\057b  10.0.0.11(ro,root_squash)
            """, odd));
        assertEquals("""
            /export/a\\057b is not exported to 10.0.0.10
            /export/a\\057b is not exported to 10.0.0.11
            """, run(dir, """
            /export/a/b  10.0.0.10(ro,root_squash)
            /export/a/b  10.0.0.11(ro,root_squash)
            """, odd));
    }

    /** The worker's test mount with a fake mount(8) and a touch that answers {@code touchSays}: its exit and output. */
    static String testMount(Path dir, NfsExport export, String touchSays) throws IOException, InterruptedException {
        for (var tool : Map.of("mount", "exit 0", "mountpoint", "exit 1", "umount", "exit 0",
                "touch", touchSays.isEmpty() ? "exit 0" : "echo \"touch: cannot touch '$1': " + touchSays + "\" >&2; exit 1").entrySet()) {
            Path fake = dir.resolve(tool.getKey());
            Files.writeString(fake, "#!/bin/sh\n" + tool.getValue() + "\n");
            fake.toFile().setExecutable(true);
        }
        Process p = new ProcessBuilder("sh", "-c", withPath(dir, NfsClientStep.testMount("nas:/export/x", export)))
            .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return (p.waitFor() + " " + out.strip()).strip();
    }

    @Test void aSquashedReadWriteExportMayRefuseRootAndAnUnsquashedOneMayNot(@TempDir Path dir) throws Exception {
        NfsExport squashed = new NfsExport("/export/x", false, true);
        NfsExport unsquashed = new NfsExport("/export/x", false, false);
        assertEquals("0", testMount(dir, squashed, ""));
        assertEquals("0", testMount(dir, squashed, "Permission denied"));
        assertTrue(testMount(dir, squashed, "Read-only file system").startsWith("1 cannot write: "));
        assertEquals("0", testMount(dir, unsquashed, ""));
        assertTrue(testMount(dir, unsquashed, "Permission denied").startsWith("1 cannot write: "));
        NfsExport ro = new NfsExport("/export/x", true);
        assertEquals("0", testMount(dir, ro, "Read-only file system"));
        assertEquals("1 a write to the read-only export succeeded", testMount(dir, ro, ""));
        assertEquals(", a write succeeds or root is squashed", NfsClientStep.proves(squashed));
        assertEquals(", a write succeeds", NfsClientStep.proves(unsquashed));
    }
}
