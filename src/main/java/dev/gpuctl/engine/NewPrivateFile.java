package dev.gpuctl.engine;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A new private file on this machine anywhere the user names (a backup's {@code --out}): created exclusively
 * ({@code CREATE_NEW}: an existing file or a link planted at the path is refused, never followed or overwritten), 0600
 * from its creation. Its directory and every one above it must be writable by nobody else, unless sticky (like /tmp);
 * an existing directory's mode is never changed; a directory made here is 0700. A refusal is a {@link StateDir.Refused}
 * (exit 2) naming the path, why, and what to do.
 */
public final class NewPrivateFile {
    private NewPrivateFile() {}

    private static final int STICKY = 01000;
    private static final int GROUP_WRITE = 0020;
    private static final int OTHER_WRITE = 0002;

    /** An existing directory's owner, group and mode bits (with the sticky bit), as {@code stat} gives them. */
    record Dir(Path path, long uid, long gid, int mode) {}

    /**
     * Why a file may not be made in {@code d} (or below it) for the user {@code myUid} of primary group {@code myGid}:
     * another user (not root) owns it, or others may write it (world-writable, or group-writable by a group that is not
     * the user's own) and it is not sticky. Empty when it is fit. Pure.
     */
    static Optional<String> problem(Dir d, long myUid, long myGid) {
        if (d.uid() != myUid && d.uid() != 0) {
            return Optional.of(d.path() + " belongs to another user (uid " + d.uid() + "), who could replace the file: choose a"
                + " directory of your own");
        }
        boolean othersWrite = (d.mode() & OTHER_WRITE) != 0 || ((d.mode() & GROUP_WRITE) != 0 && d.gid() != myGid);
        if (othersWrite && (d.mode() & STICKY) == 0) {
            return Optional.of(d.path() + " is writable by others (mode " + String.format("%04o", d.mode() & 07777)
                + ") and not sticky: another user could replace the file; choose a directory only you can write"
                + " (gpuctl does not change an existing directory's mode)");
        }
        return Optional.empty();
    }

    private static Dir stat(Path p) throws IOException {
        return new Dir(p, ((Number) Files.getAttribute(p, "unix:uid")).longValue(),
            ((Number) Files.getAttribute(p, "unix:gid")).longValue(), ((Number) Files.getAttribute(p, "unix:mode")).intValue());
    }

    private static long myGid() { return new com.sun.security.auth.module.UnixSystem().getGid(); }

    /**
     * Checks, changing nothing, where {@code file} would go: an existing file (or link) at the path, or a directory on
     * the way that others may write (see {@link #problem}), is refused. What a command asks before it connects anywhere.
     */
    public static void check(Path file) {
        prepare(file, false);
    }

    /**
     * Checks where {@code file} would go as {@link #check} does and, with {@code make}, makes its missing directories
     * (0700). Returns the file's path through its directory's real path.
     */
    private static Path prepare(Path file, boolean make) {
        Path abs = file.toAbsolutePath().normalize();
        Path parent = abs.getParent();
        try {
            Path existing = parent;
            List<Path> missing = new ArrayList<>();
            while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
                missing.add(0, existing);
                existing = existing.getParent();
            }
            if (existing == null) throw new StateDir.Refused(abs + ": no directory of it exists");
            Path real = existing.toRealPath();
            if (!Files.isDirectory(real)) throw new StateDir.Refused(existing + " is not a directory: choose another --out");
            long me = StateDir.myUid();
            long gid = myGid();
            for (Path p = real; p != null; p = p.getParent()) {
                Optional<String> bad = problem(stat(p), me, gid);
                if (bad.isPresent()) throw new StateDir.Refused("refusing to write " + abs + ": " + bad.get());
            }
            Path dir = real;
            if (!missing.isEmpty() && !make) return abs; // its directory is still to be made: nothing is there yet
            for (Path m : missing) {
                dir = dir.resolve(m.getFileName());
                try {
                    Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                } catch (FileAlreadyExistsException raced) {
                    throw new StateDir.Refused("refusing to write " + abs + ": " + dir + " appeared while gpuctl was making it;"
                        + " check who made it, then run again");
                }
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------")); // only ours: just made
            }
            Path target = dir.resolve(abs.getFileName());
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                throw new StateDir.Refused(target + (Files.isSymbolicLink(target) ? " is a symbolic link" : " exists")
                    + "; nothing was written (name another file, or move it away)");
            }
            return target;
        } catch (IOException e) {
            throw new StateDir.Refused("cannot write " + abs + ": " + e);
        }
    }

    /**
     * Makes a new, empty file at {@code file} (checked as {@link #check} does; missing directories made 0700): created
     * exclusively, 0600 from creation; an existing file or link at the path is refused and left as it is. Returns its
     * path, for the caller to fill (no other user can replace it: its directory is ours, or sticky).
     */
    public static Path create(Path file) {
        Path target = prepare(file, true);
        try {
            Files.createFile(target, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            return target;
        } catch (FileAlreadyExistsException e) {
            throw new StateDir.Refused(target + " appeared while gpuctl was writing it; nothing was written to it");
        } catch (IOException e) {
            throw new StateDir.Refused("cannot write " + target + ": " + e);
        }
    }

    /** Writes {@code content} to a new file at {@code file}, made as {@link #create} makes it. */
    public static void write(Path file, byte[] content) {
        Path target = create(file);
        try (OutputStream out = Files.newOutputStream(target, LinkOption.NOFOLLOW_LINKS, StandardOpenOption.WRITE)) {
            out.write(content);
        } catch (IOException e) {
            throw new StateDir.Refused("cannot write " + target + ": " + e);
        }
    }
}
