package dev.gpuctl.engine;

import dev.gpuctl.kube.Kubeconfig;
import dev.gpuctl.kube.KubeadmConfig;
import dev.gpuctl.inventory.ControlPlaneEndpoint;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.HostContext;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The kubeconfigs gpuctl keeps on this machine, rebuilt from a master's admin.conf ({@link Kubeconfig#admin}), never
 * copied: the cluster's own copy {@code .gpuctl/CLUSTER/admin.conf} beside the inventory, the CA hash recorded there at
 * bootstrap ({@code ca-cert-hash}, kubeadm's caCertHash), and the user's kubeconfig file that {@code gpuctl kubeconfig
 * --merge} wrote into (its path recorded in {@code merged-kubeconfig}, so that a renewal refreshes it). One place for
 * bootstrap, {@code certs renew}, {@code upgrade}, {@code restore} and {@code kubeconfig}.
 */
public final class LaptopKubeconfigs {
    private LaptopKubeconfigs() {}

    /** What an install did: the credentials it took, whether a file changed, and what to tell the user. */
    public record Installed(Kubeconfig.Admin admin, boolean changed, List<String> notes) {}

    /** The caCertHash recorded for the cluster whose admin.conf is {@code adminFile}. */
    public static Path caRecord(Path adminFile) { return adminFile.resolveSibling("ca-cert-hash"); }

    /** The path of the user's kubeconfig file that {@code kubeconfig --merge} wrote this cluster's entries into. */
    public static Path mergedRecord(Path adminFile) { return adminFile.resolveSibling("merged-kubeconfig"); }

    /** The first backup of a user's kubeconfig file: FILE.gpuctl-orig. */
    public static Path backup(Path f) { return f.resolveSibling(f.getFileName() + ".gpuctl-orig"); }

    /**
     * The CA hash this cluster was bootstrapped with: the record, else (a cluster bootstrapped by an earlier gpuctl)
     * the CA of the admin.conf bootstrap left on this machine; empty when neither is there.
     */
    public static Optional<String> recordedCaHash(Path adminFile) throws IOException {
        Path rec = caRecord(adminFile);
        if (Files.isRegularFile(rec, LinkOption.NOFOLLOW_LINKS)) {
            String h = Files.readString(rec, StandardCharsets.UTF_8).strip();
            if (!h.isEmpty()) return Optional.of(h);
        }
        return laptopAdmin(adminFile).map(Kubeconfig.Admin::caCertHash);
    }

    /**
     * The cluster's endpoint its admin.conf must name: {@code https://IP:6443} when the inventory gives the master's IP,
     * else the server of the admin.conf bootstrap left here; empty when neither is known (any https URL).
     */
    public static Optional<String> expectedServer(Path adminFile, Node master, ControlPlaneEndpoint endpoint) throws IOException {
        if (endpoint.kind() != ControlPlaneEndpoint.Kind.MASTER) return Optional.of(endpoint.url());
        return expectedServer(adminFile, master);
    }

    /** {@link #expectedServer(Path, Node, ControlPlaneEndpoint)} of a cluster whose endpoint is its master's address. */
    public static Optional<String> expectedServer(Path adminFile, Node master) throws IOException {
        Optional<String> masterIp = HostContext.literalNodeIp(master);
        if (masterIp.isPresent()) return Optional.of(server(masterIp.get()));
        return recordedServer(adminFile);
    }

    /** The server of the admin.conf bootstrap left on this machine, if there is one. */
    public static Optional<String> recordedServer(Path adminFile) throws IOException {
        return laptopAdmin(adminFile).map(Kubeconfig.Admin::server);
    }

    /** kubeadm's controlPlaneEndpoint as gpuctl renders it: the master's IP and port 6443. */
    public static String server(String masterIp) { return "https://" + KubeadmConfig.hostForUrl(masterIp) + ":6443"; }

    /** The credentials in this machine's admin.conf (written by gpuctl, so taken without an expected CA), if readable. */
    private static Optional<Kubeconfig.Admin> laptopAdmin(Path adminFile) throws IOException {
        if (!Files.isRegularFile(adminFile, LinkOption.NOFOLLOW_LINKS)) return Optional.empty();
        try {
            return Optional.of(Kubeconfig.admin(Files.readString(adminFile, StandardCharsets.UTF_8), null, null));
        } catch (Kubeconfig.Invalid | Kubeconfig.Refused e) {
            return Optional.empty();
        }
    }

    /**
     * The master's admin.conf checked ({@link Kubeconfig#admin}: the fields, the endpoint, the recorded CA) and rebuilt
     * into {@code adminFile} (0600, written only when it differs), its CA hash recorded, and a kubeconfig merged before
     * refreshed ({@link #refreshMerged}). With {@code newCluster} (bootstrap has just made the control plane), a CA other
     * than the recorded one is a new cluster of the same name: the old admin.conf and its record are archived (renamed
     * with a timestamp), never overwritten, and the user told; otherwise it is refused.
     *
     * @throws Kubeconfig.Refused a field gpuctl does not take, another endpoint, or another CA; nothing was written
     * @throws Kubeconfig.Invalid the text is no kubeconfig; nothing was written
     */
    public static Installed install(Path adminFile, String clusterName, String masterAdmin, Optional<String> expectedServer,
                                    boolean newCluster) throws IOException {
        Optional<String> recorded = recordedCaHash(adminFile);
        Kubeconfig.Admin admin = Kubeconfig.admin(masterAdmin, expectedServer.orElse(null), newCluster ? null : recorded.orElse(null));
        List<String> notes = new ArrayList<>();
        boolean changed = false;
        if (recorded.isPresent() && !recorded.get().equals(admin.caCertHash())) {
            String stamp = LocalDateTime.now().format(StateDir.RUN_TIME);
            for (Path p : List.of(adminFile, caRecord(adminFile), mergedRecord(adminFile))) {
                if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) continue;
                Path to = p.resolveSibling(p.getFileName() + "." + stamp);
                for (int i = 2; Files.exists(to, LinkOption.NOFOLLOW_LINKS); i++) to = p.resolveSibling(p.getFileName() + "." + stamp + "-" + i);
                Files.move(p, to);
                if (p.equals(adminFile)) {
                    notes.add("the master has a new CA (" + admin.caCertHash() + ", was " + recorded.get() + "): a new cluster named "
                        + clusterName + "; the admin.conf of the one before is kept as " + to);
                } else if (p.equals(mergedRecord(adminFile))) {
                    notes.add("the entries of the cluster before in your kubeconfig are left as they are; to merge this one: gpuctl kubeconfig --merge");
                }
            }
            changed = true;
        }
        byte[] text = Kubeconfig.render(admin, clusterName).getBytes(StandardCharsets.UTF_8);
        if (!Files.isRegularFile(adminFile, LinkOption.NOFOLLOW_LINKS) || !Arrays.equals(Files.readAllBytes(adminFile), text)) {
            StateDir.writePrivate(adminFile, text);
            changed = true;
        }
        byte[] hash = (admin.caCertHash() + "\n").getBytes(StandardCharsets.UTF_8);
        Path rec = caRecord(adminFile);
        if (!Files.isRegularFile(rec, LinkOption.NOFOLLOW_LINKS) || !Arrays.equals(Files.readAllBytes(rec), hash)) {
            StateDir.writePrivate(rec, hash);
        }
        refreshMerged(adminFile, clusterName, admin).ifPresent(notes::add);
        return new Installed(admin, changed, notes);
    }

    /**
     * The user's kubeconfig file that {@code kubeconfig --merge} wrote into (recorded in {@link #mergedRecord}), its
     * entries named for this cluster refreshed with the new credentials (written only when they differ; the rest of the
     * file kept). Empty when nothing was merged before or nothing changed; else what was done, for the user.
     */
    static Optional<String> refreshMerged(Path adminFile, String clusterName, Kubeconfig.Admin admin) throws IOException {
        Path rec = mergedRecord(adminFile);
        if (!Files.isRegularFile(rec, LinkOption.NOFOLLOW_LINKS)) return Optional.empty();
        String recorded = Files.readString(rec, StandardCharsets.UTF_8).strip();
        if (recorded.isEmpty()) return Optional.empty();
        Path target = Path.of(recorded);
        if (Files.isSymbolicLink(target)) target = target.toRealPath();
        if (!Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS)) return Optional.empty();
        String existing = Files.readString(target, StandardCharsets.UTF_8);
        Optional<String> refreshed;
        try {
            refreshed = Kubeconfig.refresh(existing, admin, clusterName);
        } catch (Kubeconfig.Invalid e) {
            return Optional.of(target + ": " + e.getMessage() + "; its entries for " + clusterName + " were not refreshed");
        }
        if (refreshed.isEmpty() || refreshed.get().equals(existing)) return Optional.empty();
        writeUserFile(target, refreshed.get());
        return Optional.of("refreshed cluster " + clusterName + "'s credentials in " + target);
    }

    /** What {@code gpuctl kubeconfig} made: the rebuilt kubeconfig (what it prints), the merge when asked for, the notes. */
    public record ForUser(String text, Optional<Kubeconfig.Merged> merged, List<String> notes) {}

    /**
     * {@code gpuctl kubeconfig [--merge]} once the master's admin.conf is read: checked and rebuilt into this machine's
     * copy ({@link #install}, never a new cluster), then, with a target, merged into it (backed up once, written
     * atomically) and the target recorded for later refreshes. A refused admin.conf writes nothing anywhere.
     *
     * @throws Kubeconfig.Refused the master's admin.conf carries a field gpuctl does not take, another endpoint or CA
     * @throws Kubeconfig.Invalid the master's admin.conf or the target is no kubeconfig
     */
    public static ForUser forUser(Path adminFile, Node master, String clusterName, String masterAdmin, Optional<Path> target,
                                  String context) throws IOException {
        return forUser(adminFile, master, new ControlPlaneEndpoint(ControlPlaneEndpoint.Kind.MASTER, master.address(),
            ControlPlaneEndpoint.API_SERVER_PORT), clusterName, masterAdmin, target, context);
    }

    /** {@link #forUser} of a cluster with its controlPlaneEndpoint: admin.conf must name it. */
    public static ForUser forUser(Path adminFile, Node master, ControlPlaneEndpoint endpoint, String clusterName, String masterAdmin,
                                  Optional<Path> target, String context) throws IOException {
        String existing = target.isPresent() && Files.exists(target.get()) ? Files.readString(target.get(), StandardCharsets.UTF_8) : "";
        Kubeconfig.contexts(existing); // the target is a kubeconfig, or nothing is done
        Installed got = install(adminFile, clusterName, masterAdmin, expectedServer(adminFile, master, endpoint), false);
        String text = Kubeconfig.render(got.admin(), clusterName);
        if (target.isEmpty()) return new ForUser(text, Optional.empty(), got.notes());
        Kubeconfig.Merged merged = Kubeconfig.merge(existing, got.admin(), clusterName, context);
        if (!merged.text().equals(existing)) writeUserFile(target.get(), merged.text());
        recordMerge(adminFile, target.get());
        return new ForUser(text, Optional.of(merged), got.notes());
    }

    /** Records the user's kubeconfig file that {@code kubeconfig --merge} wrote, for later refreshes. */
    public static void recordMerge(Path adminFile, Path target) throws IOException {
        byte[] text = (target.toAbsolutePath() + "\n").getBytes(StandardCharsets.UTF_8);
        Path rec = mergedRecord(adminFile);
        if (Files.isRegularFile(rec, LinkOption.NOFOLLOW_LINKS) && Arrays.equals(Files.readAllBytes(rec), text)) return;
        StateDir.writePrivate(rec, text);
    }

    /** A user's kubeconfig file written: backed up once (FILE.gpuctl-orig), then a private temporary file renamed into place. */
    public static void writeUserFile(Path f, String text) throws IOException {
        Path dir = f.getParent();
        if (!Files.isDirectory(dir)) Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        if (Files.exists(f) && !Files.exists(backup(f), LinkOption.NOFOLLOW_LINKS)) {
            Files.copy(f, backup(f), StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
            Files.setPosixFilePermissions(backup(f), PosixFilePermissions.fromString("rw-------"));
        }
        Path tmp = Files.createTempFile(dir, "." + f.getFileName(), ".gpuctl-tmp",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            Files.move(tmp, f, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
