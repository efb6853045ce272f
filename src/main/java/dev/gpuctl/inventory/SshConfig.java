package dev.gpuctl.inventory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The part of an OpenSSH client configuration ({@code ~/.ssh/config}, ssh_config(5)) that says how to reach a host:
 * HostName, User, Port, IdentityFile and ProxyJump, from {@code Host} blocks. As ssh does: a block applies when one
 * of its patterns matches the name ({@code *} and {@code ?} wildcards, {@code !} negates, names compared without
 * case), and for each keyword the first value found wins; lines before the first Host apply to every host.
 * {@code Match} blocks and {@code Include} are not read (what they would set is left to the inventory). Pure.
 */
public final class SshConfig {
    /** What the configuration says for one host; empty where it says nothing. */
    public record Host(Optional<String> hostName, Optional<String> user, Optional<Integer> port,
                       Optional<String> identityFile, Optional<String> proxyJump) {
        public static final Host NONE = new Host(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());
        public boolean isEmpty() { return equals(NONE); }
    }

    private record Block(List<String> patterns, boolean matchBlock, Map<String, String> options, int line) {}

    private final List<Block> blocks;
    /** Problems found while reading, as "LINE: what" (a bad Port, say). */
    private final List<String> problems;

    private SshConfig(List<Block> blocks, List<String> problems) {
        this.blocks = blocks;
        this.problems = problems;
    }

    public static final SshConfig EMPTY = new SshConfig(List.of(), List.of());

    public List<String> problems() { return problems; }

    static final List<String> KEYWORDS = List.of("hostname", "user", "port", "identityfile", "proxyjump");

    public static SshConfig parse(String text) {
        List<Block> blocks = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        Block current = new Block(List.of("*"), false, new LinkedHashMap<>(), 0);
        blocks.add(current);
        int n = 0;
        for (String raw : text.split("\n", -1)) {
            n++;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) continue;
            String[] kv = line.split("(\\s*=\\s*|\\s+)", 2);
            String key = kv[0].toLowerCase(Locale.ROOT);
            String value = kv.length > 1 ? unquote(kv[1].strip()) : "";
            if (key.equals("host")) {
                current = new Block(List.of(value.split("\\s+")), false, new LinkedHashMap<>(), n);
                blocks.add(current);
            } else if (key.equals("match")) {
                current = new Block(List.of(), true, new LinkedHashMap<>(), n);
                blocks.add(current);
            } else if (KEYWORDS.contains(key) && !current.options().containsKey(key)) {
                if (key.equals("port") && !value.matches("[0-9]{1,5}") || key.equals("port") && (Integer.parseInt(value) < 1 || Integer.parseInt(value) > 65535)) {
                    problems.add(n + ": Port '" + value + "' is not a port number (expected 1 to 65535)");
                    continue;
                }
                current.options().put(key, value);
            }
        }
        return new SshConfig(blocks, problems);
    }

    private static String unquote(String v) {
        return v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"") ? v.substring(1, v.length() - 1) : v;
    }

    /** What applies to {@code name} (the inventory's address), first value of each keyword winning. */
    public Host lookup(String name) {
        Map<String, String> found = new LinkedHashMap<>();
        for (Block b : blocks) {
            if (b.matchBlock() || !matches(b.patterns(), name)) continue;
            b.options().forEach(found::putIfAbsent);
        }
        String hostName = found.get("hostname");
        return new Host(Optional.ofNullable(hostName).map(h -> h.replace("%h", name).replace("%%", "%")),
            Optional.ofNullable(found.get("user")), Optional.ofNullable(found.get("port")).map(Integer::parseInt),
            Optional.ofNullable(found.get("identityfile")),
            Optional.ofNullable(found.get("proxyjump")).filter(j -> !j.equalsIgnoreCase("none")));
    }

    /** ssh_config's pattern list: a negated pattern that matches excludes the host, else any positive match. */
    static boolean matches(List<String> patterns, String name) {
        boolean any = false;
        for (String p : patterns) {
            boolean negated = p.startsWith("!");
            String glob = negated ? p.substring(1) : p;
            if (glob(glob).matcher(name.toLowerCase(Locale.ROOT)).matches()) {
                if (negated) return false;
                any = true;
            }
        }
        return any;
    }

    private static Pattern glob(String glob) {
        StringBuilder re = new StringBuilder();
        for (char c : glob.toLowerCase(Locale.ROOT).toCharArray()) {
            switch (c) {
                case '*' -> re.append(".*");
                case '?' -> re.append('.');
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
