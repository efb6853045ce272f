package dev.gpuctl.hostfiles;

import dev.gpuctl.text.HostConfException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads /proc/swaps: a header line ({@code Filename Type Size Used Priority}) and one row per
 * active swap area. The kernel escapes blanks and backslashes in file names as octal
 * ({@code \040}); they are unescaped here, so {@code /swap file} reads back as written.
 */
public final class ProcSwaps {

    /** One active swap area; sizes in KiB as the kernel prints them. */
    public record SwapArea(String filename, String type, long sizeKb, long usedKb, int priority) {
    }

    private static final Pattern OCTAL = Pattern.compile("\\\\([0-7]{3})");

    private ProcSwaps() {
    }

    /**
     * Parses the text of /proc/swaps. An empty text or a header alone is no swap.
     *
     * @throws HostConfException when a row does not have the five columns with numbers where
     *                           numbers belong
     */
    public static List<SwapArea> parse(String procSwaps) {
        List<SwapArea> areas = new ArrayList<>();
        String[] lines = procSwaps.split("\n");
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty() || (i == 0 && line.startsWith("Filename"))) continue;
            String[] f = line.split("\\s+");
            if (f.length != 5) {
                throw new HostConfException("/proc/swaps line " + (i + 1) + " has " + f.length
                        + " columns, expected 5 (Filename Type Size Used Priority): " + line);
            }
            try {
                areas.add(new SwapArea(unescape(f[0]), f[1], Long.parseLong(f[2]), Long.parseLong(f[3]),
                        Integer.parseInt(f[4])));
            } catch (NumberFormatException e) {
                throw new HostConfException("/proc/swaps line " + (i + 1)
                        + " has a size, used or priority that is not a number: " + line, e);
            }
        }
        return List.copyOf(areas);
    }

    private static String unescape(String name) {
        Matcher m = OCTAL.matcher(name);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(sb, Matcher.quoteReplacement(String.valueOf((char) Integer.parseInt(m.group(1), 8))));
        }
        m.appendTail(sb);
        return sb.toString();
    }
}
