package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.inventory.Nfs;
import dev.gpuctl.inventory.NfsExport;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Step 10a, the guide's NFS server (storage.nfs.server): nfs-kernel-server, one exports file restricted to the
 * cluster's node addresses (read-only where asked; root squashed unless the export's rootSquash is false, which by
 * default only the read-write exports are), {@code exportfs -ra} when the live export table differs from it,
 * nfs-server enabled and active.
 */
public final class NfsServerStep implements Step {
    static final String EXPORTS = "/etc/exports.d/gpuctl.exports";

    @Override public String id() { return "nfs"; }
    @Override public String title() { return "NFS server exports"; }
    @Override public boolean runsOn(HostContext ctx) {
        return ctx.inventory().nfs().map(n -> n.server().equals(ctx.node().name())).orElse(false);
    }

    /**
     * The exports file. A path is written with every byte outside {@code [A-Za-z0-9/._+@-]} as exportfs's octal escape
     * ({@code \ooo}, exports(5)), so that what exportfs decodes is the very path of the inventory: no quote, space,
     * '#', option list or backslash in a path can end it early or turn it into another (the loader admits none).
     */
    static String exportsFile(Nfs nfs, List<Node> nodes) {
        StringBuilder sb = new StringBuilder("# Written by gpuctl from the inventory's storage.nfs.\n");
        for (NfsExport e : nfs.exports()) {
            sb.append(exportsPath(e.path()));
            for (Node n : nodes) sb.append(' ').append(n.address()).append('(').append(e.options()).append(')');
            sb.append('\n');
        }
        return sb.toString();
    }

    /** A path as /etc/exports writes it: bytes other than {@code [A-Za-z0-9/._+@-]} as {@code \ooo}. */
    static String exportsPath(String path) {
        StringBuilder sb = new StringBuilder();
        for (byte b : path.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            boolean safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "/._+@-".indexOf(c) >= 0;
            if (safe) sb.append((char) c);
            else sb.append('\\').append(String.format("%03o", c));
        }
        return sb.toString();
    }

    /**
     * Prints, one per line, how the live export table ({@code exportfs -s}: one "PATH  CLIENT(OPTIONS)" line per
     * path and client) differs from the inventory for the inventory's paths: a missing client, a client that is
     * not a node, ro where rw is wanted or the other way round, root squashed where it should not be or the other
     * way round. Prints nothing when it matches. What is wanted reaches awk through the environment
     * ({@code ENVIRON}), which awk takes as it is: a {@code -v} assignment would decode backslash escapes in it.
     */
    static String liveTableDiff(Nfs nfs, List<Node> nodes) {
        String want = nfs.exports().stream()
            .flatMap(e -> nodes.stream().map(n -> e.path() + " " + n.address() + " " + (e.readOnly() ? "ro" : "rw")
                + " " + (e.rootSquash() ? "root_squash" : "no_root_squash")))
            .collect(Collectors.joining(";"));
        return "exportfs -s 2>&1 | GPUCTL_NFS_WANT=" + ShellWords.quote(want) + " awk '"
            + "BEGIN { n = split(ENVIRON[\"GPUCTL_NFS_WANT\"], w, \";\"); for (i = 1; i <= n; i++) { split(w[i], f, \" \");"
            + " need[f[1] \" \" f[2]] = f[3]; squash[f[1] \" \" f[2]] = f[4]; paths[f[1]] = 1 } }"
            + " ($1 in paths) { c = $2; o = $2; sub(/\\(.*/, \"\", c); sub(/^[^(]*\\(/, \"\", o); sub(/\\)$/, \"\", o);"
            + " k = $1 \" \" c; if (!(k in need)) { print $1 \" is exported to \" c \", which is not a node\"; next }"
            + " m = (\",\" o \",\" ~ /,ro,/) ? \"ro\" : \"rw\";"
            + " if (m != need[k]) print $1 \" is \" m \" to \" c \", expected \" need[k];"
            + " r = (\",\" o \",\" ~ /,no_root_squash,/) ? \"no_root_squash\" : \"root_squash\";"
            + " if (r != squash[k]) print $1 \" is \" r \" to \" c \", expected \" squash[k]"
            + " (squash[k] == \"root_squash\" ? \" (root on the client must not act as root)\" : \" (rootSquash: false in the inventory)\");"
            + " seen[k] = 1 }"
            + " END { for (k in need) if (!(k in seen)) { split(k, f, \" \"); print f[1] \" is not exported to \" f[2] } }'"
            + " | sort";
    }

    @Override public List<Probe> check(HostContext ctx) {
        Nfs nfs = ctx.inventory().nfs().orElseThrow();
        List<Node> nodes = ctx.inventory().nodes();
        List<String> dirs = nfs.exports().stream().map(NfsExport::path).toList();
        return List.of(
            Sh.packagesInstalled(List.of("nfs-kernel-server")),
            Probe.of("export directories exist", "for d in " + ShellWords.words(dirs) + "; do test -d \"$d\" || echo \"$d\"; done",
                r -> r.stdout().isBlank() ? Optional.empty()
                    : Optional.of("missing: " + String.join(", ", r.stdout().strip().split("\n")))),
            KernelStep.fileHolds(EXPORTS, exportsFile(nfs, nodes), "exports restricted to the cluster's nodes"),
            Probe.of("live export table matches (exportfs -s)", liveTableDiff(nfs, nodes),
                r -> r.stdout().isBlank() ? Optional.empty()
                    : Optional.of(String.join("; ", r.stdout().strip().split("\n")))),
            Sh.unitsRunning(List.of("nfs-server")));
    }

    @Override public List<Op> apply(HostContext ctx) {
        Nfs nfs = ctx.inventory().nfs().orElseThrow();
        List<Node> nodes = ctx.inventory().nodes();
        List<Op> ops = new ArrayList<>();
        ops.add(Sh.aptInstall("install nfs-kernel-server", List.of("nfs-kernel-server")));
        List<String> dirs = nfs.exports().stream().map(NfsExport::path).toList();
        ops.add(Op.Run.of("export directories", "install -d -m 0755 " + ShellWords.words(dirs))
            .unless("for d in " + ShellWords.words(dirs) + "; do test -d \"$d\" || exit 1; done"));
        ops.add(Op.Run.of("exports.d", "install -d -m 0755 /etc/exports.d").unless("test -d /etc/exports.d"));
        ops.add(Op.WriteFile.literal("NFS exports", EXPORTS, exportsFile(nfs, nodes), "0644"));
        ops.add(Op.Run.of("re-export (the exports file changed)", "exportfs -ra").onlyIfChanged(EXPORTS));
        ops.add(Sh.enableNow(List.of("nfs-server")));
        ops.add(Op.Run.of("re-export (the live table differs from the exports file)", "exportfs -ra")
            .unless("test -z \"$(" + liveTableDiff(nfs, nodes) + ")\""));
        return ops;
    }
}
