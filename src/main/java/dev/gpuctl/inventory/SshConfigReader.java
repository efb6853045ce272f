package dev.gpuctl.inventory;

import static dev.gpuctl.inventory.SshConfig.KEYWORDS;
import static dev.gpuctl.inventory.SshConfig.MATCH_KNOWN;
import static dev.gpuctl.inventory.SshConfig.MATCH_READ;
import static dev.gpuctl.inventory.SshConfig.MAX_DEPTH;
import static dev.gpuctl.inventory.SshConfig.globPattern;

import dev.gpuctl.inventory.SshConfig.Criterion;
import dev.gpuctl.inventory.SshConfig.Entry;
import dev.gpuctl.inventory.SshConfig.HostLine;
import dev.gpuctl.inventory.SshConfig.Include;
import dev.gpuctl.inventory.SshConfig.MatchLine;
import dev.gpuctl.inventory.SshConfig.Option;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Reads an OpenSSH client configuration's text into {@link SshConfig}'s entries: keywords, Host and Match lines, and
 * Include followed into the files it names (at most {@link SshConfig#MAX_DEPTH} deep); problems as "FILE:LINE: what".
 */
record SshConfigReader(Path top, Path sshDir, SshConfig.Files files, List<String> problems) {
    List<Entry> read(String text, Path file, int depth) {
        List<Entry> out = new ArrayList<>();
        int n = 0;
        for (String raw : text.split("\n", -1)) {
            n++;
            String where = (file == null ? "" : file + ":") + n;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) continue;
            String[] kv = line.split("(\\s*=\\s*|\\s+)", 2);
            String key = kv[0].toLowerCase(Locale.ROOT);
            List<String> args = kv.length > 1 ? words(kv[1]) : List.of();
            String value = String.join(" ", args);
            switch (key) {
                case "host" -> out.add(new HostLine(List.copyOf(args)));
                case "match" -> out.add(match(args, where));
                case "include" -> out.add(include(args, where, depth));
                default -> {
                    if (!KEYWORDS.contains(key)) continue;
                    if (key.equals("port") && !(value.matches("[0-9]{1,5}") && Integer.parseInt(value) >= 1
                        && Integer.parseInt(value) <= 65535)) {
                        problems.add(where + ": Port '" + value + "' is not a port number (expected 1 to 65535)");
                        continue;
                    }
                    out.add(new Option(key, key.equals("identityfile") || key.equals("hostname") ? value
                        : args.isEmpty() ? "" : args.get(0)));
                }
            }
        }
        return out;
    }

    private MatchLine match(List<String> args, String where) {
        List<Criterion> criteria = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String word = args.get(i);
            boolean negated = word.startsWith("!");
            String keyword = (negated ? word.substring(1) : word).toLowerCase(Locale.ROOT);
            if (keyword.equals("all") || keyword.equals("canonical") || keyword.equals("final")) {
                if (keyword.equals("all")) {
                    boolean alone = i == args.size() - 1 && criteria.isEmpty()
                        && skipped.stream().allMatch(s -> s.equals("canonical") || s.equals("final"));
                    if (!alone) {
                        problems.add(where + ": Match all cannot be combined with other criteria (ssh refuses"
                            + " this file too; write 'Match all' alone)");
                        return new MatchLine(List.of(), Optional.of("all with other criteria"), where);
                    }
                    criteria.add(new Criterion("all", negated, List.of()));
                } else {
                    skipped.add(keyword);
                }
                continue;
            }
            if (!MATCH_KNOWN.contains(keyword)) {
                problems.add(where + ": Match criterion '" + word + "' is not one ssh knows (expected one of: "
                    + String.join(", ", MATCH_KNOWN) + ")");
                return new MatchLine(List.of(), Optional.of(word), where);
            }
            if (i + 1 >= args.size()) {
                problems.add(where + ": Match " + word + " needs an argument (ssh refuses this file too)");
                return new MatchLine(List.of(), Optional.of(word), where);
            }
            String arg = args.get(++i);
            if (MATCH_READ.contains(keyword)) {
                criteria.add(new Criterion(keyword, negated, List.of(arg.split(","))));
            } else {
                skipped.add(word + " " + arg);
            }
        }
        if (criteria.isEmpty() && skipped.isEmpty()) {
            problems.add(where + ": Match needs criteria (e.g. 'Match host gpu*' or 'Match all'; ssh refuses this file too)");
            return new MatchLine(List.of(), Optional.of(""), where);
        }
        return new MatchLine(List.copyOf(criteria), skipped.isEmpty() ? Optional.empty()
            : Optional.of(String.join(" ", skipped)), where);
    }

    private Include include(List<String> args, String where, int depth) {
        List<List<Entry>> included = new ArrayList<>();
        if (args.isEmpty()) {
            problems.add(where + ": Include needs a file name");
            return new Include(included);
        }
        if (depth + 1 > MAX_DEPTH) {
            problems.add(where + ": Include nested more than " + MAX_DEPTH + " deep (does a file include itself?);"
                + " ssh refuses this too");
            return new Include(included);
        }
        for (String arg : args) {
            Optional<Path> pattern = anchored(arg);
            if (pattern.isEmpty()) {
                problems.add(where + ": Include '" + arg + "' is not a path gpuctl can read (expected ~/…, an"
                    + " absolute path, or a path under ~/.ssh)");
                continue;
            }
            for (Path f : glob(pattern.get())) {
                Optional<String> text = files.read(f);
                text.ifPresent(t -> included.add(read(t, f, depth + 1)));
            }
        }
        return new Include(included);
    }

    /** ssh_config(5): '~/' is HOME, a relative path is under ~/.ssh. */
    private Optional<Path> anchored(String arg) {
        try {
            if (arg.startsWith("~/")) return sshDir == null ? Optional.empty() : Optional.of(sshDir.getParent().resolve(arg.substring(2)));
            if (arg.startsWith("~")) return Optional.empty();
            Path p = Path.of(arg);
            if (p.isAbsolute()) return Optional.of(p);
            return sshDir == null ? Optional.empty() : Optional.of(sshDir.resolve(p));
        } catch (InvalidPathException e) {
            return Optional.empty();
        }
    }

    /** glob(3) over the path's components ('*', '?', '[...]'), matches in lexical order; a name without wildcards is kept as is. */
    private List<Path> glob(Path pattern) {
        List<Path> current = List.of(pattern.getRoot() == null ? Path.of("") : pattern.getRoot());
        for (Path part : pattern) {
            String name = part.toString();
            List<Path> next = new ArrayList<>();
            for (Path dir : current) {
                if (!hasWildcard(name)) {
                    next.add(dir.resolve(name));
                    continue;
                }
                Pattern re = globPattern(name, false);
                files.list(dir).stream().filter(e -> !(e.startsWith(".") && !name.startsWith(".")))
                    .filter(e -> re.matcher(e).matches()).sorted().forEach(e -> next.add(dir.resolve(e)));
            }
            current = next;
        }
        return current;
    }

    static boolean hasWildcard(String s) {
        return s.indexOf('*') >= 0 || s.indexOf('?') >= 0 || s.indexOf('[') >= 0;
    }

    /** A value's words: whitespace separated, double quotes group, '#' starting a word outside quotes starts a comment. */
    static List<String> words(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        boolean inWord = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"') quoted = false;
                else cur.append(c);
                continue;
            }
            if (c == '"') {
                quoted = true;
                inWord = true;
            } else if (c == '#' && !inWord) {
                break;
            } else if (Character.isWhitespace(c)) {
                if (inWord) out.add(cur.toString());
                cur.setLength(0);
                inWord = false;
            } else {
                cur.append(c);
                inWord = true;
            }
        }
        if (inWord) out.add(cur.toString());
        return out;
    }
}
