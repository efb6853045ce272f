package dev.gpuctl.e2e;

import dev.gpuctl.cli.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;

/** Runs the real CLI in-process with captured output, as a person would run it from a shell. */
final class Gpuctl {
    private Gpuctl() {}

    record Run(int code, String out, String err) {
        @Override public String toString() { return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err; }

        /** Progress lines ("h1  swap  changed (1.0s)") whose outcome is the given word. */
        long count(String outcome) {
            return err.lines().filter(l -> l.matches("\\S+\\s+\\S+\\s+" + outcome + " \\(.*")).count();
        }

        /** "host step" of every failed check in the stdout of {@code verify --json}. */
        java.util.Set<String> failedChecks() throws java.io.IOException {
            var failed = new java.util.TreeSet<String>();
            for (var h : new com.fasterxml.jackson.databind.ObjectMapper().readTree(out).path("hosts")) {
                for (var c : h.path("checks")) {
                    if (!c.path("ok").asBoolean()) failed.add(h.path("name").asText() + " " + c.path("step").asText());
                }
            }
            return failed;
        }
    }

    static Run run(String... args) { return run(Map.of(), args); }

    /** With these environment variables (HOME, say) set for gpuctl. */
    static Run run(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(args, new PrintWriter(out), new PrintWriter(err), env);
        return new Run(code, out.toString(), err.toString());
    }
}
