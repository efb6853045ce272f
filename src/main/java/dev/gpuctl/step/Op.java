package dev.gpuctl.step;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * One change an apply makes on a host. The runner executes ops; the plan renders the same ops.
 * Commands and gpuctl's own file templates may hold {@code {{fact}}} references (see {@link Facts}); content marked
 * literal (user data) never does.
 */
public sealed interface Op {
    /** A short description for people. */
    String what();

    /**
     * A shell command run as root.
     *
     * @param unless        when set, a read-only command run first: exit 0 means "already right", skip
     * @param guard         when set, a probe asked first and judged as the step's check judges it: right means "already
     *                      right", skip. The condition is then written once, for the check and for the op
     * @param onlyIfChanged when non-empty, run only if one of these paths was changed earlier in this step
     * @param changes       paths this command changes (so later onlyIfChanged ops see them)
     * @param journal       when set, shell text run first in the same command, that records in the host's change journal
     *                      what the command is about to change (and how it was); the command does not run when it fails
     */
    record Run(String what, String command, String unless, Probe guard, List<String> onlyIfChanged, List<String> changes, Journal journal)
        implements Op {
        public Run {
            onlyIfChanged = List.copyOf(onlyIfChanged);
            changes = List.copyOf(changes);
        }
        public static Run of(String what, String command) { return new Run(what, command, null, null, List.of(), List.of(), null); }
        public Run unless(String check) { return new Run(what, command, check, null, onlyIfChanged, changes, journal); }
        /** Skipped when {@code check} (a probe of the step's check) is right. */
        public Run unlessRight(Probe check) { return new Run(what, command, null, check, onlyIfChanged, changes, journal); }
        public Run onlyIfChanged(String... paths) { return new Run(what, command, unless, guard, List.of(paths), changes, journal); }
        public Run changing(String... paths) { return new Run(what, command, unless, guard, onlyIfChanged, List.of(paths), journal); }
        public Run journalling(Journal j) { return new Run(what, command, unless, guard, onlyIfChanged, changes, j); }

        /** What runs on the host: the journal's lines first (a failure there stops it), then the command. */
        public String hostCommand() {
            return journal == null ? command : "{ " + journal.shell() + "\n} || exit 1; " + command;
        }
    }

    /**
     * A wait the engine runs (never a shell loop): {@code until} is asked every 2 s until it is right, for up to its
     * {@link Probe#waitUpTo}; the wait is announced ({@link Step#whileWaiting}) and logged, and a stop request (Ctrl-C)
     * ends it before its next ask. Still wrong at the end, {@code orElse} (when set) runs on the host to undo what the
     * wait was for, and the op fails with the probe's problem. Changes nothing itself.
     *
     * @param orElse shell run when the wait gives up (a manifest put back, say); null: none
     */
    record Await(String what, Probe until, String orElse) implements Op {
        public Await {
            if (until.waitUpTo().isZero()) throw new IllegalArgumentException("an Await needs a probe that waits: " + until.what());
        }

        public static Await of(String what, Probe until) { return new Await(what, until, null); }

        public Await orElse(String undo) { return new Await(what, until, undo); }
    }

    /**
     * What a {@link Run} records in the host's change journal before it changes anything: for people ({@code what},
     * shown by the plan) and as shell.
     */
    record Journal(String what, String shell) {}

