package dev.gpuctl.hostconf;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;

/**
 * The control-plane backup archive (a gzip'd tar made on the master by {@code gpuctl backup}): what it must hold, its
 * file name and sha256 line, its listing, and which old archives a rotation removes. Pure: bytes and names in, values out.
 */
public final class BackupArchive {
    private BackupArchive() {}

    /** The etcd snapshot's name inside the archive ({@code etcdctl snapshot save}'s output). */
    public static final String SNAPSHOT = "etcd-snapshot.db";

    /** What a restore cannot do without: the snapshot, the cluster CA and etcd CA with their keys, admin.conf. */
    public static final List<String> REQUIRED = List.of(SNAPSHOT, "etc/kubernetes/pki/ca.crt", "etc/kubernetes/pki/ca.key",
        "etc/kubernetes/pki/etcd/ca.crt", "etc/kubernetes/pki/etcd/ca.key", "etc/kubernetes/admin.conf");

    /** The master's paths (relative to /) packed beside the snapshot, those present: PKI, kubeconfigs, manifests, configs. */
    public static final List<String> HOST_PATHS = List.of("etc/kubernetes/pki", "etc/kubernetes/admin.conf",
        "etc/kubernetes/super-admin.conf", "etc/kubernetes/controller-manager.conf", "etc/kubernetes/scheduler.conf",
        "etc/kubernetes/kubelet.conf", "etc/kubernetes/manifests", "etc/kubernetes/gpuctl/kubeadm-init.yaml",
        "var/lib/kubelet/config.yaml", "var/lib/kubelet/kubeadm-flags.env", "var/lib/kubelet/pki");

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,200}");
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

    /** One member of the archive. @param type '0' file, '5' directory, '2' symlink (tar's type flags) */
    public record Entry(String name, long size, int mode, char type) {
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

    /** The members of a gzip'd (ustar or GNU) tar, in order. */
    public static List<Entry> entries(byte[] tarGz) throws Unreadable {
        List<Entry> out = new ArrayList<>();
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(tarGz))) {
            String longName = null;
            while (true) {
                byte[] h = in.readNBytes(512);
                if (h.length == 0) break;
                if (h.length < 512) throw new Unreadable("the tar stream ends inside a header");
                if (allZero(h)) break;
                String name = text(h, 0, 100);
                int mode = (int) octal(h, 100, 8);
                long size = octal(h, 124, 12);
                char type = (char) h[156];
                String prefix = "ustar".equals(text(h, 257, 5)) ? text(h, 345, 155) : "";
                if (!prefix.isEmpty()) name = prefix + "/" + name;
                long padded = (size + 511) / 512 * 512;
                if (type == 'L') {
                    byte[] n = in.readNBytes((int) padded);
                    longName = new String(n, 0, (int) Math.min(size, n.length), StandardCharsets.UTF_8).replace("\0", "");
                    continue;
                }
                try {
                    in.skipNBytes(padded);
                } catch (EOFException e) {
                    throw new Unreadable("the tar stream ends inside " + name);
                }
                if (type == 'x' || type == 'g') continue;
                if (longName != null) { name = longName; longName = null; }
                if (name.startsWith("./")) name = name.substring(2);
                if (name.endsWith("/")) name = name.substring(0, name.length() - 1);
                out.add(new Entry(name, size, mode, type));
            }
        } catch (IOException e) {
            throw new Unreadable("not a gzip'd tar: " + e.getMessage());
        }
        return List.copyOf(out);
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

    private static boolean allZero(byte[] b) {
        for (byte x : b) if (x != 0) return false;
        return true;
    }

    private static String text(byte[] b, int off, int len) {
        int end = off;
        while (end < off + len && b[end] != 0) end++;
        return new String(b, off, end - off, StandardCharsets.UTF_8);
    }

    private static long octal(byte[] b, int off, int len) throws Unreadable {
        String s = text(b, off, len).strip();
        if (s.isEmpty()) return 0;
        try {
            return Long.parseLong(s, 8);
        } catch (NumberFormatException e) {
            throw new Unreadable("a tar header's number is not octal: '" + s + "'");
        }
    }
}
