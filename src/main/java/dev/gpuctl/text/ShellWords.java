package dev.gpuctl.text;

import java.util.Collection;
import java.util.stream.Collectors;

/** Words of the POSIX shell commands gpuctl writes: pure, used by the steps and the workload commands alike. */
public final class ShellWords {
    private ShellWords() {}

    /** Single-quotes a word for POSIX sh (a plain word stays as it is). */
    public static String quote(String s) {
        if (s.matches("[A-Za-z0-9_@%+=:,./-]+")) return s;
        return "'" + s.replace("'", "'\\''") + "'";
    }

    /** Each word quoted, joined by spaces. */
    public static String words(Collection<String> words) {
        return words.stream().map(ShellWords::quote).collect(Collectors.joining(" "));
    }
}
