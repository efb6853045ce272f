package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.text.Secrets;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Sh;
import java.net.URI;
import java.util.Optional;

/**
 * Shell text for what a command itself downloads or writes on a host (where the content is made on the host, so
 * that it cannot be an {@link Op.WriteFile}): downloads go to a fresh private directory ({@code mktemp -d}, removed
 * on every way out) and are checked against a sha256 when one is known; a file is written to a temp file beside
 * it and renamed over it, after a one-time backup. No pipelines: {@code sh} may lack {@code pipefail}, so every
 * producer writes a file whose exit status the command checks. Pure functions.
 */
public final class HostWrite {
    private HostWrite() {}

    /**
     * curl, through the proxy when the inventory sets one: {@link ProxyStep} writes its variables to a file that
     * this sources first, exporting them (in the command's own shell only; never on a command line).
     */
    static final String CURL = "{ [ ! -r " + ProxyStep.ENV_FILE + " ] || { set -a && . " + ProxyStep.ENV_FILE + " && set +a; }; } && curl";

    /** Opens a command that works in {@code $d}, a fresh directory only root can read, removed when it exits. */
    static final String TEMP_DIR = "d=$(mktemp -d) || exit 1; trap 'rm -rf \"$d\"' EXIT; ";

    /**
     * Fails the command (exit 1) unless {@code file}'s sha256 is {@code expected}; the message names what was
     * fetched ({@code what}, credentials removed) and both hashes.
     */
    public static String sha256Check(String file, String expected, String what) {
        if (!expected.matches("[0-9a-f]{64}")) throw new IllegalArgumentException("not a sha256: " + expected);
        return "sum=$(sha256sum -- \"" + file + "\") || exit 1; got=${sum%% *}; "
            + "if [ \"$got\" != " + expected + " ]; then printf 'sha256 mismatch for %s: expected %s, got %s\\n' "
            + ShellWords.quote(withoutCredentials(what)) + " " + expected + " \"$got\" >&2; exit 1; fi; ";
    }

    /** Why a URL must not be fetched without a checksum (plain http, credentials in it); empty when neither. */
    public static Optional<String> needsChecksum(String url) {
        URI u = URI.create(url);
        if (u.getRawUserInfo() != null) return Optional.of("a URL with credentials in it (user:password@)");
        if ("http".equalsIgnoreCase(u.getScheme())) return Optional.of("a plain http:// URL");
        return Optional.empty();
    }

    static String withoutCredentials(String url) {
        return Secrets.maskUrl(url);
    }

    /**
     * Downloads {@code url}, which holds no credentials ({@link #downloadWithConfig} takes those), into {@code $d/NAME}
     * (inside a {@link #TEMP_DIR} command), checked against {@code sha256} when given.
     */
    static String download(String url, String name, Optional<String> sha256) {
        if (URI.create(url).getRawUserInfo() != null) {
            throw new IllegalArgumentException("a URL with credentials goes through downloadWithConfig, never on curl's command line");
        }
        String file = "$d/" + name;
        return CURL + " -fsSL -o \"" + file + "\" " + ShellWords.quote(url) + " || exit 1; "
            + sha256.map(h -> sha256Check(file, h, url)).orElse("");
    }

    /**
     * Downloads {@code url}, whose credentials ({@code user:password@}) must stay off every command line (any user on
     * the host sees argv in {@code ps}), into {@code $d/NAME} (inside a {@link #TEMP_DIR} command): {@code config} is a
     * curl configuration file ({@link #curlConfig}, 0600, uploaded before) that is first moved into {@code $d}, so that
     * the command's EXIT trap removes it whatever happens, and curl reads the URL from it ({@code -K}).
     */
    static String downloadWithConfig(String config, String url, String name, Optional<String> sha256) {
        String file = "$d/" + name;
        return "mv -fT -- " + ShellWords.quote(config) + " \"$d/curl.conf\" || exit 1; "
            + CURL + " -fsSL -o \"" + file + "\" -K \"$d/curl.conf\" || exit 1; "
            + sha256.map(h -> sha256Check(file, h, url)).orElse("");
    }

    /**
     * A curl configuration file that names {@code url} (credentials and all): written 0600 by root and read with
     * {@code curl -K}. In its double quotes, '\\' and '"' are escaped; a URL holds no newline.
     */
    public static String curlConfig(String url) {
        if (url.indexOf('\n') >= 0 || url.indexOf('\r') >= 0) throw new IllegalArgumentException("a URL cannot hold a line break");
        return "# written by gpuctl for one download, removed after it: the URL holds credentials\n"
            + "url = \"" + url.replace("\\", "\\\\").replace("\"", "\\\"") + "\"\n";
    }

    /**
     * Installs {@code source} as {@code target} (mode, root-owned) through a temp file beside it and a rename. The op
     * journals the target first ({@link Sh#journalWrite}), which backs it up once.
     */
    static String install(String source, String target, String mode) {
        String side = ShellWords.quote(target + ".gpuctl-tmp");
        return "install -m " + mode + " -o root -g root -- " + source + " " + side + " && mv -fT -- " + side + " " + ShellWords.quote(target);
    }

    /**
     * Replaces {@code target} with what {@code producer} prints to stdout: the old file is backed up once
     * ({@code TARGET.gpuctl-orig}, never overwritten), the output goes to a temp file beside the target, and is
     * renamed over it only when the producer succeeded. The op journals the target first ({@link Sh#journalWrite}).
     */
    static String replaceWithOutput(String target, String producer, String mode) {
        String t = ShellWords.quote(target);
        String orig = ShellWords.quote(target + ".gpuctl-orig");
        String side = ShellWords.quote(target + ".gpuctl-tmp");
        return "if [ -e " + t + " ] && [ ! -e " + orig + " ] && [ ! -L " + orig + " ]; then cp -p -- " + t + " " + orig
            + " || exit 1; fi; rm -f -- " + side + "; { " + producer + "; } > " + side + " && chmod " + mode + " " + side
            + " && mv -fT -- " + side + " " + t + "; rc=$?; rm -f -- " + side + "; exit $rc";
    }
}
