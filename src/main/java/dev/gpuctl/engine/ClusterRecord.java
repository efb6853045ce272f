package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.step.Facts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The cluster's CA hash this machine recorded at the first bootstrap ({@code .gpuctl/CLUSTER/ca-cert-hash}, 0600,
 * kubeadm's {@code sha256:<hex>}), which preflight compares with what the master says, and the newest backup, which
 * preflight names when the master lost its cluster.
 */
public final class ClusterRecord {
    private ClusterRecord() {}

    /** Facts the cross-host identity check reads ({@link Preflight}). */
    static final String RECORDED = "cluster.recorded.ca";
    static final String RECORD_FILE = "cluster.recorded.file";
    static final String NEWEST_BACKUP = "cluster.backup.newest";

    /** The record's place, the one {@link LaptopKubeconfigs} writes when it rebuilds the cluster's admin.conf here. */
    public static Path file(Inventory inv) {
        return LaptopKubeconfigs.caRecord(inv.localKubeconfig());
    }

    /** The recorded hash; empty when none or when the file holds no {@code sha256:<64 hex>}. */
    public static Optional<String> read(Inventory inv) {
        Path f = file(inv);
        try {
            if (!Files.isRegularFile(f)) return Optional.empty();
            String v = Files.readString(f, StandardCharsets.US_ASCII).strip();
            return v.matches("sha256:[0-9a-f]{64}") ? Optional.of(v) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Records {@code hash} when nothing is recorded yet; true when it wrote the file. */
    public static boolean recordIfAbsent(Inventory inv, String hash) throws IOException {
        if (read(inv).isPresent() || !hash.matches("sha256:[0-9a-f]{64}")) return false;
        Path f = file(inv);
        StateDir.ensurePrivateDir(f.getParent());
        StateDir.writePrivate(f, (hash + "\n").getBytes(StandardCharsets.US_ASCII));
        return true;
    }

    /** The newest backup archive of this cluster under .gpuctl/backups/ (by name: they are named by time). */
    static Optional<Path> newestBackup(Inventory inv) {
        Path dir = Backups.dir(inv);
        if (!Files.isDirectory(dir)) return Optional.empty();
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith(inv.cluster().name() + "-") && p.getFileName().toString().endsWith(".tar.gz"))
                .max(Comparator.comparing(p -> p.getFileName().toString()));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Puts what this machine knows of the cluster into the run's facts, for preflight. */
    static void learn(Inventory inv, Facts facts) {
        read(inv).ifPresent(h -> facts.put(RECORDED, h, false));
        facts.put(RECORD_FILE, file(inv).toString(), false);
        newestBackup(inv).ifPresent(p -> facts.put(NEWEST_BACKUP, p.toString(), false));
    }
}