    /**
     * Makes a file hold exactly {@code content}: skipped when it already does; else the old file is backed up
     * once ({@code PATH.gpuctl-orig}) and the new one written to a temp file beside it and renamed into place.
     * A link is followed: the file it points to is written and the link kept. An existing file keeps its owner
     * and is never made group- or world-writable by the write. A secret file's content never appears in logs or
     * output. With {@code unless}, a read-only command run first: exit 0 means the file is not needed now, and it is
     * not written.
     *
     * @param literal the content is user data (a manifest from the inventory, say), written byte for byte: no
     *                {@code {{fact}}} in it is filled in. Otherwise it is gpuctl's own template ({@link Facts}).
     * @param objects for a manifest: its objects, one KIND/NAMESPACE/NAME per line, shown by the plan and the host's
     *                log with the content's sha256 instead of its text; null for any other file
     */
    record WriteFile(String what, String path, String content, String mode, String owner, boolean secret, String unless,
                     boolean literal, String objects)
        implements Op {
        /** A file whose content is gpuctl's own template: {@code {{fact}}} references are filled in. */
        public static WriteFile of(String what, String path, String content, String mode) {
            return new WriteFile(what, path, content, mode, "root:root", false, null, false, null);
        }
        /** A file whose content is user data, written byte for byte (never template-expanded). */
        public static WriteFile literal(String what, String path, String content, String mode) {
            return new WriteFile(what, path, content, mode, "root:root", false, null, true, null);
        }
        /** A manifest from the inventory, written byte for byte; shown as its objects and sha256, never as its text. */
        public static WriteFile manifest(String what, String path, String content, String mode, List<String> objects) {
            return new WriteFile(what, path, content, mode, "root:root", false, null, true, String.join("\n", objects));
        }
        public WriteFile asSecret() { return new WriteFile(what, path, content, mode, owner, true, unless, literal, objects); }
        public WriteFile unless(String check) { return new WriteFile(what, path, content, mode, owner, secret, check, literal, objects); }

        /** The sha256 of the content, as sha256sum prints it. */
        public String sha256() {
            try {
                return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(content.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /**
     * Reads a file (empty when absent), transforms it with a pure function, and writes it back like
     * {@link WriteFile} when the result differs. A link is followed (the file it points to is edited, the link
     * kept); the file's mode and owner are kept when it exists. Neither the content read nor the result is ever
     * template-expanded.
     *
     * @param rule  what the edit does, for people (the plan shows it, and its result on an empty file)
     */
    record EditFile(String what, String path, String rule, UnaryOperator<String> edit, String mode)
        implements Op {}

    /**
     * Copies a file from the host to the admin's machine (mode 0600), e.g. admin.conf; streamed, any size.
     * @param newFile the local file is a new one anywhere the user named (a backup): created exclusively, never
     *                replacing a file or following a link, in a directory others cannot write (or a sticky one), whose
     *                mode is left as it is. Otherwise it lives in gpuctl's state directory (.gpuctl/, 0700).
     */
    record Fetch(String what, String remotePath, Path localPath, boolean newFile) implements Op {
        public Fetch(String what, String remotePath, Path localPath) { this(what, remotePath, localPath, false); }
    }

    /**
     * The master's admin.conf read and rebuilt into this machine's kubeconfig (0600), never copied: only the fields
     * gpuctl takes, the endpoint and the CA checked, a kubeconfig merged before refreshed (the engine's
     * LaptopKubeconfigs).
     *
     * @param server          the cluster's endpoint, {@code https://IP:6443} (a {{fact}} may fill in the IP)
     * @param newClusterFact  a fact that is "new" when this run made the control plane (a new CA is then a new
     *                        cluster: the old copy archived); null: a CA other than the recorded one is refused
     */
    record FetchKubeconfig(String what, String remotePath, Path localPath, String clusterName, String server,
                           String newClusterFact) implements Op {
        /** What the plan says about it. */
        public static final String RULE = "rebuilt, never copied: only the https server (the cluster's endpoint),"
            + " certificate-authority-data (the CA recorded at bootstrap), client-certificate-data and client-key-data are taken;"
            + " anything else (exec, auth-provider, file paths, tokenFile, proxy-url, insecure-skip-tls-verify) is refused;"
            + " a kubeconfig merged by gpuctl kubeconfig --merge is refreshed";
    }

    /**
     * Copies a file from the admin's machine to the host (owner root:root, {@code mode}), streamed: any size, never held
     * in memory (a backup archive to restore). With {@code unless}, a read-only command run first: exit 0 means the file
     * is not needed now, and it is not sent.
     */
    record Send(String what, Path localPath, String remotePath, String mode, String unless) implements Op {
        public Send(String what, Path localPath, String remotePath, String mode) { this(what, localPath, remotePath, mode, null); }
        public Send unless(String check) { return new Send(what, localPath, remotePath, mode, check); }
    }

    /**
     * Runs a command and keeps facts parsed from its stdout for later ops ({@code {{key}}}).
     * With {@code secret}, the values are masked everywhere they would be shown.
     */
    record Capture(String what, String command, Function<String, Map<String, String>> parse, boolean secret)
        implements Op {}
}
