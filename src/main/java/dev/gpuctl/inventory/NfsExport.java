package dev.gpuctl.inventory;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One export of storage.nfs. {@code rootSquash}: whether root on a client is mapped to nobody on this export; false
 * ({@code no_root_squash}) lets root on every node act as root on it.
 */
public record NfsExport(String path, boolean readOnly, boolean rootSquash) {
    /** The characters an export path or a mount point may use besides '/': nothing any NFS, shell or YAML layer decodes. */
    public static final String SAFE_CHARACTERS = "letters, digits, '.', '_', '-', '+' and '@'";
    private static final Pattern SAFE_PART = Pattern.compile("[A-Za-z0-9._+@-]+");

    /**
     * The default: root squashed on every export. The guide's {@code no_root_squash} on its read-write export lets any
     * pod running as root on any node plant root-owned setuid files in the server's export; it is only ever asked for
     * per export ({@code rootSquash: false}).
     */
    public NfsExport(String path, boolean readOnly) { this(path, readOnly, true); }

    /**
     * The options in /etc/exports for this export: ro or rw, sync, no_subtree_check, and root_squash (written out,
     * though it is exportfs's default, so that the file says it) or no_root_squash when asked.
     */
    public String options() {
        return (readOnly ? "ro" : "rw") + ",sync,no_subtree_check," + (rootSquash ? "root_squash" : "no_root_squash");
    }

    /**
     * Why {@code path} is not a usable export path or mount point, or empty when it is: absolute, normalised (no
     * '.' or '..' part, no '//', no trailing '/', not / itself), and made of {@link #SAFE_CHARACTERS} only.
     */
    public static Optional<String> pathProblem(String path) {
        if (!path.startsWith("/")) return Optional.of("it is not an absolute path");
        if (path.equals("/")) return Optional.of("it is / itself");
        if (path.endsWith("/")) return Optional.of("it ends with '/'");
        String[] parts = path.substring(1).split("/", -1);
        for (String part : parts) {
            if (part.isEmpty()) return Optional.of("it has an empty part ('//')");
            if (part.equals(".") || part.equals("..")) return Optional.of("it has a '" + part + "' part");
        }
        for (int i = 0; i < path.length(); ) {
            int c = path.codePointAt(i);
            if (c != '/' && !SAFE_PART.matcher(Character.toString(c)).matches()) {
                return Optional.of("it contains " + describe(c));
            }
            i += Character.charCount(c);
        }
        return Optional.empty();
    }

    private static String describe(int c) {
        if (c == ' ') return "a space";
        if (c == '\n') return "a newline";
        if (c == '\t') return "a tab";
        if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return String.format("a control character (U+%04X)", c);
        if (c == '\'') return "a single quote";
        return "'" + Character.toString(c) + "'";
    }
}
