package dev.gpuctl.hostfiles;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Edits /etc/fstab so that no swap comes back at boot.
 *
 * <p>An entry is an <em>active swap entry</em> when the line is not a comment and its third
 * field (fs_vfstype) is exactly {@code swap}. Fields are split on any run of blanks, so
 * Ubuntu's {@code /swap.img\tnone\tswap\tsw\t0\t0} is found where a {@code sed '/ swap /'}
 * misses it. Swap files, partitions and {@code UUID=}/{@code LABEL=}/{@code PARTUUID=} devices
 * are all entries like any other; a {@code noauto} swap entry is commented out too (it is
 * harmless commented, and a later {@code swapon -a} edit would otherwise bring it back).
 *
 * <p>A commented entry is the original line, unchanged, behind {@link #MARKER}, so a person (or a
 * later "undo") can see what gpuctl did. Every other byte of the file is kept: comments, blank
 * lines, other mounts (including an ext4 mount on a directory named {@code /swap}), line endings
 * and whether the file ends with a newline.
 */
public final class Fstab {

    /** What gpuctl puts in front of a swap line it disables. */
    public static final String MARKER = "#gpuctl-swapoff# ";

    private static final Pattern BLANKS = Pattern.compile("[ \\t]+");

    private Fstab() {
    }

    /**
     * Returns fstab with every active swap entry commented out behind {@link #MARKER}.
     * Idempotent: an already commented line is a comment and stays as it is.
     *
     * @param fstab the file's text; empty is an empty file
     * @return the edited text, identical to the input when there was no active swap entry
     */
    public static String commentOutSwap(String fstab) {
        StringBuilder out = new StringBuilder(fstab.length() + 64);
        for (String line : fstab.split("\n", -1)) {
            out.append(isActiveSwap(line) ? MARKER + line : line).append('\n');
        }
        out.setLength(out.length() - 1); // split(-1) gave one more piece than there were newlines
        return out.toString();
    }

    /**
     * The active swap entries, each the original line without its newline (a trailing carriage
     * return of a CRLF file is kept), in file order.
     */
    public static List<String> activeSwapEntries(String fstab) {
        List<String> found = new ArrayList<>();
        for (String line : fstab.split("\n", -1)) {
            if (isActiveSwap(line)) found.add(line);
        }
        return found;
    }

    /** True when the line is a swap entry that gpuctl commented out. */
    public static boolean isDisabledByGpuctl(String line) {
        return line.startsWith(MARKER) && isActiveSwap(line.substring(MARKER.length()));
    }

    /** True when a single fstab line (no newline) is an uncommented entry of type swap. */
    static boolean isActiveSwap(String line) {
        String s = line.strip();
        if (s.isEmpty() || s.startsWith("#")) return false;
        String[] fields = BLANKS.split(s);
        return fields.length >= 3 && fields[2].equals("swap");
    }
}
