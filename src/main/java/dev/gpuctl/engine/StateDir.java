package dev.gpuctl.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Optional;

/**
 * gpuctl's local state (.gpuctl/ beside the inventory): directories 0700, files 0600. The directory holds the
 * cluster's admin.conf and join command, so it must be this user's own: a .gpuctl/ (or a directory in it) that is
 * a symbolic link or belongs to another user is refused, never followed or written into.
 */
public final class StateDir {
    private StateDir() {}

    /** A state directory gpuctl will not use; the message says which path, why, and what to do. Exit 2. */
    public static final class Refused extends RuntimeException {
        public Refused(String message) { super(message); }
    }

    /**
     * Why {@code dir} (an existing path) is not a private directory of {@code me}, or empty when it is one.
     * Pure apart from reading the path's own attributes (never following a link).
     */
    static Optional<String> problem(Path dir, long myUid) throws IOException {
        PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (a.isSymbolicLink()) {
            return Optional.of(dir + " is a symbolic link (to " + Files.readSymbolicLink(dir) + "); gpuctl keeps the"
                + " cluster's credentials there and does not follow links: remove the link (rm " + dir + ") and run again");
        }
        if (!a.isDirectory()) return Optional.of(dir + " is not a directory: move it away and run again");
        long uid = ((Number) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS)).longValue();
        if (uid != myUid) {
            String me = System.getProperty("user.name");
            return Optional.of(dir + " belongs to " + a.owner().getName() + ", not to " + me
                + " who runs gpuctl: another user could read or replace the cluster's credentials there;"
                + " check what it holds, then remove it (or chown it to " + me + ") and run again");
        }
        return Optional.empty();
    }

    /** The uid this process runs as. */
    static long myUid() { return new com.sun.security.auth.module.UnixSystem().getUid(); }

    /** The .gpuctl directory that {@code dir} is in (or is), else {@code dir} itself. */
    private static Path top(Path abs) {
        Path top = abs;
        for (Path p = abs; p != null; p = p.getParent()) {
            if (p.getFileName() != null && p.getFileName().toString().equals(".gpuctl")) top = p;
        }
        return top;
    }

    /**
     * Creates dir; it and every directory from .gpuctl/ down to it are 0700 and this user's own. A symbolic link, a
     * non-directory or another user's directory on that way is refused ({@link Refused}) before anything is written.
     */
    public static void ensurePrivateDir(Path dir) throws IOException {
        Path abs = dir.toAbsolutePath().normalize();
        Path top = top(abs);
        if (top.getParent() != null) Files.createDirectories(top.getParent());
        long me = myUid();
        for (Path p = top; ; p = p.resolve(abs.getName(p.getNameCount()))) {
            if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                try {
                    Files.createDirectory(p, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                } catch (FileAlreadyExistsException raced) {
                    // made meanwhile: judged below like any existing one
                }
            }
            Optional<String> bad = problem(p, me);
            if (bad.isPresent()) throw new Refused("refusing to use gpuctl's state directory: " + bad.get());
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
            if (p.equals(abs)) break;
        }
    }

    /** Writes a private file: a temp file (0600) in the same directory, renamed into place. */
    public static void writePrivate(Path file, byte[] content) throws IOException {
        ensurePrivateDir(file.toAbsolutePath().getParent());
        Path tmp = Files.createTempFile(file.toAbsolutePath().getParent(), ".gpuctl", ".tmp",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.write(tmp, content);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** A new empty private file (0600) in {@code file}'s directory (made private when missing), to fill and {@link #moveInto}. */
    public static Path privateTempBeside(Path file) throws IOException {
        ensurePrivateDir(file.toAbsolutePath().getParent());
        return Files.createTempFile(file.toAbsolutePath().getParent(), ".gpuctl", ".tmp",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    }

    /** Renames a file made by {@link #privateTempBeside} over {@code file}, atomically. */
    public static void moveInto(Path tmp, Path file) throws IOException {
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    public static final DateTimeFormatter RUN_TIME = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    /** A run's log directory name: "20261202-101500" plus "-SUFFIX" when given, plus "-N" for the N-th taken (N > 1). */
    static String runDirName(LocalDateTime start, String suffix, int n) {
        return start.format(RUN_TIME) + (suffix.isEmpty() ? "" : "-" + suffix) + (n > 1 ? "-" + n : "");
    }

    /**
     * Makes a new log directory for a run under {@code stateDir}/logs, named after the time it starts; a run that
     * starts in the same second as another (here or in another process) gets the next free name, taken atomically.
     */
    public static Path newRunDir(Path stateDir, String suffix) {
        try {
            Path logs = stateDir.toAbsolutePath().normalize().resolve("logs");
            ensurePrivateDir(logs);
            LocalDateTime now = LocalDateTime.now();
            for (int n = 1; ; n++) {
                Path d = logs.resolve(runDirName(now, suffix, n));
                try {
                    return Files.createDirectory(d, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                } catch (FileAlreadyExistsException taken) {
                    // another run of this second: the next name
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make a log directory under " + stateDir.resolve("logs"), e);
        }
    }
}
