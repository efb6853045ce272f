package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.backup.BackupArchive;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
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

    /** Where an HA backup records the etcd member list in the archive (restored with gpuctl's own directory). */
    public static final String MEMBERS_FILE = "etc/kubernetes/gpuctl/backup-etcd-members.txt";

    private final Path archive;
    /** The masters in inventory order when the control plane has several: the snapshot is taken on the first healthy one. */
    private final List<String> members;

    /** @param archive where the archive lands on this machine; its .sha256 file is written beside it */
    public BackupStep(Path archive) {
        this(archive, List.of());
    }

    /**
     * @param members the masters in inventory order (several: the snapshot is taken on the first whose etcd member is
     *                healthy, as {@link EtcdHealth} found, and the member list is packed as {@link #MEMBERS_FILE})
     */
    public BackupStep(Path archive, List<String> members) {
        this.members = List.copyOf(members);
        this.archive = archive.toAbsolutePath().normalize();
        if (!BackupArchive.safeName(this.archive.getFileName().toString())) {
            throw new IllegalArgumentException("a backup's file name must be letters, digits, '.', '_' and '-': " + this.archive.getFileName());
        }
    }

    /** The backup as a phase of its own, for any command's phase list (backup; upgrade before its first change). */
    public static Phase phase(Path archive) {
        return new Phase("backup", "control-plane backup", List.of(new BackupStep(archive)), false);
    }

    /**
     * A control plane of several masters: every master's etcd member asked whether it is healthy (read-only), then the
     * backup on the first healthy one, in inventory order.
     */
    public static List<Phase> haPhases(Path archive, List<String> masters) {
        return List.of(new Phase("etcd-health", "etcd member health on every master (read-only)", List.of(new EtcdHealth(masters)), true),
            new Phase("backup", "control-plane backup from the first healthy etcd member", List.of(new BackupStep(archive, masters)), false));
    }

    /** The fact a master's {@link EtcdHealth} probe learns: "healthy", or why not. */
    public static String healthFact(String master) { return "backup.etcd." + master; }

    /** The first of {@code masters} (inventory order) whose member {@code health} says is healthy; empty when none is. */
    public static Optional<String> chosenMember(List<String> masters, java.util.function.Function<String, Optional<String>> health) {
        return masters.stream().filter(m -> health.apply(m).filter("healthy"::equals).isPresent()).findFirst();
    }

    /** Why no member can be backed up: each master and what its etcd said. */
    static String noHealthyMember(List<String> masters, java.util.function.Function<String, Optional<String>> health) {
        return "no master's etcd member is healthy, so there is nothing consistent to back up: " + String.join("; ",
            masters.stream().map(m -> m + ": " + health.apply(m).orElse("not asked")).toList())
            + " (gpuctl verify shows the members and the quorum)";
    }

    /** What {@code etcdctl endpoint health} says on this master: "healthy", else "unhealthy: LAST LINE". */
    public static String health(int exit, String out) {
        if (exit == 0 && out.contains(" is healthy")) return "healthy";
        Optional<String> said = out.lines().filter(l -> l.contains(" is unhealthy: ")).findFirst()
            .map(l -> l.substring(l.indexOf(" is unhealthy: ") + " is unhealthy: ".length()).strip());
        if (said.isPresent()) return "unhealthy: " + said.get();
        String last = out.lines().map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("{")).reduce((a, b) -> b).orElse("no answer");
        return "unhealthy: " + (exit != 0 ? "exit " + exit + ", " : "") + last;
    }

    /** Every master's etcd member asked, read-only: {@code etcdctl endpoint health} against its own client port. */
    public static final class EtcdHealth implements Step {
        private final List<String> masters;

        EtcdHealth(List<String> masters) { this.masters = List.copyOf(masters); }

        @Override public String id() { return "etcd-health"; }
        @Override public String title() { return "etcd member healthy (etcdctl endpoint health)"; }
        @Override public boolean runsOn(HostContext ctx) { return masters.contains(ctx.node().name()); }
        @Override public List<Op> apply(HostContext ctx) { return List.of(); }

        @Override public List<Probe> check(HostContext ctx) {
            String host = ctx.node().name();
            return List.of(Probe.of("etcd member on " + host + " (etcdctl endpoint health)",
                    etcdctl(ctx.cluster().runtime().criSocket(), "endpoint health") + " 2>&1", r -> Optional.empty())
                .learning(r -> Map.of(healthFact(host), health(r.exit(), r.stdout()))));
        }
    }

    /**
     * A shell command running etcdctl with the member's client TLS against this master's own member: the host's
     * etcdctl when it has one, else the one in the running etcd container ({@code crictl exec}).
     */
    static String etcdctl(String criSocket, String args) {
        String crictl = "crictl --runtime-endpoint " + ShellWords.quote(criSocket);
        return "{ if command -v etcdctl >/dev/null 2>&1; then ETCDCTL_API=3 etcdctl " + TLS + " " + args + "; else "
            + "id=$(" + crictl + " ps --name '^etcd$' --state running -q | head -n 1); "
            + "if [ -z \"$id\" ]; then echo 'no running etcd container on this master'; false; else "
            + crictl + " exec \"$id\" etcdctl " + TLS + " " + args + "; fi; fi; }";
    }

    public Path archive() { return archive; }

    /** The sha256 file beside an archive: {@code NAME.sha256}. */
    public static Path sumFile(Path archive) {
        return archive.resolveSibling(archive.getFileName() + ".sha256");
    }

    @Override public String id() { return "backup"; }
    @Override public String title() { return "control-plane backup (etcd snapshot, PKI, configuration)"; }
    @Override public boolean runsOn(HostContext ctx) { return members.isEmpty() ? ctx.firstMaster() : members.contains(ctx.node().name()); }

    /**
     * The archive on this machine, checked. With several masters: on a master other than the chosen one (the first with a
     * healthy member) there is nothing to do; with none healthy, the first master fails naming each member's answer.
     */
    @Override public List<Probe> check(HostContext ctx) {
        if (members.isEmpty()) {
            return List.of(Probe.of("backup archive " + archive + " on this machine, checked", "true", r -> inspect(archive).problem()));
        }
        String host = ctx.node().name();
        return List.of(Probe.of("backup archive " + archive + " on this machine, checked (taken on the first healthy etcd member)", "true",
            r -> Optional.empty()).judgedWithFacts((r, facts) -> {
                var health = (java.util.function.Function<String, Optional<String>>) m -> facts.get(healthFact(m));
                Optional<String> chosen = chosenMember(members, health);
                if (chosen.isEmpty()) return host.equals(members.get(0)) ? Optional.of(noHealthyMember(members, health)) : Optional.empty();
                return chosen.get().equals(host) ? inspect(archive).problem() : Optional.empty();
            }));
    }

    @Override public List<Op> apply(HostContext ctx) {
        String name = archive.getFileName().toString();
        String dir = Facts.ref(DIR_FACT);
        return List.of(
            new Op.Capture("a private work directory on the master (umask 077, mktemp -d)",
                "find /var/tmp -maxdepth 1 -name 'gpuctl-backup.*' -type d -user root -exec rm -rf -- {} + ; "
                    + "umask 077 && mktemp -d " + WORK_PREFIX + "XXXXXXXX",
                out -> Map.of(DIR_FACT, workDir(out)), false),
            Op.Run.of("etcd snapshot" + (members.isEmpty() ? "" : " from " + ctx.node().name() + "'s member, the member list") + " and archive (in the work directory)",
                snapshotAndPack(dir, name, ctx.cluster().runtime().criSocket(), members.isEmpty() ? Optional.empty() : Optional.of(ctx.node().name()))),
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
        return snapshotAndPack(dir, name, criSocket, Optional.empty());
    }

    /** @param member with several masters, this master's name: the member list is packed as {@link #MEMBERS_FILE} */
    static String snapshotAndPack(String dir, String name, String criSocket, Optional<String> member) {
        String crictl = "crictl --runtime-endpoint " + ShellWords.quote(criSocket);
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
            + member.map(m -> "mkdir -p \"$d/meta/" + MEMBERS_FILE.substring(0, MEMBERS_FILE.lastIndexOf('/')) + "\"; "
                + "{ echo " + ShellWords.quote("# etcd members (etcdctl member list) when the snapshot was taken from " + m) + "; "
                + etcdctl(criSocket, "member list") + "; } >\"$d/meta/" + MEMBERS_FILE + "\"; ").orElse("")
            + "set --; for p in" + paths + "; do if [ -e \"/$p\" ]; then set -- \"$@\" \"$p\"; fi; done; "
            + "[ $# -gt 0 ] || { echo 'no control-plane file is on the master (/etc/kubernetes/pki, ...)' >&2; exit 1; }; "
            // regular files and directories only, each named once (no links: a restore refuses them)
            + "(cd / && find \"$@\" \\( -type d -o -type f \\) -print0) >\"$d/members\"; "
            + "tar -czf \"$d/" + name + "\" --no-recursion --hard-dereference -C \"$d\" " + BackupArchive.SNAPSHOT
            + " -C / --null -T \"$d/members\"" + (member.isPresent() ? " -C \"$d/meta\" " + MEMBERS_FILE : "") + "; "
            + "rm -rf -- \"$d/" + BackupArchive.SNAPSHOT + "\" \"$d/etcdctl.out\" \"$d/members\"" + (member.isPresent() ? " \"$d/meta\"" : "") + "; "
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
