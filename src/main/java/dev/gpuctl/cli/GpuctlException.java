package dev.gpuctl.cli;

import dev.gpuctl.remote.RemoteException;

/**
 * The one exception type that ends a command with a message for a person and a named exit code.
 * Main prints the message (no stack trace unless --verbose) and exits with the code.
 */
public class GpuctlException extends RuntimeException {
    private final ExitCode exitCode;

    public GpuctlException(ExitCode exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    public GpuctlException(ExitCode exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    public ExitCode exitCode() { return exitCode; }

    /** A host that failed a command's one connection: exit 6 when no connection could be made at all, else 1. */
    static GpuctlException of(RemoteException e) {
        return new GpuctlException(e.kind() == RemoteException.Kind.UNREACHABLE ? ExitCode.UNREACHABLE : ExitCode.STEP_FAILED,
            e.getMessage(), e);
    }
}
