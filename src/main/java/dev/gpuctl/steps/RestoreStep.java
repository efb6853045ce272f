package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.backup.BackupArchive;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Restores the control plane on the master from a backup archive ({@link BackupStep}): the archive's checked members
 * (regular files and directories at backup's own paths, {@link BackupArchive#repack}: nothing else reaches the master)
 * are uploaded (0600, into gpuctl's 0700 directory) and checked against their sha256 on the master; the running control plane, if any, is
 * stopped (its static pod manifests moved aside, then the kubelet); what the master had (PKI, kubeconfigs, manifests,
 * kubelet configuration, /var/lib/etcd) is moved aside to /var/backups/gpuctl-before-restore-TIME/ (0700); the snapshot is
 * restored into a fresh data directory ({@code etcdutl snapshot restore --data-dir}, with the etcd member's name and peer
 * URLs from the archived etcd manifest) that then becomes /var/lib/etcd; the PKI and configuration are put back; the
 * kubelet starts the control plane (gpuctl's own directory with its manifest copies among what comes back). The workers
 * keep their kubelet.conf: same CA, same endpoint, so they come back alone. Then, as bootstrap leaves them, admin.conf
 * becomes the ssh user's ~/.kube/config and this machine's .gpuctl/CLUSTER/admin.conf (the same ops as
 * {@link ControlPlaneStep}), so verify right after a restore is clean. /etc/kubernetes/gpuctl/restored-from holds the
 * archive's sha256, which is (with both kubeconfigs in place) what "already done" means.
 */
public final class RestoreStep implements Step {
    static final String UPLOAD = Kube.DIR + "/restore.tar.gz";
    static final String MARKER = Kube.DIR + "/restored-from";
    static final String WORK_PREFIX = "/var/tmp/gpuctl-restore.";
    static final String KUBELET_CURRENT = "/var/lib/kubelet/pki/kubelet-client-current.pem";

    private final Path upload;
    private final String uploadSha256;
    private final String sha256;

    /**
     * @param upload       what the master gets, a file on this machine: the archive's checked members only
     *                     ({@link BackupArchive#repack}), streamed to the master, never read into memory
     * @param uploadSha256 its sha256, checked on the master before anything moves
     * @param sha256       the archive's own sha256, checked against its .sha256 file on this machine (the marker's content)
     */
    public RestoreStep(Path upload, String uploadSha256, String sha256) {
        this.upload = upload;
        this.uploadSha256 = uploadSha256;
        this.sha256 = sha256;
    }

    @Override public String id() { return "restore"; }
    @Override public String title() { return "restore the control plane from the backup"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }
    @Override public boolean readsCluster() { return true; }

    @Override public List<Probe> check(HostContext ctx) {
        List<Probe> probes = new ArrayList<>();
        probes.add(restored());
        probes.addAll(ControlPlaneStep.kubeconfigProbes(ctx));
        return List.copyOf(probes);
    }

    private Probe restored() {
        return Probe.equals("the master restored from this archive (sha256 in " + MARKER + ")",
            "cat " + MARKER + " 2>/dev/null || true", sha256);
    }

    @Override public List<Probe> verify(HostContext ctx) {
        List<Probe> probes = new ArrayList<>(check(ctx));
        probes.addAll(List.of(
            Probe.equals("API server answers (kubectl get --raw /readyz)", "timeout 20 " + Kube.kubectl("get --raw=/readyz 2>&1") + " || true", "ok")
                .waitingUpTo(Duration.ofMinutes(4)),
            Probe.of("every node Ready", Kube.kubectl("get nodes --no-headers 2>&1"), r -> notReady(r.stdout(), r.ok()))
                .waitingUpTo(Duration.ofMinutes(4))));
        return List.copyOf(probes);
    }

    /** Which nodes `kubectl get nodes --no-headers` shows not Ready; empty when all are (and there is at least one). */
    static Optional<String> notReady(String out, boolean ok) {
        if (!ok) return Optional.of("kubectl get nodes failed: " + Probe.oneLine(out));
        // a header line (NAME STATUS ...) is skipped: node names are lower-case
        List<String> bad = out.lines().filter(l -> !l.isBlank() && !l.startsWith("NAME ")).map(l -> l.trim().split("\\s+"))
            .filter(f -> f.length < 2 || !f[1].equals("Ready")).map(f -> f[0] + (f.length > 1 ? " " + f[1] : "")).toList();
        if (out.lines().noneMatch(l -> !l.isBlank() && !l.startsWith("NAME "))) return Optional.of("no nodes yet");
        return bad.isEmpty() ? Optional.empty() : Optional.of("not Ready: " + String.join(", ", bad));
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(
            Op.Run.of("gpuctl's directory", "install -d -m 0700 " + Kube.DIR).unless("test -d " + Kube.DIR),
            new Op.Send("the archive's checked members, uploaded", upload, UPLOAD, "0600").unless(done()),
            Sh.aptInstall("etcd's restore tool (etcdutl, package etcd-client)", List.of("etcd-client"))
                .unless("command -v etcdutl || command -v etcdctl"),
            Op.Run.of("check the archive on the master; stop the control plane (its manifests aside)", stopScript(uploadSha256, sha256))
                .unless(done()),
            Op.Await.of("wait until etcd and the API server have stopped", stopped(sha256, criSocket(ctx))).orElse("rm -f -- " + UPLOAD),
            Op.Run.of("restore etcd, the PKI and the configuration; start the control plane",
                script(uploadSha256, sha256)).unless(done()),
            // what bootstrap leaves besides the master's files: the ssh user's kubeconfig, this machine's copy
            ControlPlaneStep.userKubeconfigOp(ctx),
            ControlPlaneStep.fetchKubeconfigOp(ctx));
    }

    /** The master already restored from this archive (its marker names the archive's sha256). */
    private String done() {
        return "grep -qx " + sha256 + " " + MARKER;
    }

    private static String criSocket(HostContext ctx) { return ctx.cluster().runtime().criSocket(); }

    /** Where the first part of a restore leaves the path of the directory that holds what the master had. */
    static final String RESTORING = "/var/backups/gpuctl-restoring";
    /** How long the kubelet may take to stop etcd and the API server once their manifests have left. */
    static final Duration STOP_WAIT = Duration.ofSeconds(120);

    /**
     * The restore's first part: the upload checked against its sha256 and its snapshot's own integrity, before anything
     * on the master moves; then the directory for what the master had made (or the one a cut-off restore made, named in
     * {@link #RESTORING}) and the running control plane's static pod manifests moved into it. The upload is removed
     * when this fails; else it stays for {@link #script}.
     */
    static String stopScript(String uploadSha256, String sha256) {
        return "set -eu; umask 077; b=" + UPLOAD + "; ok=0; "
            + "find /var/tmp -maxdepth 1 -name 'gpuctl-restore.*' -type d -user root -exec rm -rf -- {} + ; "
            + "d=$(mktemp -d " + WORK_PREFIX + "XXXXXXXX); trap 'rm -rf -- \"$d\"; [ $ok = 1 ] || rm -f -- \"$b\"' EXIT; "
            + checkUpload(uploadSha256, "$b")
            + "mkdir \"$d/x\"; tar -xzf \"$b\" -C \"$d/x\" " + BackupArchive.SNAPSHOT + "; "
            // the snapshot's own integrity (its appended hash), before anything on the master is stopped or moved
            + "if command -v etcdutl >/dev/null 2>&1; then etcdutl snapshot status \"$d/x/" + BackupArchive.SNAPSHOT + "\" >/dev/null; "
            + "else ETCDCTL_API=3 etcdctl snapshot status \"$d/x/" + BackupArchive.SNAPSHOT + "\" >/dev/null; fi; "
            + "aside=$(cat " + RESTORING + " 2>/dev/null || true); "
            + "if [ -z \"$aside\" ] || [ ! -d \"$aside\" ]; then ts=$(date -u +%Y%m%dT%H%M%SZ); aside=/var/backups/gpuctl-before-restore-$ts; "
            + "mkdir -p /var/backups; install -d -m 0700 \"$aside\"; echo \"$aside\" >" + RESTORING + "; fi; "
            // stop the control plane: the kubelet stops a static pod whose manifest leaves the directory (the engine waits)
            + "if ls /etc/kubernetes/manifests/*.yaml >/dev/null 2>&1; then mkdir -p \"$aside/manifests-running\"; "
            + "mv /etc/kubernetes/manifests/*.yaml \"$aside/manifests-running/\"; echo \"the control plane's manifests moved to $aside/manifests-running\"; fi; "
            + "ok=1";
    }

    private static String checkUpload(String uploadSha256, String file) {
        return "echo '" + uploadSha256 + "  '\"" + file + "\" | sha256sum -c --quiet - "
            + "|| { echo 'the archive on the master does not match its sha256 " + uploadSha256 + " (damaged upload): run restore again' >&2; exit 1; }; ";
    }

    /**
     * Right once etcd and the API server no longer run (their manifests moved aside by {@link #stopScript}), or when the
     * master is already restored from this archive (nothing was stopped).
     */
    static Probe stopped(String sha256, String criSocket) {
        return Probe.of("etcd and the API server stopped by the kubelet", "if grep -qx " + sha256 + " " + MARKER + " 2>/dev/null; then echo restored; "
                + "else crictl --runtime-endpoint " + ShellWords.quote(criSocket) + " ps --name '^(etcd|kube-apiserver)$' -q 2>/dev/null; fi",
            r -> r.stdout().isBlank() || r.stdout().strip().equals("restored") ? Optional.empty()
                : Optional.of("the control plane still runs after its manifests were moved aside (" + RESTORING + " names where)"))
            .waitingUpTo(STOP_WAIT);
    }

    /**
     * The restore's second part, with the control plane stopped ({@link #stopScript}, {@link #stopped}); the work directory
     * and the upload are removed however it ends.
     * @param uploadSha256 the uploaded (repacked) archive's sha256, checked on the master again before anything moves
     * @param sha256       the backup archive's own, written to the marker at the end
     */
    static String script(String uploadSha256, String sha256) {
        StringBuilder paths = new StringBuilder();
        for (String p : BackupArchive.HOST_PATHS) paths.append(' ').append(p);
        return "set -eu; umask 077; b=" + UPLOAD + "; "
            + "d=$(mktemp -d " + WORK_PREFIX + "XXXXXXXX); trap 'rm -rf -- \"$d\" \"$b\"' EXIT; "
            + "aside=$(cat " + RESTORING + " 2>/dev/null || true); "
            + "[ -n \"$aside\" ] && [ -d \"$aside\" ] || { echo 'no directory for what the master had (" + RESTORING + "): run restore again' >&2; exit 1; }; "
            + "mv -f -- \"$b\" \"$d/a.tar.gz\"; "
            + checkUpload(uploadSha256, "$d/a.tar.gz")
            + "mkdir \"$d/x\"; tar -xzf \"$d/a.tar.gz\" -C \"$d/x\" " + BackupArchive.SNAPSHOT + "; "
            + "tar -xzf \"$d/a.tar.gz\" -C \"$d/x\" etc/kubernetes/manifests/etcd.yaml 2>/dev/null || true; "
            + "systemctl stop kubelet.service || true; "
            + "for p in" + paths + "; do if [ -e \"/$p\" ]; then mkdir -p \"$aside/$(dirname \"$p\")\"; mv -- \"/$p\" \"$aside/$p\"; fi; done; "
            + "if [ -e /var/lib/etcd ]; then mv /var/lib/etcd \"$aside/var-lib-etcd\"; fi; "
            + "rm -rf /var/lib/etcd.gpuctl-new; "
            + "m=\"$d/x/etc/kubernetes/manifests/etcd.yaml\"; set --; "
            + "for k in name initial-cluster initial-advertise-peer-urls; do "
            + "v=$(sed -n \"s/^ *- --$k=//p\" \"$m\" 2>/dev/null | head -n 1); if [ -n \"$v\" ]; then set -- \"$@\" \"--$k=$v\"; fi; done; "
            + "if command -v etcdutl >/dev/null 2>&1; then etcdutl snapshot restore \"$d/x/" + BackupArchive.SNAPSHOT
            + "\" --data-dir /var/lib/etcd.gpuctl-new \"$@\"; "
            + "else ETCDCTL_API=3 etcdctl snapshot restore \"$d/x/" + BackupArchive.SNAPSHOT + "\" --data-dir /var/lib/etcd.gpuctl-new \"$@\"; fi; "
            + "mv -T /var/lib/etcd.gpuctl-new /var/lib/etcd; chmod 0700 /var/lib/etcd; "
            // only the checked members are in the upload (regular files and directories at backup's paths), owned by root
            + "tar -xzpf \"$d/a.tar.gz\" -C / --no-same-owner --exclude=" + BackupArchive.SNAPSHOT + "; "
            // the kubelet's current-certificate link (backup packs no links): to its newest certificate
            + "c=" + KUBELET_CURRENT + "; if [ ! -e \"$c\" ] && [ ! -L \"$c\" ]; then "
            + "n=$(ls -1 /var/lib/kubelet/pki/kubelet-client-2*.pem 2>/dev/null | sort | tail -n 1); "
            + "if [ -n \"$n\" ]; then ln -s -- \"$n\" \"$c\"; fi; fi; "
            + "install -d -m 0700 " + Kube.DIR + "; echo " + sha256 + " >" + MARKER + "; rm -f " + RESTORING + "; "
            + "systemctl enable kubelet.service >/dev/null 2>&1 || true; systemctl restart kubelet.service; "
            + "echo \"restored; what the master had is in $aside\"";
    }
}
