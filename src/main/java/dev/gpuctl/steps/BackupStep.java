package dev.gpuctl.steps;

import dev.gpuctl.hostconf.BackupArchive;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The control plane's backup, on the master: an etcd snapshot ({@code etcdctl snapshot save}: the host's etcdctl when it
 * has one, else the etcd static pod's own through the container runtime, {@code crictl exec}), packed with
 * /etc/kubernetes/pki, the kubeconfigs, the static pod manifests and the kubeadm and kubelet configuration into one gzip'd
 * tar, and its sha256 line; both fetched to this machine (0600). On the master all of it happens in a fresh private
 * directory ({@code umask 077}, {@code mktemp -d}) removed afterwards. Nothing of the archive's content is printed or
 * logged. "Already right" means: the archive at that path exists and checks out (a resumed run does not take it again).
 */
public final class BackupStep implements Step {
    static final String WORK_PREFIX = "/var/tmp/gpuctl-backup.";
    static final String DIR_FACT = "backup.dir";
    private static final String TLS = "--endpoints=https://127.0.0.1:2379 --cacert=/etc/kubernetes/pki/etcd/ca.crt"
        + " --cert=/etc/kubernetes/pki/etcd/server.crt --key=/etc/kubernetes/pki/etcd/server.key";

    private final Path archive;

    /** @param archive where the archive lands on this machine; its .sha256 file is written beside it */
    public BackupStep(Path archive) {
        this.archive = archive.toAbsolutePath().normalize();
        if (!BackupArchive.safeName(this.archive.getFileName().toString())) {
            throw new IllegalArgumentException("a backup's file name must be letters, digits, '.', '_' and '-': " + this.archive.getFileName());
        }
    }

    /** The backup as a phase of its own, for any command's phase list (backup; upgrade before its first change). */
    public static Phase phase(Path archive) {
        return new Phase("backup", "control-plane backup", List.of(new BackupStep(archive)), false);
    }

    public Path archive() { return archive; }

    /** The sha256 file beside an archive: {@code NAME.sha256}. */
    public static Path sumFile(Path archive) {
        return archive.resolveSibling(archive.getFileName() + ".sha256");
    }

