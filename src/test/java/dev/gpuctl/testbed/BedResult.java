package dev.gpuctl.testbed;

/** What a command on a test-bed host (or the bed script itself) returned; gpuctl's own is {@link dev.gpuctl.remote.ExecResult}. */
public record BedResult(int exit, String out, String err) {
    public boolean ok() {
        return exit == 0;
    }

    /** out, trimmed: the usual way to read a one-line answer. */
    public String line() {
        return out.strip();
    }

    @Override
    public String toString() {
        return "exit " + exit + "\nstdout:\n" + out + "\nstderr:\n" + err;
    }
}
