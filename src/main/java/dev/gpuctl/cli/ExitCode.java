package dev.gpuctl.cli;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The tool's exit codes, in one place: what each means (README.md "Exit codes" is this table), and which of them each
 * command can end with, which its --help lists last ({@link #helpList}).
 */
public enum ExitCode {
    OK(0, "ok"),
    STEP_FAILED(1, "a host failed: a step or a command on it failed (the master's kubectl included), its connection was"
        + " lost, or its host key or login was refused outside a preflight"),
    USAGE(2, "usage or input error, nothing was changed: a bad option or value, an inventory or job spec problem"
        + " (FILE:LINE:COLUMN: a CIDR overlap found offline, a missing identity file included), `connection: local` without"
        + " --allow-local, an unsafe .gpuctl directory (a link, another user's), or no cluster yet (no kubeconfig on the master,"
        + " no cached join command), no such job"),
    PREFLIGHT_REFUSED(3, "preflight refused, nothing was changed: e.g. a host's own networks overlap the cluster's, a host key"
        + " or login was refused, another run holds the lock, the lock's place on the master is unsafe, or a restore would"
        + " overwrite a healthy cluster"),
    VERIFY_FAILED(4, "verify found a problem"),
    VERIFY_WARNED(5, "verify found no problem but warned: a certificate expires within 30 days (`gpuctl certs renew`)"),
    UNREACHABLE(6, "a host could not be reached (connection refused or timed out, address not resolved): nothing was done"
        + " on it; the message names it and its log file holds the connection error. Other hosts' problems are listed too;"
        + " this code wins over 1, 3 and 4"),
    INTERRUPTED(130, "interrupted (Ctrl-C); a re-run resumes");

    private final int code;
    private final String meaning;

    ExitCode(int code, String meaning) {
        this.code = code;
        this.meaning = meaning;
    }

    public int code() { return code; }

    public String meaning() { return meaning; }

    /** The codes each command can end with, by its qualified name; a command not named here can end with any. */
    static final Map<String, List<ExitCode>> BY_COMMAND = Map.ofEntries(
        Map.entry("gpuctl plan", List.of(OK, USAGE)),
        Map.entry("gpuctl bootstrap", List.of(OK, STEP_FAILED, USAGE, PREFLIGHT_REFUSED, UNREACHABLE, INTERRUPTED)),
        Map.entry("gpuctl join-token", List.of(OK, STEP_FAILED, USAGE, UNREACHABLE)),
        Map.entry("gpuctl verify", List.of(OK, STEP_FAILED, USAGE, VERIFY_FAILED, VERIFY_WARNED, UNREACHABLE, INTERRUPTED)),
        Map.entry("gpuctl certs", List.of(OK, STEP_FAILED, USAGE, PREFLIGHT_REFUSED, VERIFY_FAILED, VERIFY_WARNED, UNREACHABLE, INTERRUPTED)),
        Map.entry("gpuctl certs check", List.of(OK, STEP_FAILED, USAGE, VERIFY_FAILED, VERIFY_WARNED, UNREACHABLE, INTERRUPTED)),
        Map.entry("gpuctl certs renew", List.of(OK, STEP_FAILED, USAGE, PREFLIGHT_REFUSED, VERIFY_FAILED, VERIFY_WARNED, UNREACHABLE, INTERRUPTED)),
        Map.entry("gpuctl upgrade", List.of(OK, STEP_FAILED, USAGE, PREFLIGHT_REFUSED, UNREACHABLE, INTERRUPTED)),
        Map.entry("gpuctl gpus", List.of(OK, STEP_FAILED, USAGE, UNREACHABLE)),
        Map.entry("gpuctl job", List.of(OK, STEP_FAILED, USAGE, UNREACHABLE)),
        Map.entry("gpuctl queue", List.of(OK, STEP_FAILED, USAGE, UNREACHABLE)),
        Map.entry("gpuctl job render", List.of(OK, USAGE)),
        Map.entry("gpuctl job submit", List.of(OK, STEP_FAILED, USAGE, UNREACHABLE)),
        Map.entry("gpuctl kubeconfig", List.of(OK, STEP_FAILED, USAGE, UNREACHABLE)),
        Map.entry("gpuctl backup", List.of(OK, STEP_FAILED, USAGE, PREFLIGHT_REFUSED, UNREACHABLE, INTERRUPTED)),
        Map.entry("gpuctl restore", List.of(OK, STEP_FAILED, USAGE, PREFLIGHT_REFUSED, UNREACHABLE, INTERRUPTED)),
        Map.entry("gpuctl completion", List.of(OK, USAGE)),
        Map.entry("gpuctl drain", List.of(OK, STEP_FAILED, USAGE, PREFLIGHT_REFUSED, UNREACHABLE, INTERRUPTED)),
        Map.entry("gpuctl uncordon", List.of(OK, STEP_FAILED, USAGE, PREFLIGHT_REFUSED, UNREACHABLE, INTERRUPTED)),
        Map.entry("gpuctl repair", List.of(OK, STEP_FAILED, USAGE, PREFLIGHT_REFUSED, UNREACHABLE, INTERRUPTED)),
        Map.entry("gpuctl remove-node", List.of(OK, STEP_FAILED, USAGE, PREFLIGHT_REFUSED, UNREACHABLE, INTERRUPTED)),
        Map.entry("gpuctl reset", List.of(OK, STEP_FAILED, USAGE, PREFLIGHT_REFUSED, UNREACHABLE, INTERRUPTED)),
        Map.entry("gpuctl job list", List.of(OK, STEP_FAILED, USAGE, UNREACHABLE)),
        Map.entry("gpuctl job logs", List.of(OK, STEP_FAILED, USAGE, UNREACHABLE)),
        Map.entry("gpuctl job delete", List.of(OK, STEP_FAILED, USAGE, UNREACHABLE)));

    /** The codes {@code qualifiedName} can end with. */
    static List<ExitCode> of(String qualifiedName) {
        return BY_COMMAND.getOrDefault(qualifiedName, List.of(values()));
    }

    /** picocli's exit code list for a command's --help: "CODE" to meaning, right-aligned codes. */
    static Map<String, String> helpList(String qualifiedName) {
        Map<String, String> list = new LinkedHashMap<>();
        for (ExitCode c : of(qualifiedName)) list.put(String.format("%3d", c.code), c.meaning);
        return list;
    }

    /** The README's "Exit codes" table, from this enum. */
    static String markdownTable() {
        StringBuilder sb = new StringBuilder("| code | meaning |\n|---|---|\n");
        for (ExitCode c : values()) sb.append("| ").append(c.code).append(" | ").append(c.meaning).append(" |\n");
        return sb.toString();
    }
}
