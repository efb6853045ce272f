package dev.gpuctl.workload;

import dev.gpuctl.remote.ExecResult;

/**
 * A command on a host ran and failed (kubectl on the master): the message names host, command, exit and stderr.
 * {@link #refused()}: the input was refused before anything changed (a job that can never run, a name taken).
 */
public final class WorkloadException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final boolean refused;

    public WorkloadException(String message) { this(message, false); }

    private WorkloadException(String message, boolean refused) {
        super(message);
        this.refused = refused;
    }

    static WorkloadException refused(String message) { return new WorkloadException(message, true); }

    public boolean refused() { return refused; }

    /** "h0: `kubectl ... get nodes -o json` failed (exit 1): <stderr tail>. <next>". */
    static WorkloadException failed(String host, String command, ExecResult r, String next) {
        return new WorkloadException(host + ": `" + command + "` failed (exit " + r.exit() + "):\n  "
            + r.tail(5).replace("\n", "\n  ") + "\n" + next);
    }
}
