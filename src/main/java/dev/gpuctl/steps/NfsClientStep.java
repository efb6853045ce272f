package dev.gpuctl.steps;

import dev.gpuctl.hostconf.KubeadmConfig;
import dev.gpuctl.inventory.Nfs;
import dev.gpuctl.inventory.NfsExport;
import dev.gpuctl.inventory.Node;
import java.util.ArrayList;
import java.util.List;

/** Step 10b, NFS clients: nfs-common on every worker, and a test mount of each export from each of them. */
public final class NfsClientStep implements Step {
    @Override public String id() { return "nfs"; }
    @Override public String title() { return "NFS client and test mounts"; }
    @Override public boolean runsOn(HostContext ctx) {
        return ctx.inventory().nfs().isPresent() && !ctx.node().isMaster()
            && !ctx.inventory().nfs().get().server().equals(ctx.node().name());
    }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Sh.packagesInstalled(List.of("nfs-common")));
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(Sh.aptInstall("install nfs-common", List.of("nfs-common")));
    }

    @Override public List<Probe> verify(HostContext ctx) {
        Nfs nfs = ctx.inventory().nfs().orElseThrow();
        Node server = ctx.inventory().node(nfs.server()).orElseThrow();
        List<Probe> probes = new ArrayList<>(check(ctx));
        for (NfsExport e : nfs.exports()) {
            String src = KubeadmConfig.hostForUrl(server.address()) + ":" + e.path();
            probes.add(Probe.succeeds("mounts " + src + (e.readOnly() ? " (read-only: writes are refused)" : ""),
                "d=$(mktemp -d) && mount -t nfs -o " + (e.readOnly() ? "ro" : "rw") + ",soft,timeo=50,retrans=1 " + Sh.quote(src) + " \"$d\" && "
                    + (e.readOnly() ? "! touch \"$d/.gpuctl-write-test\" 2>/dev/null" : "true")
                    + "; rc=$?; umount \"$d\" 2>/dev/null; rmdir \"$d\"; exit $rc"));
        }
        return probes;
    }
}
