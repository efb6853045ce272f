package dev.gpuctl.cli;

/** The tool's exit codes, in one place. Documented in README.md ("Exit codes"). */
public enum ExitCode {
    OK(0), STEP_FAILED(1), USAGE(2), PREFLIGHT_REFUSED(3), VERIFY_FAILED(4), INTERRUPTED(130);

    private final int code;
    ExitCode(int code) { this.code = code; }
    public int code() { return code; }
}
