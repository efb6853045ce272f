package dev.gpuctl.engine;

import dev.gpuctl.backup.BackupArchive;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.kube.Kubeadm;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.steps.BackupStep;
import dev.gpuctl.step.Phase;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The control plane's backups on this machine: where they go ({@code .gpuctl/backups/}), the phase that takes one on the
 * master ({@link BackupStep}), and what a finished one is (checked, listed) after the rotation keeps the newest N.
 * {@code gpuctl backup} and {@code gpuctl upgrade} (before its first change) use the same calls.
 */
public final class Backups {
    private Backups() {}

    public static final int DEFAULT_KEEP = 5;

    /** A finished backup: the archive, its sha256, its members (names, sizes, modes; no content), the archives rotated out. */
    public record Done(Path archive, Path sumFile, String sha256, List<BackupArchive.Entry> entries, List<Path> removed) {
        public String listing() { return BackupArchive.listing(entries); }
    }

    /** Thrown by {@link #finish} when the archive is missing or does not check out; the message says what is wrong. */
    public static final class Bad extends RuntimeException {
        public Bad(String message) { super(message); }
    }

    /** The directory backups are kept and rotated in: .gpuctl/backups/ beside the inventory. */
    public static Path dir(Inventory inv) {
        return inv.stateDir().resolve("backups");
    }

    /** A new archive's default path: .gpuctl/backups/CLUSTER-YYYYMMDDTHHMMSSZ.tar.gz. */
    public static Path newArchive(Inventory inv, Instant now) {
        return dir(inv).resolve(BackupArchive.fileName(inv.cluster().name(), now));
    }

    /** The sha256 file beside an archive: {@code NAME.sha256}. */
    public static Path sumFile(Path archive) {
        return BackupStep.sumFile(archive);
    }

    /**
     * After the phases ran: checks the archive (0600, sha256 matches, the snapshot, CA keys and admin.conf in it), then
     * removes this cluster's archives in .gpuctl/backups/ beyond the newest {@code keep} (with their .sha256 files).
     */
    public static Done finish(Inventory inv, Path archive, int keep) {
        BackupStep.Inspected in = BackupStep.inspect(archive);
        if (in.problem().isPresent()) throw new Bad(in.problem().get());
        List<Path> removed = rotate(dir(inv), inv.cluster().name(), keep);
        return new Done(archive, BackupStep.sumFile(archive), in.sha256(), in.entries(), removed);
    }

    /** An archive on this machine, checked: its sha256, and what is wrong with it (empty: fit to restore from). */
    public record Checked(Path archive, String sha256, Optional<String> problem) {}

    /** Checks an archive on this machine: a private regular file, its .sha256 matches, the required members are in it. */
    public static Checked check(Path archive) {
        BackupStep.Inspected in = BackupStep.inspect(archive);
        return new Checked(archive, in.sha256(), in.problem());
    }


    /**
     * A checked archive made ready for a restore: its sha256, and what the master gets (its checked members only), a
     * private temporary file on this machine with its own sha256. {@link #close} removes the file.
     */
    public record Restorable(String sha256, Path upload, String uploadSha256) implements AutoCloseable {
        @Override public void close() {
            try {
                Files.deleteIfExists(upload);
            } catch (IOException ignored) {
                // a 0600 file in the temporary directory: the system's clean-up takes it
            }
        }
    }

    /**
     * Reads a checked archive ({@link #check}) and keeps only its checked members ({@link BackupArchive#repack}) for the
     * master; an archive holding anything else is refused ({@link Bad}, naming the members) before any host is touched,
     * and so is one whose cluster CA ({@code etc/kubernetes/pki/ca.crt}) is not {@code recordedCa}, the one this machine
     * recorded at bootstrap (when it recorded one): another cluster's backup.
     */
    public static Restorable restorable(Checked checked, Optional<String> recordedCa) {
        if (recordedCa.isPresent()) {
            Optional<String> archived = archivedCa(checked.archive());
            if (archived.isEmpty() || !archived.get().equals(recordedCa.get())) {
                throw new Bad("its cluster CA (" + archived.orElse("none readable") + ") is not the one this cluster was"
                    + " bootstrapped with (" + recordedCa.get() + ", recorded in .gpuctl/): a backup of another cluster. To"
                    + " restore that cluster here on purpose, take this cluster's state out first (gpuctl reset archives it)");
            }
        }
        Path upload = null;
        try {
            upload = Files.createTempFile("gpuctl-restore-", ".tar.gz",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            BackupArchive.repack(checked.archive(), upload); // streamed: an archive of any size, never in memory
            if (!BackupArchive.sha256(checked.archive()).equals(checked.sha256())) {
                throw new Bad(checked.archive() + " changed while it was read");
            }
            return new Restorable(checked.sha256(), upload, BackupArchive.sha256(upload));
        } catch (IOException e) {
            delete(upload);
            throw new Bad("cannot read " + checked.archive() + ": " + e.getMessage());
        } catch (BackupArchive.Unreadable | BackupArchive.Refused e) {
            delete(upload);
            throw new Bad(checked.archive() + ": " + e.getMessage());
        } catch (Bad e) {
            delete(upload);
            throw e;
        }
    }

    /** The caCertHash of the CA certificate an archive holds, if it holds a readable one. */
    static Optional<String> archivedCa(Path archive) {
        try {
            return BackupArchive.member(archive, "etc/kubernetes/pki/ca.crt", 64 * 1024)
                .map(b -> Kubeadm.caCertHash(new String(b, StandardCharsets.US_ASCII)));
        } catch (IOException | BackupArchive.Unreadable | HostConfException e) {
            return Optional.empty();
        }
    }

    private static void delete(Path p) {
        if (p == null) return;
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // our own 0600 temporary file
        }
    }

    /** Removes a cluster's archives (and their .sha256) in dir beyond the newest keep; returns the archives removed. */
    public static List<Path> rotate(Path dir, String cluster, int keep) {
        if (!Files.isDirectory(dir)) return List.of();
        List<String> names;
        try (Stream<Path> s = Files.list(dir)) {
            names = s.map(p -> p.getFileName().toString()).toList();
        } catch (IOException e) {
            throw new Bad("cannot list " + dir + ": " + e.getMessage());
        }
        List<Path> removed = new ArrayList<>();
        for (String n : BackupArchive.toRemove(names, cluster, keep)) {
            Path a = dir.resolve(n);
            try {
                Files.deleteIfExists(a);
                Files.deleteIfExists(BackupStep.sumFile(a));
            } catch (IOException e) {
                throw new Bad("cannot remove the old backup " + a + ": " + e.getMessage());
            }
            removed.add(a);
        }
        return List.copyOf(removed);
    }
}
