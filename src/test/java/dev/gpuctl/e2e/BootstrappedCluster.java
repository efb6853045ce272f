package dev.gpuctl.e2e;

import dev.gpuctl.testbed.BedResult;
import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A bootstrapped cluster of 1 master + N GPU workers (the bed's inventory: docker, flannel, 1 GPU each), shared by
 * the E2E classes that start from exactly that: bootstrapped once per JVM and shape on a bed of its own
 * ({@code $GPUCTL_BED} + "c" + N), snapshotted there ({@code testbed/bed snapshot}), and handed to each class as that
 * snapshot restored ({@code testbed/bed restore}: every host's disk as it was right after bootstrap, booted again;
 * same addresses, host keys, machine-ids) with its own copy of the inventory and the laptop's {@code .gpuctl/} of that
 * bootstrap. Before it is handed over, {@code gpuctl verify} must pass on it (exit 0): the kubelets have posted again,
 * the nodes are Ready with their GPUs allocatable, the pods are running. What one class changes on the hosts or in its
 * {@code .gpuctl/} is gone for the next. Classes run one after another (surefire, one JVM), never side by side.
 */
final class BootstrappedCluster {
    static final String SNAPSHOT = "bootstrapped";

    /** The bed, and the inventory beside its own {@code .gpuctl/}. */
    record Lease(TestBed bed, Path inventory) {}

    /** Per shape: the bed and the directory holding the bootstrap's inventory and {@code .gpuctl/}. */
    private record Template(TestBed bed, Path dir) {}

    private static final Map<Integer, Template> TEMPLATES = new HashMap<>();

    private BootstrappedCluster() {}

    /** The cluster of 1 master + {@code workers} GPU workers as right after bootstrap, for one class. */
    static synchronized Lease acquire(int workers) {
        long t0 = System.nanoTime();
        Template t = TEMPLATES.get(workers);
        String made;
        if (t == null) {
            TestBed bed = TestBed.own("c" + workers, workers);
            Path inventory = bed.inventory("docker", "flannel");
            Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
            if (r.code() != 0) throw new IllegalStateException("the shared cluster's bootstrap on bed " + bed.name() + " failed: " + r);
            // every host shut down cleanly and its disk copied; booted again from that same disk
            bedOk(bed, "snapshot", SNAPSHOT);
            made = "bootstrap and `testbed/bed snapshot " + SNAPSHOT + "`";
            t = new Template(bed, inventory.getParent());
            TEMPLATES.put(workers, t);
        } else {
            bedOk(t.bed(), "restore", SNAPSHOT);
            made = "`testbed/bed restore " + SNAPSHOT + "`";
        }
        Path inventory = copyOf(t.dir()).resolve("inventory.yaml");
        // verify waits for what a boot is still starting; once (of 4 boots), a worker seconds into its boot read
        // net.ipv4.ip_forward 0 although /etc/sysctl.d/k8s.conf says 1 and systemd-sysctl had run (cause not found): a
        // failed verify is asked again, twice at most, and the cluster is handed over only once it passes
        Gpuctl.Run v = Gpuctl.run("verify", inventory.toString());
        for (int again = 0; v.code() != 0 && again < 2; again++) {
            System.err.println("BootstrappedCluster: verify on bed " + t.bed().name() + " after " + made + " exited " + v.code()
                + "; asking again in 10 s:\n" + failures(v));
            sleep(10_000);
            v = Gpuctl.run("verify", inventory.toString());
        }
        if (v.code() != 0) {
            throw new IllegalStateException("the shared cluster on bed " + t.bed().name() + " does not verify after " + made + ": " + v);
        }
        System.err.printf("BootstrappedCluster: 1+%d on bed %s ready in %d s (%s, verify)%n", workers, t.bed().name(),
            (System.nanoTime() - t0) / 1_000_000_000L, made);
        return new Lease(t.bed(), inventory);
    }

    /** The class is done: its hosts are shut down (disks kept) until the next class restores the snapshot. */
    static synchronized void release(Lease lease) {
        if (lease == null) return;
        BedResult r = lease.bed().bed("stop");
        if (r.exit() != 0) System.err.println("testbed/bed stop failed on " + lease.bed().name() + ": " + r);
    }

    /** The table lines of a verify that are not ok, with their explanation lines. */
    private static String failures(Gpuctl.Run v) {
        StringBuilder b = new StringBuilder();
        for (String l : v.out().split("\n")) if (!l.endsWith(" ok")) b.append(l).append('\n');
        return b.toString();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static void bedOk(TestBed bed, String... args) {
        BedResult r = bed.bed(args);
        if (r.exit() != 0) {
            throw new IllegalStateException("`GPUCTL_BED=" + bed.name() + " testbed/bed " + String.join(" ", args) + "` failed:\n" + r);
        }
    }

    /** A new temp directory holding a copy of dir (files, directories, modes; gpuctl's state is 0700/0600). */
    static Path copyOf(Path dir) {
        try {
            Path to = Files.createTempDirectory("gpuctl-shared-cluster");
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : (Iterable<Path>) s::iterator) {
                    Path target = to.resolve(dir.relativize(p).toString());
                    if (Files.isSymbolicLink(p)) {
                        Files.createSymbolicLink(target, Files.readSymbolicLink(p));
                    } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                        if (!p.equals(dir)) Files.createDirectory(target);
                        Files.setPosixFilePermissions(target, Files.getPosixFilePermissions(p));
                    } else {
                        Files.copy(p, target, StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
                    }
                }
            }
            return to;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot copy the shared cluster's inventory and .gpuctl/ from " + dir, e);
        }
    }
}
