package dev.gpuctl.backup;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorOutputStream;

/**
 * The control-plane backup archive (a gzip'd tar made on the master by {@code gpuctl backup}): what it must hold, its
 * file name and sha256 line, its listing, and which old archives a rotation removes. Pure: bytes and names in, values out.
 *
 * <p>Over 300 lines as one format: the archive's name, digest line, listing and member rules change together
 * (its hand-read tar headers are the part a tar library would replace).
 */
public final class BackupArchive {
    private BackupArchive() {}

    /** The etcd snapshot's name inside the archive ({@code etcdctl snapshot save}'s output). */
    public static final String SNAPSHOT = "etcd-snapshot.db";

    /** What a restore cannot do without: the snapshot, the cluster CA and etcd CA with their keys, admin.conf. */
    public static final List<String> REQUIRED = List.of(SNAPSHOT, "etc/kubernetes/pki/ca.crt", "etc/kubernetes/pki/ca.key",
        "etc/kubernetes/pki/etcd/ca.crt", "etc/kubernetes/pki/etcd/ca.key", "etc/kubernetes/admin.conf");

    /**
     * The master's paths (relative to /) packed beside the snapshot, those present: PKI, kubeconfigs, static pod manifests,
     * gpuctl's own directory (its kubeadm configuration and manifest copies), the kubelet's configuration and PKI. Backup
     * packs their regular files and directories only (links are not packed; the kubelet's current-certificate link is made
     * again by the restore), and a restore accepts nothing else ({@link #refused}): this list is the one both sides use.
     */
    public static final List<String> HOST_PATHS = List.of("etc/kubernetes/pki", "etc/kubernetes/admin.conf",
        "etc/kubernetes/super-admin.conf", "etc/kubernetes/controller-manager.conf", "etc/kubernetes/scheduler.conf",
        "etc/kubernetes/kubelet.conf", "etc/kubernetes/manifests", "etc/kubernetes/gpuctl",
        "var/lib/kubelet/config.yaml", "var/lib/kubelet/kubeadm-flags.env", "var/lib/kubelet/pki");

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,200}");
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

    /**
     * One member of the archive. @param type '0' file, '5' directory, '2' symlink, '1' hard link (tar's type flags)
     * @param link a link's target ("" for anything else)
     */
    public record Entry(String name, long size, int mode, char type, String link) {
        public boolean isFile() { return type == '0' || type == '\0' || type == '7'; }
    }

    /** The default file name of a backup: {@code CLUSTER-20261204T061500Z.tar.gz} (UTC; names sort by time). */
    public static String fileName(String cluster, Instant at) {
        return cluster + "-" + STAMP.format(at) + ".tar.gz";
    }

    /** Whether a file name is safe to use as is on the master's command line and in the sha256 file. */
    public static boolean safeName(String name) {
        return NAME.matcher(name).matches() && !name.endsWith(".sha256");
    }

    /**
     * Of the archives in a directory (file names), those a rotation keeping {@code keep} removes: this cluster's
     * archives by {@link #fileName}, oldest first, all but the newest {@code keep}. Other files are never touched.
     */
    public static List<String> toRemove(List<String> names, String cluster, int keep) {
        Pattern mine = Pattern.compile(Pattern.quote(cluster) + "-\\d{8}T\\d{6}Z\\.tar\\.gz");
        List<String> ours = names.stream().filter(n -> mine.matcher(n).matches()).sorted(Comparator.reverseOrder()).toList();
        if (ours.size() <= keep) return List.of();
        List<String> old = new ArrayList<>(ours.subList(keep, ours.size()));
        old.sort(Comparator.naturalOrder());
        return List.copyOf(old);
    }

    /** The sha256 (hex) of a file, read as a stream: an archive of any size, never held in memory. */
    public static String sha256(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) md.update(buf, 0, n);
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public static String sha256(byte[] content) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code sha256sum}'s line for a file: "HEX  NAME\n" (so {@code sha256sum -c NAME.sha256} checks it). */
    public static String sha256Line(String hex, String name) {
        return hex + "  " + name + "\n";
    }

    private static final Pattern SUM_LINE = Pattern.compile("([0-9a-f]{64}) [ *](.+)");

    /** The digest a sha256sum file gives for {@code name}; empty when the file names no such line. */
    public static Optional<String> digestFor(String sumFile, String name) {
        for (String line : sumFile.split("\n")) {
            Matcher m = SUM_LINE.matcher(line.strip());
            if (m.matches() && m.group(2).equals(name)) return Optional.of(m.group(1));
        }
        return Optional.empty();
    }

    /** Thrown when the bytes are no gzip'd tar. */
    public static final class Unreadable extends Exception {
        public Unreadable(String message) { super(message); }
    }

    /** The members of a gzip'd tar (ustar, GNU or pax), in order, as the archive names them (a directory without its '/'). */
    public static List<Entry> entries(byte[] tarGz) throws Unreadable {
        return entries(new ByteArrayInputStream(tarGz));
    }

    /** {@link #entries(byte[])} of an archive file, read as a stream. */
    public static List<Entry> entries(Path tarGz) throws Unreadable, IOException {
        try (InputStream in = Files.newInputStream(tarGz, LinkOption.NOFOLLOW_LINKS)) {
            return entries(in);
        }
    }

    /**
     * The content of the regular file {@code name} in the archive file, read as a stream; empty when there is no such
     * member, or it is larger than {@code maxBytes} (a certificate, say, not the snapshot).
     */
    public static Optional<byte[]> member(Path tarGz, String name, int maxBytes) throws Unreadable, IOException {
        try (InputStream raw = Files.newInputStream(tarGz, LinkOption.NOFOLLOW_LINKS); TarArchiveInputStream in = open(raw)) {
            for (TarArchiveEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
                Entry entry = entry(e);
                if (entry.name().equals(name) && entry.isFile()) {
                    return entry.size() > maxBytes ? Optional.empty() : Optional.of(in.readNBytes((int) entry.size()));
                }
            }
            return Optional.empty();
        } catch (IllegalArgumentException e) {
            throw new Unreadable("not a gzip'd tar: " + e.getMessage());
        }
    }

    private static List<Entry> entries(InputStream tarGz) throws Unreadable {
        List<Entry> out = new ArrayList<>();
        try (TarArchiveInputStream in = open(tarGz)) {
            for (TarArchiveEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) out.add(entry(e));
        } catch (IOException | IllegalArgumentException e) {
            throw new Unreadable("not a gzip'd tar: " + e.getMessage());
        }
        return List.copyOf(out);
    }

    private static TarArchiveInputStream open(InputStream tarGz) throws IOException {
        return new TarArchiveInputStream(new GzipCompressorInputStream(new BufferedInputStream(tarGz)));
    }

    private static Entry entry(TarArchiveEntry e) {
        String name = e.getName();
        if (e.isDirectory() && name.endsWith("/")) name = name.substring(0, name.length() - 1);
        char type = e.isDirectory() ? '5' : e.isSymbolicLink() ? '2' : e.isLink() ? '1' : (char) e.getLinkFlag();
        return new Entry(name, e.getSize(), e.getMode() & 07777, type, e.getLinkName() == null ? "" : e.getLinkName());
    }

    /**
     * Whether {@code name} is a path {@code gpuctl backup} writes: the snapshot, one of {@link #HOST_PATHS} or a path below
     * one of them, relative, with no empty, "." or ".." part.
     */
    public static boolean allowed(String name) {
        if (name.isEmpty() || name.startsWith("/")) return false;
        for (String part : name.split("/", -1)) {
            if (part.isEmpty() || part.equals(".") || part.equals("..")) return false;
        }
        if (name.equals(SNAPSHOT)) return true;
        return HOST_PATHS.stream().anyMatch(p -> name.equals(p) || name.startsWith(p + "/"));
    }

    /**
     * Why a restore must not use these members, one line per member refused (empty: every member is a regular file or a
     * directory at a path backup writes). A link (symbolic or hard), a device, a FIFO, an absolute name, a name with ".."
     * and a path backup does not write are each refused by name.
     */
    public static List<String> refused(List<Entry> entries) {
        List<String> out = new ArrayList<>();
        for (Entry e : entries) {
            if (legacy(e)) continue;
            String n = "member '" + e.name() + "'";
            if (e.name().startsWith("/")) out.add(n + " has an absolute name");
            else if (Arrays.asList(e.name().split("/", -1)).contains("..")) out.add(n + " has a '..' in its name");
            else if (e.type() == '2') out.add(n + " is a symbolic link (to " + e.link() + ")");
            else if (e.type() == '1') out.add(n + " is a hard link (to " + e.link() + ")");
            else if (!e.isFile() && e.type() != '5') out.add(n + " is " + kind(e.type()) + ", not a regular file or directory");
            else if (!allowed(e.name())) out.add(n + " is not a path gpuctl backup writes");
        }
        return List.copyOf(out);
    }

    /** The kubelet's link to its current client certificate, as the kubelet names it (target absolute or bare). */
    private static final Pattern KUBELET_CURRENT_TARGET =
        Pattern.compile("(/var/lib/kubelet/pki/)?kubelet-client-[0-9-]+\\.pem");

    /**
     * What archives of an earlier gpuctl hold that this one no longer writes, and that a restore leaves out instead of
     * refusing (they are never uploaded): a directory above the paths backup writes ({@code etc/}, {@code var/lib/}) and
     * the kubelet's {@code kubelet-client-current.pem} link to a certificate beside it, which the restore makes again.
     */
    static boolean legacy(Entry e) {
        if (e.type() == '5') return HOST_PATHS.stream().anyMatch(p -> p.startsWith(e.name() + "/"));
        return e.type() == '2' && e.name().equals("var/lib/kubelet/pki/kubelet-client-current.pem")
            && KUBELET_CURRENT_TARGET.matcher(e.link()).matches();
    }

    private static String kind(char type) {
        return switch (type) {
            case '3' -> "a character device";
            case '4' -> "a block device";
            case '6' -> "a FIFO";
            case 'S' -> "a sparse file";
            default -> "of tar type '" + type + "'";
        };
    }

    /** Thrown by {@link #repack} when the archive holds a member a restore must not use; the message names them all. */
    public static final class Refused extends Exception {
        public Refused(String message) { super(message); }
    }

    /**
     * The archive again, holding only its checked members (see {@link #refused}): regular files and directories at the
     * paths backup writes, owned by root, their modes without set-id or sticky bits, written with pax headers for long
     * names and large sizes. What a restore uploads: the master never reads a byte of the original tar's headers.
     */
    public static byte[] repack(byte[] tarGz) throws Unreadable, Refused {
        List<String> bad = refused(entries(tarGz));
        if (!bad.isEmpty()) throw new Refused(String.join("; ", bad));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(tarGz.length + 4096);
        repack(new ByteArrayInputStream(tarGz), bytes);
        return bytes.toByteArray();
    }

    /**
     * {@link #repack(byte[])} from the archive file {@code from} into the new file {@code to}, both as streams: an archive
     * of any size, never held in memory.
     */
    public static void repack(Path from, Path to) throws Unreadable, Refused, IOException {
        List<String> bad = refused(entries(from));
        if (!bad.isEmpty()) throw new Refused(String.join("; ", bad));
        try (InputStream in = Files.newInputStream(from, LinkOption.NOFOLLOW_LINKS);
             OutputStream out = new BufferedOutputStream(Files.newOutputStream(to, LinkOption.NOFOLLOW_LINKS,
                 StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING))) {
            repack(in, out);
        }
    }

    private static void repack(InputStream tarGz, OutputStream to) throws Unreadable {
        try (TarArchiveInputStream in = open(tarGz);
             TarArchiveOutputStream out = new TarArchiveOutputStream(new GzipCompressorOutputStream(to))) {
            out.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            out.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
            for (TarArchiveEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
                Entry checked = entry(e);
                if (legacy(checked)) continue;
                TarArchiveEntry copy = new TarArchiveEntry(checked.name() + (checked.type() == '5' ? "/" : ""),
                    checked.type() == '5' ? TarConstants.LF_DIR : TarConstants.LF_NORMAL);
                copy.setMode((checked.type() == '5' ? 040000 : 0100000) | (checked.mode() & 0777));
                copy.setIds(0, 0);
                copy.setNames("root", "root");
                copy.setModTime(e.getModTime());
                if (checked.type() != '5') copy.setSize(checked.size());
                out.putArchiveEntry(copy);
                if (checked.type() != '5') in.transferTo(out);
                out.closeArchiveEntry();
            }
        } catch (IOException | IllegalArgumentException e) {
            throw new Unreadable("not a gzip'd tar: " + e.getMessage());
        }
    }

    /** The required members an archive lacks (empty: a restore has what it needs). */
    public static List<String> missing(List<Entry> entries) {
        return REQUIRED.stream().filter(r -> entries.stream().noneMatch(e -> e.name().equals(r) && e.isFile())).toList();
    }

    /** One line per member: mode, size, name ("-rw------- 1234 etc/kubernetes/pki/ca.key"); no content. */
    public static String listing(List<Entry> entries) {
        StringBuilder sb = new StringBuilder();
        for (Entry e : entries) {
            sb.append(switch (e.type()) { case '5' -> 'd'; case '2' -> 'l'; default -> '-'; })
                .append(perms(e.mode())).append(String.format(" %10d ", e.size())).append(e.name()).append('\n');
        }
        return sb.toString();
    }

    static String perms(int mode) {
        String rwx = "rwxrwxrwx";
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 9; i++) sb.append((mode & (1 << (8 - i))) != 0 ? rwx.charAt(i) : '-');
        return sb.toString();
    }
}
