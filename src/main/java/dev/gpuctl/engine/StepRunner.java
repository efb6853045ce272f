package dev.gpuctl.engine;

import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.steps.Facts;
import dev.gpuctl.steps.Op;
import dev.gpuctl.steps.Probe;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Executes one step's probes and ops on one host through {@link Remote}: the only place where step
 * descriptions turn into commands. Every command and its result goes to the host's log, masked.
 */
final class StepRunner {
    private final Remote remote;
    private final HostLog log;
    private final Facts facts;
    private final Duration timeout;
    private final Duration maxWait;

    StepRunner(Remote remote, HostLog log, Facts facts, Duration timeout, Duration maxWait) {
        this.remote = remote;
        this.log = log;
        this.facts = facts;
        this.timeout = timeout;
        this.maxWait = maxWait;
    }

    /** Thrown when a command of an apply fails; carries what the failure report shows. */
    static final class OpFailed extends RuntimeException {
        final String what;
        final String command;
        final ExecResult result;

        OpFailed(String what, String command, ExecResult result) {
            super(what);
            this.what = what;
            this.command = command;
            this.result = result;
        }
    }

    ExecResult exec(String command) {
        return exec(command, false);
    }

    /** Runs a command; with secretOutput its stdout (a token, say) is never written to the log. */
    ExecResult exec(String command, boolean secretOutput) {
        String cmd = facts.substitute(command);
        long t0 = System.nanoTime();
        ExecResult r = remote.exec(cmd, timeout);
        ExecResult logged = secretOutput ? new ExecResult(r.exit(), r.stdout().isEmpty() ? "" : "[not logged: secret]", r.stderr()) : r;
        log.command(cmd, logged, (System.nanoTime() - t0) / 1_000_000);
        return r;
    }

    /** Asks every probe once; returns what is wrong, one entry per failed probe ("what: problem"). */
    List<String> probe(List<Probe> probes, boolean wait) {
        List<String> problems = new ArrayList<>();
        for (Probe p : probes) {
            Optional<String> problem = ask(p);
            if (wait && problem.isPresent() && !p.waitUpTo().isZero()) {
                Duration limit = maxWait != null && maxWait.compareTo(p.waitUpTo()) < 0 ? maxWait : p.waitUpTo();
                long deadline = System.nanoTime() + limit.toNanos();
                while (problem.isPresent() && System.nanoTime() < deadline) {
                    sleep(Duration.ofSeconds(2));
                    problem = ask(p);
                }
            }
            problem.ifPresent(s -> problems.add(p.what() + ": " + s));
        }
        return problems;
    }

    /** Asks one probe once: runs it (logged), keeps what it teaches, judges the answer. */
    Optional<String> ask(Probe p) {
        ExecResult r = exec(p.command());
        p.learn().apply(r).forEach((k, v) -> facts.put(k, v, false));
        try {
            return p.judge().apply(r, facts);
        } catch (RuntimeException e) {
            return Optional.of("could not read the answer: " + e.getMessage());
        }
    }

    /** Runs ops in order; returns true when something changed on the host. Throws OpFailed. */
    boolean apply(List<Op> ops) {
        Set<String> changed = new HashSet<>();
        boolean any = false;
        for (Op op : ops) {
            boolean c = applyOne(op, changed);
            any |= c;
        }
        return any;
    }

    private boolean applyOne(Op op, Set<String> changed) {
        if (op instanceof Op.Run r) {
            if (!r.onlyIfChanged().isEmpty() && r.onlyIfChanged().stream().noneMatch(changed::contains)) return false;
            if (r.unless() != null && exec(r.unless()).ok()) return false;
            ExecResult res = exec(r.command());
            if (!res.ok()) throw new OpFailed(r.what(), facts.mask(facts.substitute(r.command())), res);
            changed.addAll(r.changes());
            return true;
        }
        if (op instanceof Op.WriteFile w) {
            if (w.unless() != null && exec(w.unless()).ok()) return false;
            String content = facts.substitute(w.content());
            if (currentContent(w.path()).map(content::equals).orElse(false)) return false;
            backupOnce(w.path(), w.what());
            log.line("write " + w.path() + " (" + w.mode() + " " + w.owner() + ")" + (w.secret() ? " [content not logged: secret]" : ":\n" + content));
            remote.upload(content.getBytes(StandardCharsets.UTF_8), w.path(), w.mode(), w.owner());
            changed.add(w.path());
            return true;
        }
        if (op instanceof Op.EditFile e) {
            String before = currentContent(e.path()).orElse("");
            String after = e.edit().apply(before);
            if (after.equals(before)) return false;
            String[] modeOwner = modeAndOwner(e.path()).orElse(new String[] {e.mode(), "root:root"});
            backupOnce(e.path(), e.what());
            log.line("edit " + e.path() + " (" + e.rule() + "):\n" + after);
            remote.upload(after.getBytes(StandardCharsets.UTF_8), e.path(), modeOwner[0], modeOwner[1]);
            changed.add(e.path());
            return true;
        }
        if (op instanceof Op.Fetch f) {
            byte[] content = remote.download(f.remotePath());
            try {
                if (Files.exists(f.localPath()) && java.util.Arrays.equals(Files.readAllBytes(f.localPath()), content)) return false;
                StateDir.writePrivate(f.localPath(), content);
            } catch (IOException ex) {
                throw new OpFailed(f.what(), "write " + f.localPath(), new ExecResult(-1, "", ex.toString()));
            }
            log.line("fetched " + f.remotePath() + " to " + f.localPath());
            return true;
        }
        if (op instanceof Op.Capture c) {
            ExecResult res = exec(c.command(), c.secret());
            if (!res.ok()) throw new OpFailed(c.what(), c.command(), res);
            try {
                c.parse().apply(res.stdout()).forEach((k, v) -> facts.put(k, v, c.secret()));
            } catch (RuntimeException ex) {
                throw new OpFailed(c.what(), c.command(), new ExecResult(-1, "", "unexpected output: " + facts.mask(ex.getMessage())));
            }
            return false;
        }
        throw new IllegalStateException("unknown op " + op);
    }

    /** The file's content, or empty when it does not exist. */
    private Optional<String> currentContent(String path) {
        ExecResult r = exec("if [ -e " + path + " ]; then echo present; fi");
        if (!r.stdout().strip().equals("present")) return Optional.empty();
        return Optional.of(new String(remote.download(path), StandardCharsets.UTF_8));
    }

    private Optional<String[]> modeAndOwner(String path) {
        ExecResult r = exec("stat -c '%a %U:%G' " + path + " 2>/dev/null");
        if (!r.ok()) return Optional.empty();
        String[] p = r.stdout().strip().split(" ");
        return p.length == 2 ? Optional.of(new String[] {"0" + p[0], p[1]}) : Optional.empty();
    }

    /** Keeps the file as it was before gpuctl first changed it: PATH.gpuctl-orig, never overwritten. */
    private void backupOnce(String path, String what) {
        ExecResult r = exec("if [ -e " + path + " ] && [ ! -e " + path + ".gpuctl-orig ]; then cp -p " + path + " " + path + ".gpuctl-orig; fi");
        if (!r.ok()) throw new OpFailed("back up " + path + " before: " + what, "cp -p " + path + " " + path + ".gpuctl-orig", r);
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
