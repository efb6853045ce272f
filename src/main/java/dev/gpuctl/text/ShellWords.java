package dev.gpuctl.text;

import java.util.Collection;
import java.util.stream.Collectors;

/** Words of the POSIX shell commands gpuctl writes: pure, used by the steps and the workload commands alike. */
public final class ShellWords {
    private ShellWords() {}

    /**
     * One POSIX shell word that stands for exactly {@code s} (newlines, quotes and $ included): single-quoted, a plain
     * word as it is. The one quoting function of gpuctl; a NUL cannot be in a shell word and is refused.
     */
    public static String quote(String s) {
        if (s.indexOf('\0') >= 0) throw new IllegalArgumentException("a shell word cannot hold a NUL character");
        if (s.matches("[A-Za-z0-9_@%+=:,./-]+")) return s;
        return "'" + s.replace("'", "'\\''") + "'";
    }

    /** Each word quoted, joined by spaces. */
    public static String words(Collection<String> words) {
        return words.stream().map(ShellWords::quote).collect(Collectors.joining(" "));
    }
}
