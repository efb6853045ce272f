package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The first half of a whole control plane's restore, on every master before any member is restored (etcd's disaster
 * recovery: no member of the old cluster may still run when the restored ones start): the archive's checked members
 * uploaded and checked on the master (sha256, the snapshot's own hash), the control plane stopped as the single
 * master's restore stops it ({@link RestoreStep#stopScript}: its static pod manifests moved to
 * /var/backups/gpuctl-before-restore-TIME/manifests-running), and the kubelet waited for until etcd and the API server
 * no longer run ({@link RestoreStep#stopped}). Already right: the master restored from this archive, or stopped for it
 * with the upload in place.
 */
public final class RestoreStopStep implements Step {
    private final Path upload;
    private final String uploadSha256;
    private final String sha256;

    public RestoreStopStep(Path upload, String uploadSha256, String sha256) {
        this.upload = upload;
        this.uploadSha256 = uploadSha256;
        this.sha256 = sha256;
    }

    @Override public String id() { return "restore-stop"; }
    @Override public String title() { return "stop this master's control plane for the restore"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

    @Override public List<Probe> check(HostContext ctx) {
        String crictl = "crictl --runtime-endpoint " + ShellWords.quote(ctx.cluster().runtime().criSocket());
        return List.of(Probe.of("the control plane stopped for this restore (or restored from it already)",
            "if grep -qx " + sha256 + " " + RestoreStep.MARKER + " 2>/dev/null; then echo restored; "
                + "elif [ -s " + RestoreStep.RESTORING + " ] && [ -f " + RestoreStep.UPLOAD + " ] && ! ls /etc/kubernetes/manifests/*.yaml >/dev/null 2>&1"
                + " && [ -z \"$(" + crictl + " ps --name '^(etcd|kube-apiserver)$' -q 2>/dev/null)\" ]; then echo stopped; else echo running; fi",
            r -> stoppedOrRestored(r.stdout()) ? Optional.empty() : Optional.of("its control plane runs")));
    }

    static boolean stoppedOrRestored(String out) {
        String s = out.strip();
        return s.equals("restored") || s.equals("stopped");
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(
            Op.Run.of("gpuctl's directory", "install -d -m 0700 " + Kube.DIR).unless("test -d " + Kube.DIR),
            new Op.Send("the archive's checked members, uploaded", upload, RestoreStep.UPLOAD, "0600").unless(restored()),
            Sh.aptInstall("etcd's restore tool (etcdutl, package etcd-client)", List.of("etcd-client"))
                .unless("command -v etcdutl || command -v etcdctl"),
            Op.Run.of("check the archive on the master; stop the control plane (its manifests aside)",
                RestoreStep.stopScript(uploadSha256, sha256)).unless(restored()),
            Op.Await.of("wait until etcd and the API server have stopped",
                RestoreStep.stopped(sha256, ctx.cluster().runtime().criSocket())).orElse("rm -f -- " + RestoreStep.UPLOAD));
    }

    private String restored() { return "grep -qx " + sha256 + " " + RestoreStep.MARKER; }
}