    @Override public String id() { return "backup"; }
    @Override public String title() { return "control-plane backup (etcd snapshot, PKI, configuration)"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.of("backup archive " + archive + " on this machine, checked", "true", r -> inspect(archive).problem()));
    }

    @Override public List<Op> apply(HostContext ctx) {
        String name = archive.getFileName().toString();
        String dir = Facts.ref(DIR_FACT);
        return List.of(
            new Op.Capture("a private work directory on the master (umask 077, mktemp -d)",
                "find /var/tmp -maxdepth 1 -name 'gpuctl-backup.*' -type d -user root -exec rm -rf -- {} + ; "
                    + "umask 077 && mktemp -d " + WORK_PREFIX + "XXXXXXXX",
                out -> Map.of(DIR_FACT, workDir(out)), false),
            Op.Run.of("etcd snapshot and archive (in the work directory)", snapshotAndPack(dir, name, ctx.cluster().runtime().criSocket())),
            new Op.Fetch("the archive to this machine", dir + "/" + name, archive, true),
            new Op.Fetch("its sha256 to this machine", dir + "/" + name + ".sha256", sumFile(archive), true),
            Op.Run.of("remove the work directory", "rm -rf -- " + dir));
    }

    /** The work directory mktemp printed; anything else is refused (the path reaches rm -rf). */
    static String workDir(String out) {
        String d = out.strip();
        if (!d.matches(Pattern.quote(WORK_PREFIX) + "[A-Za-z0-9]{8}")) {
            throw new IllegalArgumentException("mktemp printed '" + d + "', not a " + WORK_PREFIX + "XXXXXXXX directory");
        }
        return d;
    }

    /**
     * The master's script: snapshot with the host's etcdctl, else with etcdctl inside the running etcd container (its
     * snapshot written into etcd's data directory, which that container mounts, and moved out at once), then the archive
     * and its sha256 line. On any failure the work directory and a partial snapshot are removed.
     */
    static String snapshotAndPack(String dir, String name, String criSocket) {
        String crictl = "crictl --runtime-endpoint " + Sh.quote(criSocket);
        String inPod = "/var/lib/etcd/gpuctl-snapshot.db";
        StringBuilder paths = new StringBuilder();
        for (String p : BackupArchive.HOST_PATHS) paths.append(' ').append(p);
        return "set -eu; umask 077; d=" + dir + "; "
            + "trap 'st=$?; rm -f " + inPod + " " + inPod + ".part; [ $st -eq 0 ] || rm -rf -- \"$d\"' EXIT; "
            + "if command -v etcdctl >/dev/null 2>&1; then "
            + "ETCDCTL_API=3 etcdctl " + TLS + " snapshot save \"$d/" + BackupArchive.SNAPSHOT + "\" >\"$d/etcdctl.out\"; "
            + "else "
            + "id=$(" + crictl + " ps --name '^etcd$' --state running -q | head -n 1); "
            + "[ -n \"$id\" ] || { echo 'no running etcd container (" + crictl + " ps --name etcd --state running):"
            + " is the control plane up? (gpuctl verify)' >&2; exit 1; }; "
            + crictl + " exec \"$id\" etcdctl " + TLS + " snapshot save " + inPod + " >\"$d/etcdctl.out\"; "
            + "mv -f -- " + inPod + " \"$d/" + BackupArchive.SNAPSHOT + "\"; "
            + "fi; "
            + "grep -q '^Snapshot saved at ' \"$d/etcdctl.out\" || { cat \"$d/etcdctl.out\" >&2; exit 1; }; "
            + "set --; for p in" + paths + "; do if [ -e \"/$p\" ]; then set -- \"$@\" \"$p\"; fi; done; "
            + "[ $# -gt 0 ] || { echo 'no control-plane file is on the master (/etc/kubernetes/pki, ...)' >&2; exit 1; }; "
            // regular files and directories only, each named once (no links: a restore refuses them)
            + "(cd / && find \"$@\" \\( -type d -o -type f \\) -print0) >\"$d/members\"; "
            + "tar -czf \"$d/" + name + "\" --no-recursion --hard-dereference -C \"$d\" " + BackupArchive.SNAPSHOT
            + " -C / --null -T \"$d/members\"; "
            + "rm -f -- \"$d/" + BackupArchive.SNAPSHOT + "\" \"$d/etcdctl.out\" \"$d/members\"; "
            + "cd \"$d\" && sha256sum " + name + " >" + name + ".sha256";
    }

    @Override public List<Probe> verify(HostContext ctx) { return check(ctx); }

    /** What a backup archive on this machine holds, and what is wrong with it (nothing: {@link #problem} is empty). */
    public record Inspected(Path archive, String sha256, List<BackupArchive.Entry> entries, List<String> problems) {
        public Optional<String> problem() { return problems.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", problems)); }
    }

    /** Checks an archive on this machine: a private regular file, its sha256 file matches, the required members are there. */
    public static Inspected inspect(Path archive) {
        if (!Files.isRegularFile(archive, LinkOption.NOFOLLOW_LINKS)) {
            return new Inspected(archive, "", List.of(), List.of("no backup archive at " + archive + " yet"));
        }
        try {
            ArrayList<String> problems = new ArrayList<>();
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(archive, LinkOption.NOFOLLOW_LINKS);
            if (!Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE).containsAll(perms)) {
                problems.add(archive + " is readable by others (it holds private keys): chmod 600 it");
            }
            String hex = BackupArchive.sha256(archive); // streamed: an archive of any size

            Path sum = sumFile(archive);
            String name = archive.getFileName().toString();
            if (!Files.isRegularFile(sum, LinkOption.NOFOLLOW_LINKS)) {
                problems.add("no " + sum);
            } else {
                Optional<String> want = BackupArchive.digestFor(Files.readString(sum), name);
                if (want.isEmpty()) problems.add(sum + " has no sha256 line for " + name);
                else if (!want.get().equals(hex)) problems.add(archive + " does not match " + sum + " (sha256 " + hex + ")");
            }
            List<BackupArchive.Entry> entries;
            try {
                entries = BackupArchive.entries(archive);
            } catch (BackupArchive.Unreadable e) {
                problems.add(archive + ": " + e.getMessage());
                return new Inspected(archive, hex, List.of(), List.copyOf(problems));
            }
            List<String> missing = BackupArchive.missing(entries);
            if (!missing.isEmpty()) problems.add(archive + " lacks " + String.join(", ", missing));
            List<String> refused = BackupArchive.refused(entries);
            if (!refused.isEmpty()) problems.add(archive + " holds what a restore must not put on the master: " + String.join("; ", refused));
            return new Inspected(archive, hex, entries, List.copyOf(problems));
        } catch (IOException e) {
            return new Inspected(archive, "", List.of(), List.of("cannot read " + archive + ": " + e.getMessage()));
        }
    }
}
