package dev.gpuctl.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/** gpuctl's local state (.gpuctl/ beside the inventory): directories 0700, files 0600. */
public final class StateDir {
    private StateDir() {}

    /** Creates dir; it and every directory from .gpuctl/ down to it are 0700. */
    public static void ensurePrivateDir(Path dir) throws IOException {
        Path abs = dir.toAbsolutePath().normalize();
        Files.createDirectories(abs);
        Path top = abs;
        for (Path p = abs; p != null; p = p.getParent()) {
            if (p.getFileName() != null && p.getFileName().toString().equals(".gpuctl")) top = p;
        }
        for (Path p = abs; p != null && p.startsWith(top); p = p.getParent()) {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
        }
    }

    /** Writes a private file: a temp file (0600) in the same directory, renamed into place. */
    public static void writePrivate(Path file, byte[] content) throws IOException {
        ensurePrivateDir(file.toAbsolutePath().getParent());
        Path tmp = Files.createTempFile(file.toAbsolutePath().getParent(), ".gpuctl", ".tmp",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.write(tmp, content);
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
