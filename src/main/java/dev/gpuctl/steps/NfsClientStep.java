package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.kube.KubeadmConfig;
import dev.gpuctl.inventory.Nfs;
import dev.gpuctl.inventory.NfsExport;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Step 10b, NFS clients: nfs-common on every worker. Its proof mounts each export from each worker (read-write,
 * so that the server's own export options decide) and shows that a read-only export refuses a write and a
 * read-write one takes it; it leaves no mount, directory or file behind, also when it fails.
 */
public final class NfsClientStep implements Step {
    /** Mount options of the test mount: soft with a short timeout, so a dead server fails the probe instead of hanging it. */
    static final String MOUNT_OPTIONS = "rw,soft,timeo=50,retrans=1";

    @Override public String id() { return "nfs"; }
    @Override public String title() { return "NFS client and test mounts"; }
    @Override public boolean runsOn(HostContext ctx) {
        // workers (an external server's too: gpuctl does not touch the server itself)
        return ctx.inventory().nfs().isPresent() && !ctx.node().isMaster()
            && !ctx.inventory().nfs().get().server().equals(ctx.node().name());
    }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Sh.packagesInstalled(List.of("nfs-common")));
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(Sh.aptInstall("install nfs-common", List.of("nfs-common")));
    }

    /**
     * The test mount of one export, as one sh command: a temporary mount point under /run, removed by an EXIT trap
     * together with the mount (lazily if busy); the probe file's name is unique to the host and the shell.
     * A read-only export must refuse a write as read-only; a read-write one must take it, or, when the export
     * squashes root (rootSquash), may refuse root with "Permission denied" (root is nobody there, and who else may
     * write is the directory's business). Prints what is wrong and exits 1, or exits 0.
     */
    static String testMount(String source, NfsExport export) {
        String write;
        if (export.readOnly()) {
            write = "if out=$(timeout 30 touch \"$f\" 2>&1); then rm -f \"$f\"; echo 'a write to the read-only export succeeded';"
                + " exit 1; fi; case $out in *'Read-only file system'*) ;;"
                + " *) echo \"a write failed, but not as read-only: $out\"; exit 1 ;; esac; exit 0";
        } else {
            String refused = export.rootSquash()
                ? "case $out in *'Permission denied'*) exit 0 ;; esac; "
                : "";
            write = "if ! out=$(timeout 30 touch \"$f\" 2>&1); then " + refused + "echo \"cannot write: $out\"; exit 1; fi;"
                + " rm -f \"$f\" || { echo \"cannot remove $f\"; exit 1; }; exit 0";
        }
        return "d=$(mktemp -d /run/gpuctl-nfs-verify.XXXXXX) || exit 1;"
            + " trap 'if mountpoint -q \"$d\"; then umount \"$d\" 2>/dev/null || umount -l \"$d\"; fi; rmdir \"$d\"' EXIT;"
            + " if ! out=$(timeout 60 mount -t nfs -o " + MOUNT_OPTIONS + " " + ShellWords.quote(source) + " \"$d\" 2>&1); then"
            + " echo \"mount failed: $out\"; exit 1; fi;"
            + " f=\"$d/.gpuctl-verify.$(hostname).$$\"; " + write;
    }

    /** What the test mount of an export proves, in the words verify prints. */
    static String proves(NfsExport e) {
        if (e.readOnly()) return ", a write is refused (read-only)";
        return e.rootSquash() ? ", a write succeeds or root is squashed" : ", a write succeeds";
    }

    @Override public List<Probe> verify(HostContext ctx) {
        Nfs nfs = ctx.inventory().nfs().orElseThrow();
        String server = nfs.address(ctx.inventory());
        List<Probe> probes = new ArrayList<>(check(ctx));
        for (NfsExport e : nfs.exports()) {
            String src = KubeadmConfig.hostForUrl(server) + ":" + e.path();
            probes.add(Probe.of("mounts " + src + proves(e), testMount(src, e),
                r -> r.ok() ? Optional.empty()
                    : Optional.of(Probe.oneLine(r.stdout().isBlank() ? "exit " + r.exit() + Probe.stderrHint(r) : r.stdout()))));
        }
        return probes;
    }
}
