package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.backup.BackupArchive;
import dev.gpuctl.backup.EtcdRestore;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The second half of a whole control plane's restore, on each master once every master's control plane has stopped
 * ({@link RestoreStopStep}): the snapshot restored into a fresh data directory as etcd's disaster recovery says
 * ({@code etcdutl snapshot restore --name NAME --initial-advertise-peer-urls URL --initial-cluster EVERY-MEMBER
 * --initial-cluster-token TOKEN --data-dir}), the old /var/lib/etcd moved beside the manifests aside, the new one put in
 * place, the control plane's manifests moved back and the kubelet restarted. Each master keeps its own PKI, kubeconfigs
 * and manifests (they name this master; the archive's are the backed-up member's). Verified by waiting (bounded, each
 * wait announced) until the member list is exactly the restored members, all started and healthy (the quorum), this
 * master's own API server answers /readyz, and, on the first master, every node is Ready. The marker
 * /etc/kubernetes/gpuctl/restored-from (the archive's sha256) is what "already done" means.
 */
public final class EtcdMemberRestoreStep implements Step {
    /** How long the restored members may take to find each other and the API servers to be ready. */
    static final Duration READY_WAIT = Duration.ofMinutes(4);

    private final String uploadSha256;
    private final String sha256;
    private final List<EtcdRestore.Member> members;

    /**
     * @param members every master's member, in inventory order: this master's is the one named as its node
     */
    public EtcdMemberRestoreStep(String uploadSha256, String sha256, List<EtcdRestore.Member> members) {
        this.uploadSha256 = uploadSha256;
        this.sha256 = sha256;
        this.members = List.copyOf(members);
        EtcdRestore.initialCluster(this.members); // refuses a name or URL twice now, not on a host
    }

    @Override public String id() { return "restore-etcd"; }
    @Override public String title() { return "restore this master's etcd member from the snapshot"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }
    @Override public boolean readsCluster() { return true; }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.equals("the master restored from this archive (sha256 in " + RestoreStep.MARKER + ")",
            "cat " + RestoreStep.MARKER + " 2>/dev/null || true", sha256));
    }

    @Override public List<Probe> verify(HostContext ctx) {
        String crictl = ctx.cluster().runtime().criSocket();
        List<Probe> probes = new ArrayList<>(check(ctx));
        probes.add(Probe.of("etcd's members are the restored ones, all started (etcdctl member list)",
                BackupStep.etcdctl(crictl, "member list") + " 2>&1",
                r -> r.ok() ? EtcdRestore.membersProblem(r.stdout(), members) : Optional.of("etcdctl member list: " + Probe.oneLine(r.stdout())))
            .waitingUpTo(READY_WAIT));
        probes.add(Probe.of("every member healthy, so the quorum holds (etcdctl endpoint health --cluster)",
                BackupStep.etcdctl(crictl, "endpoint health --cluster") + " 2>&1",
                r -> r.ok() ? Optional.empty() : Optional.of(BackupStep.health(r.exit(), r.stdout())))
            .waitingUpTo(READY_WAIT));
        probes.add(Probe.equals("this master's API server answers /readyz (its own address, not the endpoint)",
                "timeout 20 " + Kube.kubectl("--server=https://" + ownAddress(ctx) + ":6443 get --raw=/readyz 2>&1") + " || true", "ok")
            .waitingUpTo(READY_WAIT));
        if (ctx.firstMaster()) {
            probes.add(Probe.of("every node Ready", Kube.kubectl("get nodes --no-headers 2>&1"), r -> RestoreStep.notReady(r.stdout(), r.ok()))
                .waitingUpTo(READY_WAIT));
        }
        return List.copyOf(probes);
    }

    private EtcdRestore.Member own(HostContext ctx) {
        return members.stream().filter(m -> m.name().equals(ctx.node().name())).findFirst()
            .orElseThrow(() -> new IllegalStateException(ctx.node().name() + " is not among the restored members"));
    }

    /** This master's address as its peer URL names it (https://ADDRESS:2380). */
    private String ownAddress(HostContext ctx) {
        String url = own(ctx).peerUrl();
        return url.substring("https://".length(), url.lastIndexOf(':'));
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(Op.Run.of("restore etcd from the snapshot as member " + ctx.node().name() + " of " + members.size()
                + "; start the control plane", script(uploadSha256, sha256, own(ctx), EtcdRestore.initialCluster(members),
                EtcdRestore.token(sha256)))
            .unless("grep -qx " + sha256 + " " + RestoreStep.MARKER));
    }

    /**
     * The member's restore, with its control plane stopped ({@link RestoreStopStep}); the work directory and the upload
     * are removed however it ends.
     */
    static String script(String uploadSha256, String sha256, EtcdRestore.Member self, String initialCluster, String token) {
        String snap = "\"$d/x/" + BackupArchive.SNAPSHOT + "\"";
        String flags = " --name " + ShellWords.quote(self.name()) + " --initial-cluster " + ShellWords.quote(initialCluster)
            + " --initial-cluster-token " + ShellWords.quote(token) + " --initial-advertise-peer-urls " + ShellWords.quote(self.peerUrl())
            + " --data-dir /var/lib/etcd.gpuctl-new";
        return "set -eu; umask 077; b=" + RestoreStep.UPLOAD + "; "
            + "d=$(mktemp -d " + RestoreStep.WORK_PREFIX + "XXXXXXXX); trap 'rm -rf -- \"$d\" \"$b\"' EXIT; "
            + "aside=$(cat " + RestoreStep.RESTORING + " 2>/dev/null || true); "
            + "[ -n \"$aside\" ] && [ -d \"$aside/manifests-running\" ] || { echo 'no control-plane manifests set aside (" + RestoreStep.RESTORING
            + "): run restore again' >&2; exit 1; }; "
            + "mv -f -- \"$b\" \"$d/a.tar.gz\"; "
            + "echo '" + uploadSha256 + "  '\"$d/a.tar.gz\" | sha256sum -c --quiet - "
            + "|| { echo 'the archive on the master does not match its sha256 " + uploadSha256 + " (damaged upload): run restore again' >&2; exit 1; }; "
            + "mkdir \"$d/x\"; tar -xzf \"$d/a.tar.gz\" -C \"$d/x\" " + BackupArchive.SNAPSHOT + "; "
            + "rm -rf /var/lib/etcd.gpuctl-new; "
            + "if command -v etcdutl >/dev/null 2>&1; then etcdutl snapshot restore " + snap + flags + "; "
            + "else ETCDCTL_API=3 etcdctl snapshot restore " + snap + flags + "; fi; "
            // the old data moved aside once: a cut-off run's half-restored directory is not kept in its place
            + "if [ -e \"$aside/var-lib-etcd\" ]; then rm -rf /var/lib/etcd; elif [ -e /var/lib/etcd ]; then mv /var/lib/etcd \"$aside/var-lib-etcd\"; fi; "
            + "mv -T /var/lib/etcd.gpuctl-new /var/lib/etcd; chmod 0700 /var/lib/etcd; "
            + "mv \"$aside\"/manifests-running/*.yaml /etc/kubernetes/manifests/; "
            + "install -d -m 0700 " + Kube.DIR + "; echo " + sha256 + " >" + RestoreStep.MARKER + "; rm -f " + RestoreStep.RESTORING + "; "
            + "systemctl restart kubelet.service; "
            + "echo \"restored as member " + self.name() + "; what the master had is in $aside\"";
    }
}
