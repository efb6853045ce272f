package dev.gpuctl.text;

/**
 * A host's file or command output that gpuctl cannot read or edit safely. The message is for a
 * person: it names the file or command, what is wrong (with line and column where known) and what
 * to do about it. Unchecked: callers in steps turn it into a failed check.
 */
public class HostConfException extends RuntimeException {

    public HostConfException(String message) {
        super(message);
    }

    public HostConfException(String message, Throwable cause) {
        super(message, cause);
    }
}
