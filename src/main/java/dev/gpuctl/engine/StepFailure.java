package dev.gpuctl.engine;

import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.step.FailureKind;

/**
 * A step failed on a host: everything a person needs to act on it. Secrets are already masked.
 *
 * @param command   the command that failed (masked), or empty when a verify probe failed
 * @param exit      its exit status, or -1
 * @param detail    stderr tail, or what verify found wrong
 * @param unreachable no connection to the host could be made (refused, timed out, address not resolved): the command's
 *                  exit code says so on its own
 * @param kind      what the failure means ({@link FailureKind#GPU_JOBS_RUNNING}: a drain found GPU jobs it must not evict)
 */
public record StepFailure(String host, String step, String what, String command, int exit, String detail, String log,
                          boolean unreachable, FailureKind kind) {
    public StepFailure(String host, String step, String what, String command, int exit, String detail, String log,
                       boolean unreachable) {
        this(host, step, what, command, exit, detail, log, unreachable, FailureKind.BROKEN);
    }

    public StepFailure(String host, String step, String what, String command, int exit, String detail, String log) {
        this(host, step, what, command, exit, detail, log, false);
    }

    /** The step failed because the host did not answer ({@code e}); {@code detail}: its message, masked. */
    static StepFailure unreachable(String host, String step, RemoteException e, String detail, String log) {
        return new StepFailure(host, step, unreachableWhat(e), "", -1, detail, log, noConnection(e));
    }

    /** No connection to the host could be made at all (not a lost one, not a refused key or login). */
    static boolean noConnection(RemoteException e) {
        return e.kind() == RemoteException.Kind.UNREACHABLE;
    }

    static String unreachableWhat(RemoteException e) {
        return switch (e.kind()) {
            case TIMEOUT -> "a command timed out";
            case CONNECTION_LOST -> "the connection was lost";
            case HOST_KEY_UNKNOWN, HOST_KEY_CHANGED -> "its host key was refused";
            case AUTH_FAILED -> "the login was refused";
            case SUDO_NEEDS_PASSWORD -> "sudo asks for a password";
            default -> "cannot reach the host";
        };
    }

    public String describe() {
        StringBuilder sb = new StringBuilder();
        sb.append(host).append(": step ").append(step).append(" failed: ").append(what).append('\n');
        if (!command.isEmpty()) sb.append("  command: ").append(command).append('\n');
        if (exit >= 0) sb.append("  exit status: ").append(exit).append('\n');
        if (!detail.isBlank()) {
            for (String line : detail.strip().split("\n")) sb.append("  | ").append(line).append('\n');
        }
        if (!log.isEmpty()) sb.append("  log: ").append(log).append('\n');
        return sb.toString();
    }
}
