package dev.gpuctl.remote;

import dev.gpuctl.text.ShellWords;
import java.util.List;
import java.util.regex.Pattern;

/** The shell text gpuctl sends to hosts. Pure functions. */
final class Shell {
    private Shell() {}

    private static final Pattern MODE = Pattern.compile("0?[0-7]{3}|[0-7]{4}");
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]*\\$?");

    /** The command line sent over SSH: the user's login shell runs it; it runs {@code command} as root with sh. */
    static String sshCommand(String command, boolean root) {
        return (root ? "sh -c " : "sudo -n sh -c ") + ShellWords.quote(command);
    }

    /** The argv that runs {@code command} on this machine as root with sh. */
    static List<String> localArgv(String command, boolean root) {
        return root ? List.of("sh", "-c", command) : List.of("sudo", "-n", "sh", "-c", command);
    }

    /**
     * Installs {@code tmp} as {@code path} with {@code mode} and {@code owner} (run as root): a sibling temp
     * file, then a rename over the target; the temp files are removed whatever happens. A symbolic link or a
     * directory at {@code path} is refused (the caller resolves links and writes their target), never replaced.
     */
    static String installCommand(String tmp, String path, String mode, String owner) {
        if (!path.startsWith("/") || path.endsWith("/")) {
            throw new IllegalArgumentException("not an absolute file path: '" + path + "'");
        }
        if (!MODE.matcher(mode).matches()) {
            throw new IllegalArgumentException("not an octal file mode: '" + mode + "' (expected e.g. 0644)");
        }
        String[] og = owner.split(":", -1);
        if (og.length > 2 || !NAME.matcher(og[0]).matches() || (og.length == 2 && !NAME.matcher(og[1]).matches())) {
            throw new IllegalArgumentException("not an owner: '" + owner + "' (expected user or user:group)");
        }
        String side = ShellWords.quote(path + ".gpuctl-tmp");
        String ownerFlags = "-o " + og[0] + (og.length == 2 ? " -g " + og[1] : "");
        String target = ShellWords.quote(path);
        return "if [ -L " + target + " ] || [ -d " + target + " ]; then echo " + ShellWords.quote(path + " is a symbolic link or a directory: not replacing it")
            + " >&2; rm -f -- " + ShellWords.quote(tmp) + "; exit 1; fi; "
            + "install -m " + mode + " " + ownerFlags + " -- " + ShellWords.quote(tmp) + " " + side
            + " && mv -fT -- " + side + " " + target + "; rc=$?; rm -f -- " + ShellWords.quote(tmp) + " " + side + "; exit $rc";
    }

    static String catCommand(String path) {
        return "cat -- " + ShellWords.quote(path);
    }
}
