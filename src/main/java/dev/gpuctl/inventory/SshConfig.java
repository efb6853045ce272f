package dev.gpuctl.inventory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The part of an OpenSSH client configuration ({@code ~/.ssh/config}, ssh_config(5)) that says how to reach a host:
 * HostName, User, Port, IdentityFile and ProxyJump. As ssh reads it:
 * <ul>
 * <li>{@code Host} blocks apply when one of their patterns matches the name ({@code *} and {@code ?} wildcards,
 * {@code !} negates, names compared without case); lines before the first Host or Match apply to every host;</li>
 * <li>{@code Match} blocks with the criteria {@code all}, {@code host} (the HostName obtained so far, else the name)
 * and {@code originalhost} (the name), each negatable with {@code !}, all of them having to hold; a Match with any other
 * criterion (exec, user, localnetwork, canonical, final, tagged…) is skipped, and {@link #notes} says so;</li>
 * <li>{@code Include} reads files in place (glob wildcards, expanded in lexical order; a relative path is under
 * ~/.ssh; at most {@value #MAX_DEPTH} deep, as OpenSSH's READCONF_MAX_DEPTH); inside a Host or Match block that
 * does not apply, the files are not applied either, and their own Host and Match lines never change the state of
 * the file that includes them;</li>
 * <li>for each keyword the first value obtained wins.</li>
 * </ul>
 * Pure: files are read through a {@link Files} given by the caller. {@link SshConfigReader} reads the text into
 * entries (Include followed); this class walks them for a host.
 */
public final class SshConfig {
    /** OpenSSH's READCONF_MAX_DEPTH: how deep Include may nest. */
    public static final int MAX_DEPTH = 16;

    /** What the configuration says for one host; empty where it says nothing. */
    public record Host(Optional<String> hostName, Optional<String> user, Optional<Integer> port,
                       Optional<String> identityFile, Optional<String> proxyJump) {
        public static final Host NONE = new Host(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());
        public boolean isEmpty() { return equals(NONE); }
    }

    /** How an Include reads files: a folder's entry names, and a file's text (empty when it is not a readable file). */
    public interface Files {
        List<String> list(Path dir);

        Optional<String> read(Path file);

        /** No files at all: Include finds nothing. */
        Files NONE = new Files() {
            @Override public List<String> list(Path dir) { return List.of(); }
            @Override public Optional<String> read(Path file) { return Optional.empty(); }
        };
    }

    sealed interface Entry permits HostLine, MatchLine, Option, Include {}
    record HostLine(List<String> patterns) implements Entry {}
    /** A Match line: its criteria, or why gpuctl does not read it (the block then never applies). */
    record MatchLine(List<Criterion> criteria, Optional<String> unsupported, String where) implements Entry {}
    record Criterion(String keyword, boolean negated, List<String> patterns) {}
    record Option(String key, String value) implements Entry {}
    record Include(List<List<Entry>> files) implements Entry {}

    private final List<Entry> entries;
    /** Problems found while reading, as "FILE:LINE: what" ("LINE: what" for text without a file). */
    private final List<String> problems;

    private SshConfig(List<Entry> entries, List<String> problems) {
        this.entries = entries;
        this.problems = problems;
    }

    public static final SshConfig EMPTY = new SshConfig(List.of(), List.of());

    public List<String> problems() { return problems; }

    static final List<String> KEYWORDS = List.of("hostname", "user", "port", "identityfile", "proxyjump");
    static final List<String> MATCH_READ = List.of("all", "host", "originalhost");
    static final List<String> MATCH_KNOWN = List.of("all", "canonical", "final", "exec", "localnetwork", "host",
        "originalhost", "tagged", "user", "localuser", "command", "version", "sessiontype");

    /** One file's text, with no Include read (there are no files). */
    public static SshConfig parse(String text) {
        return parse(text, null, null, Files.NONE);
    }

    /**
     * A configuration file and what it includes.
     *
     * @param file   the file's path, named in problems (null: problems give the line only)
     * @param sshDir where a relative Include path is (~/.ssh); '~/' in an Include is its parent
     */
    public static SshConfig parse(String text, Path file, Path sshDir, Files files) {
        List<String> problems = new ArrayList<>();
        List<Entry> entries = new SshConfigReader(file, sshDir, files, problems).read(text, file, 0);
        return new SshConfig(entries, problems);
    }

    /** What the walk for one name found: the first value of each keyword, and the Match blocks it had to skip. */
    private record Found(Map<String, String> values, Set<String> notes) {}

    private Found walk(String name) {
        Found found = new Found(new LinkedHashMap<>(), new LinkedHashSet<>());
        walk(entries, name, found);
        return found;
    }

    private static void walk(List<Entry> entries, String name, Found found) {
        boolean active = true;
        for (Entry e : entries) {
            if (e instanceof HostLine h) {
                active = matches(h.patterns(), name);
            } else if (e instanceof MatchLine m) {
                active = applies(m, name, found);
            } else if (e instanceof Option o) {
                if (active) found.values().putIfAbsent(o.key(), o.value());
            } else if (e instanceof Include inc && active) {
                // the included files start in this block's state; their Host and Match lines end with them
                inc.files().forEach(f -> walk(f, name, found));
            }
        }
    }

    private static boolean applies(MatchLine m, String name, Found found) {
        if (m.unsupported().isPresent()) {
            if (!m.unsupported().get().isEmpty() && m.criteria().stream().allMatch(c -> holds(c, name, found))) {
                found.notes().add(m.where() + ": Match " + m.unsupported().get() + " is not read by gpuctl: the block"
                    + " is skipped (give what it sets in the inventory's ssh: settings)");
            }
            return false;
        }
        return m.criteria().stream().allMatch(c -> holds(c, name, found));
    }

    private static boolean holds(Criterion c, String name, Found found) {
        boolean result = switch (c.keyword()) {
            case "all" -> true;
            case "host" -> matchesList(c.patterns(), hostName(found, name).orElse(name));
            default -> matchesList(c.patterns(), name);
        };
        return c.negated() != result;
    }

    private static Optional<String> hostName(Found found, String name) {
        return Optional.ofNullable(found.values().get("hostname")).map(h -> h.replace("%h", name).replace("%%", "%"));
    }

    /** What applies to {@code name} (the inventory's address), first value of each keyword winning. */
    public Host lookup(String name) {
        Found f = walk(name);
        Map<String, String> found = f.values();
        return new Host(hostName(f, name), Optional.ofNullable(found.get("user")),
            Optional.ofNullable(found.get("port")).map(Integer::parseInt), Optional.ofNullable(found.get("identityfile")),
            Optional.ofNullable(found.get("proxyjump")).filter(j -> !j.equalsIgnoreCase("none")));
    }

    /** The Match blocks that would have been read for {@code name} but were skipped, as "FILE:LINE: what". */
    public List<String> notes(String name) {
        return List.copyOf(walk(name).notes());
    }

    /** ssh_config's pattern list: a negated pattern that matches excludes the host, else any positive match. */
    static boolean matches(List<String> patterns, String name) {
        boolean any = false;
        for (String p : patterns) {
            boolean negated = p.startsWith("!");
            String glob = negated ? p.substring(1) : p;
            if (globPattern(glob, true).matcher(name.toLowerCase(Locale.ROOT)).matches()) {
                if (negated) return false;
                any = true;
            }
        }
        return any;
    }

    /** A Match pattern list: comma-separated, with the same negation as Host's. */
    private static boolean matchesList(List<String> patterns, String name) {
        return matches(patterns.stream().map(String::strip).filter(p -> !p.isEmpty()).toList(), name);
    }

    static Pattern globPattern(String glob, boolean hostPattern) {
        StringBuilder re = new StringBuilder();
        String g = hostPattern ? glob.toLowerCase(Locale.ROOT) : glob;
        for (int i = 0; i < g.length(); i++) {
            char c = g.charAt(i);
            switch (c) {
                case '*' -> re.append(".*");
                case '?' -> re.append('.');
                case '[' -> {
                    int close = g.indexOf(']', i + 2);
                    if (hostPattern || close < 0) {
                        re.append(Pattern.quote("["));
                    } else {
                        String set = g.substring(i + 1, close);
                        if (set.startsWith("!")) set = "^" + set.substring(1);
                        re.append('[').append(set.replace("\\", "\\\\").replace("[", "\\[")).append(']');
                        i = close;
                    }
                }
                default -> re.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile(re.toString());
    }

    /** The first hop of a ProxyJump value ([user@]host[:port][,next...]): user, host and port. */
    public record Jump(Optional<String> user, String host, Optional<Integer> port) {
        public static Optional<Jump> parse(String value) {
            String first = value.split(",", 2)[0].strip();
            if (first.startsWith("ssh://")) first = first.substring("ssh://".length());
            Optional<String> user = Optional.empty();
            int at = first.lastIndexOf('@');
            if (at >= 0) {
                user = Optional.of(first.substring(0, at));
                first = first.substring(at + 1);
            }
            Optional<Integer> port = Optional.empty();
            if (first.startsWith("[")) {
                int close = first.indexOf(']');
                if (close < 0) return Optional.empty();
                String rest = first.substring(close + 1);
                if (rest.matches(":[0-9]{1,5}")) port = Optional.of(Integer.parseInt(rest.substring(1)));
                first = first.substring(1, close);
            } else if (first.matches("[^:]+:[0-9]{1,5}")) {
                port = Optional.of(Integer.parseInt(first.substring(first.indexOf(':') + 1)));
                first = first.substring(0, first.indexOf(':'));
            }
            return first.isEmpty() ? Optional.empty() : Optional.of(new Jump(user, first, port));
        }
    }
}
