package dev.gpuctl.engine;

import dev.gpuctl.hostfiles.HostJournal;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The shell functions some of gpuctl's commands call without defining them (the change journal's {@code gj} and
 * {@code hx}: the runner puts their definitions first in the same command). The plan shows their definitions once, so
 * that every command it prints can be pasted into a shell. Pure.
 */
public final class ShellHelpers {
    private ShellHelpers() {}

    /** The definitions, one shell line. */
    public static final String PREAMBLE = HostJournal.SHELL_FUNCTIONS.strip();

    private static final Pattern DEFINITION = Pattern.compile("(?:^|[;{}&|\\s])([A-Za-z_][A-Za-z0-9_]*)\\(\\) *\\{");

    /** The names of the functions {@code shell} defines ({@code name() {}). */
    public static Set<String> defined(String shell) {
        Set<String> names = new LinkedHashSet<>();
        Matcher m = DEFINITION.matcher(shell);
        while (m.find()) names.add(m.group(1));
        return names;
    }

    /**
     * The functions of {@code names} that {@code command} calls (as a command word: at its start, or after
     * {@code ; & | ( { ! $(}, {@code do}, {@code then}, {@code else}, {@code &&}, {@code ||}) without defining them itself.
     */
    public static Set<String> undefinedCalls(String command, Set<String> names) {
        Set<String> own = defined(command);
        Set<String> out = new LinkedHashSet<>();
        for (String name : names) {
            if (own.contains(name)) continue;
            Pattern call = Pattern.compile("(?:^|[;&|({!]|\\$\\(|\\bdo|\\bthen|\\belse)\\s*" + Pattern.quote(name) + "(?=\\s|;|$|\\))");
            if (call.matcher(command).find()) out.add(name);
        }
        return out;
    }

    /** Whether any of these commands calls one of {@link #PREAMBLE}'s functions without defining it. */
    public static boolean needed(List<String> commands) {
        Set<String> names = defined(PREAMBLE);
        return commands.stream().anyMatch(c -> !undefinedCalls(c, names).isEmpty());
    }
}
