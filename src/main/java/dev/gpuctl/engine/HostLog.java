package dev.gpuctl.engine;

import dev.gpuctl.text.Secrets;
import dev.gpuctl.text.Terminal;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;

/**
 * One host's log for one run: every command, its exit status and output, with secrets masked (the run's secret facts,
 * join tokens, and whatever {@link Secrets} hides: private keys, client-key-data, registry auths, passwords). Mode 0600.
 */
final class HostLog implements AutoCloseable {
    private final Path file;
    private final Writer out;
    private final Facts facts;
    /** For a part (see {@link #part()}): the log it goes into when closed; null for the log file itself. */
    private final HostLog whole;

    HostLog(Path dir, String host, Facts facts) {
        this.whole = null;
        this.facts = facts;
        this.file = dir.resolve(host + ".log");
        try {
            StateDir.ensurePrivateDir(dir);
            Files.deleteIfExists(file);
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            out = Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the log " + file, e);
        }
    }

    private HostLog(HostLog whole) {
        this.whole = whole;
        this.facts = whole.facts;
        this.file = whole.file;
        this.out = new StringWriter();
    }

    /**
     * A part of this log, written into it in one piece when closed: the entries of commands that run on the host
     * alongside others stay together, each with the time it was made.
     */
    HostLog part() { return new HostLog(this); }

    private synchronized void append(String entries) {
        try {
            out.write(entries);
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Path file() { return file; }

    synchronized void line(String text) {
        try {
            out.write(Instant.now() + " " + Terminal.escape(facts.mask(Secrets.redact(text))) + "\n");
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The entry that opens one batch of steps' probes: "-- step a: check (asked together with steps b, c)". */
    void stepsAsked(List<String> stepIds, String kind) {
        line("-- step " + stepIds.get(0) + ": " + kind + (stepIds.size() > 1
            ? " (asked together with steps " + String.join(", ", stepIds.subList(1, stepIds.size())) + ")" : ""));
    }

    /** One command's entry; {@code when} says how it ran ("in 12 ms", "(asked in the batch above)"). */
    void command(String command, ExecResult r, String when) {
        StringBuilder sb = new StringBuilder("$ ").append(command).append("\n  exit ").append(r.exit()).append(" ").append(when);
        if (!r.stdout().isEmpty()) sb.append("\n  stdout:\n").append(indent(r.stdout()));
        if (!r.stderr().isEmpty()) sb.append("\n  stderr:\n").append(indent(r.stderr()));
        line(sb.toString());
    }

    private static String indent(String s) {
        return "    " + s.stripTrailing().replace("\n", "\n    ");
    }

    @Override public synchronized void close() {
        if (whole != null) {
            whole.append(out.toString());
            return;
        }
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
