package dev.gpuctl.steps;

import dev.gpuctl.inventory.Nfs;
import dev.gpuctl.inventory.NfsExport;
import dev.gpuctl.inventory.Node;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Step 10a, the guide's NFS server (storage.nfs.server): nfs-kernel-server, one exports file restricted to the
 * cluster's node addresses (read-only where asked), {@code exportfs -ra} when it changed.
 */
public final class NfsServerStep implements Step {
    static final String EXPORTS = "/etc/exports.d/gpuctl.exports";

    @Override public String id() { return "nfs"; }
    @Override public String title() { return "NFS server exports"; }
    @Override public boolean runsOn(HostContext ctx) {
        return ctx.inventory().nfs().map(n -> n.server().equals(ctx.node().name())).orElse(false);
    }

    static String exportsFile(Nfs nfs, List<Node> nodes) {
        StringBuilder sb = new StringBuilder("# Written by gpuctl from the inventory's storage.nfs.\n");
        for (NfsExport e : nfs.exports()) {
            sb.append(e.path());
            String opts = (e.readOnly() ? "ro" : "rw") + ",sync,no_subtree_check" + (e.readOnly() ? "" : ",no_root_squash");
            for (Node n : nodes) sb.append(' ').append(n.address()).append('(').append(opts).append(')');
            sb.append('\n');
        }
        return sb.toString();
    }

    @Override public List<Probe> check(HostContext ctx) {
        Nfs nfs = ctx.inventory().nfs().orElseThrow();
        String content = exportsFile(nfs, ctx.inventory().nodes());
        return List.of(
            Sh.packagesInstalled(List.of("nfs-kernel-server")),
            KernelStep.fileHolds(EXPORTS, content, "exports restricted to the cluster's nodes"),
            Probe.of("every export is live (exportfs -v)", "exportfs -v", r -> {
                var missing = nfs.exports().stream().map(NfsExport::path)
                    .filter(p -> r.stdout().lines().noneMatch(l -> l.startsWith(p))).toList();
                return missing.isEmpty() ? Optional.empty() : Optional.of("not exported: " + missing);
            }),
            Sh.unitsRunning(List.of("nfs-server")));
    }

    @Override public List<Op> apply(HostContext ctx) {
        Nfs nfs = ctx.inventory().nfs().orElseThrow();
        List<Op> ops = new ArrayList<>();
        ops.add(Sh.aptInstall("install nfs-kernel-server", List.of("nfs-kernel-server")));
        List<String> dirs = nfs.exports().stream().map(NfsExport::path).toList();
        ops.add(Op.Run.of("export directories", "install -d -m 0755 " + Sh.words(dirs))
            .unless("for d in " + Sh.words(dirs) + "; do test -d \"$d\" || exit 1; done"));
        ops.add(Op.Run.of("exports.d", "install -d -m 0755 /etc/exports.d").unless("test -d /etc/exports.d"));
        ops.add(Op.WriteFile.of("NFS exports", EXPORTS, exportsFile(nfs, ctx.inventory().nodes()), "0644"));
        ops.add(Op.Run.of("re-export", "exportfs -ra").onlyIfChanged(EXPORTS));
        ops.add(Sh.enableNow(List.of("nfs-server")));
        return ops;
    }
}
