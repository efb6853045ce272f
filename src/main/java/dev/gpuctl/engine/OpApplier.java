package dev.gpuctl.engine;

import dev.gpuctl.hostfiles.HostJournal;
import dev.gpuctl.kube.Kubeconfig;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Op;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The applying half of a {@link StepRunner}: one step's ops on one host, in order (commands, waits, file writes and
 * edits with their journal line, fetches, sends, captures). Its commands and probes go through the step runner that
 * made it, so they are logged, masked and timed out as every other; a failed op is a {@link StepRunner.OpFailed}.
 */
final class OpApplier {
    private final StepRunner asker;
    private final Remote remote;
    private final HostLog log;
    private final Facts facts;
    /** Told what the user must know of an op's outcome (a kubeconfig archived, a merged one refreshed). */
    private final Consumer<String> tell;

    OpApplier(StepRunner asker, Remote remote, HostLog log, Facts facts, Consumer<String> tell) {
        this.asker = asker;
        this.remote = remote;
        this.log = log;
        this.facts = facts;
        this.tell = tell;
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
            if (r.guard() != null && asker.ask(r.guard()).isEmpty()) return false;
            ExecResult res = asker.exec(r.unless() == null ? r.hostCommand() : unlessThen(r.unless(), r.hostCommand()));
            if (!res.ok()) throw new StepRunner.OpFailed(r.what(), facts.mask(facts.substitute(r.command())), res);
            if (r.unless() != null && checkPassed(res.stdout())) {
                log.line("not run: its check passed (already right): " + r.what());
                return false;
            }
            changed.addAll(r.changes());
            return true;
        }
        if (op instanceof Op.Await a) {
            List<String> still = asker.probe(List.of(a.until()), true);
            if (!still.isEmpty()) {
                if (a.orElse() != null) {
                    ExecResult undo = asker.exec(a.orElse());
                    if (!undo.ok()) log.line("after the wait gave up, '" + a.orElse() + "' failed too: exit " + undo.exit());
                }
                throw new StepRunner.OpFailed(a.what(), facts.mask(facts.substitute(a.until().command())),
                    new ExecResult(1, "", "still after waiting up to " + a.until().waitUpTo().toSeconds() + " s: " + String.join("\n", still)));
            }
            return false;
        }
        if (op instanceof Op.WriteFile w) {
            if (w.unless() != null && asker.exec(w.unless()).ok()) return false;
            // user data (a manifest, say) is used byte for byte; only gpuctl's own templates hold {{fact}}s
            String content = w.literal() ? w.content() : facts.substitute(w.content());
            HostFiles.Target t = target(w.path(), w.what());
            Optional<HostFiles.Existing> existing = t instanceof HostFiles.Existing e ? Optional.of(e) : Optional.empty();
            if (existing.isPresent() && readTarget(existing.get()).equals(content)) return false;
            String mode = HostFiles.mode(existing.map(HostFiles.Existing::mode), w.mode(), false);
            String owner = existing.map(HostFiles.Existing::owner).orElse(w.owner());
            write(w.path(), w.what(), existing, content, mode, owner,
                (w.secret() ? " [content not logged: secret]"
                    : w.objects() != null ? " [a manifest, sha256 " + w.sha256() + ", of: " + w.objects().replace("\n", ", ") + "]"
                    : ":\n" + content));
            changed.add(w.path());
            return true;
        }
        if (op instanceof Op.EditFile e) {
            HostFiles.Target t = target(e.path(), e.what());
            Optional<HostFiles.Existing> existing = t instanceof HostFiles.Existing x ? Optional.of(x) : Optional.empty();
            String before = existing.map(this::readTarget).orElse("");
            String after = e.edit().apply(before);
            if (after.equals(before)) return false;
            String mode = HostFiles.mode(existing.map(HostFiles.Existing::mode), e.mode(), true);
            String owner = existing.map(HostFiles.Existing::owner).orElse("root:root");
            write(e.path(), e.what(), existing, after, mode, owner, " (" + e.rule() + "):\n" + after);
            changed.add(e.path());
            return true;
        }
        if (op instanceof Op.Fetch f) {
            String from = facts.substitute(f.remotePath()); // a path made in this step (mktemp -d) is a fact
            if (f.newFile()) {
                Path target;
                try {
                    target = NewPrivateFile.create(f.localPath());
                } catch (StateDir.Refused ex) {
                    throw new StepRunner.OpFailed(f.what(), "write " + f.localPath() + " (a new file)", new ExecResult(-1, "", ex.getMessage()));
                }
                try {
                    remote.download(from, target); // streamed into the file just made: never in memory
                } catch (RuntimeException ex) {
                    try {
                        Files.deleteIfExists(target);
                    } catch (IOException ignored) {
                        // our own new, partial file: named in the failure
                    }
                    throw ex;
                }
                log.line("fetched " + from + " to " + f.localPath() + " (a new file, 0600)");
                return true;
            }
            // streamed into a private temp file beside the target, compared there, renamed into place: never in memory
            Path tmp;
            try {
                tmp = StateDir.privateTempBeside(f.localPath());
            } catch (IOException ex) {
                throw new StepRunner.OpFailed(f.what(), "write " + f.localPath(), new ExecResult(-1, "", ex.toString()));
            }
            try {
                remote.download(from, tmp);
                if (Files.exists(f.localPath()) && Files.mismatch(f.localPath(), tmp) == -1) return false;
                StateDir.moveInto(tmp, f.localPath());
            } catch (IOException ex) {
                throw new StepRunner.OpFailed(f.what(), "write " + f.localPath(), new ExecResult(-1, "", ex.toString()));
            } finally {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // a private temp file in our own directory: left for the next run to overwrite
                }
            }
            log.line("fetched " + from + " to " + f.localPath());
            return true;
        }
        if (op instanceof Op.FetchKubeconfig k) {
            byte[] content = remote.download(k.remotePath());
            Optional<String> server;
            try {
                server = Optional.of(facts.substitute(k.server()));
            } catch (IllegalStateException notLearned) { // the master's IP by name, not learned in this run: the recorded one
                try {
                    server = LaptopKubeconfigs.recordedServer(k.localPath());
                } catch (IOException ex) {
                    throw new StepRunner.OpFailed(k.what(), "read " + k.localPath(), new ExecResult(-1, "", ex.toString()));
                }
            }
            boolean newCluster = k.newClusterFact() != null && facts.get(k.newClusterFact()).filter("new"::equals).isPresent();
            try {
                LaptopKubeconfigs.Installed got = LaptopKubeconfigs.install(k.localPath(), k.clusterName(),
                    new String(content, StandardCharsets.UTF_8), server, newCluster);
                got.notes().forEach(n -> {
                    log.line(n);
                    tell.accept(n);
                });
                if (got.changed()) log.line("rebuilt " + k.remotePath() + " into " + k.localPath());
                return got.changed();
            } catch (Kubeconfig.Refused | Kubeconfig.Invalid ex) {
                throw new StepRunner.OpFailed(k.what(), "rebuild " + k.remotePath() + " into " + k.localPath(),
                    new ExecResult(-1, "", ex.getMessage() + "\nnothing was written on this machine; look at the master before you trust it"
                        + " (a master rebuilt on purpose: gpuctl reset, then gpuctl bootstrap)"));
            } catch (IOException ex) {
                throw new StepRunner.OpFailed(k.what(), "write " + k.localPath(), new ExecResult(-1, "", ex.toString()));
            }
        }
        if (op instanceof Op.Send s) {
            if (s.unless() != null && asker.exec(s.unless()).ok()) return false;
            log.line("send " + s.localPath() + " to " + s.remotePath() + " (" + s.mode() + " root:root)");
            remote.upload(s.localPath(), s.remotePath(), s.mode(), "root:root");
            return true;
        }
        if (op instanceof Op.Capture c) {
            ExecResult res = asker.exec(c.command(), c.secret());
            if (!res.ok()) throw new StepRunner.OpFailed(c.what(), c.command(), res);
            try {
                c.parse().apply(res.stdout()).forEach((k, v) -> facts.put(k, v, c.secret()));
            } catch (RuntimeException ex) {
                throw new StepRunner.OpFailed(c.what(), c.command(), new ExecResult(-1, "", "unexpected output: " + facts.mask(ex.getMessage())));
            }
            return false;
        }
        throw new IllegalStateException("unknown op " + op);
    }

    /** The line {@link #unlessThen} prints when the check passed: the run's id makes it one no command prints by chance. */
    static final String CHECK_PASSED = "gpuctl: check passed, not run " + Facts.ref(Facts.RUN_ID);

    /**
     * One command for an op with a check ({@link Op.Run#unless}): the check first, in a subshell (its own {@code exit}
     * ends only the check; its output goes to stderr), and when it exits 0 the line {@link #CHECK_PASSED} and exit 0, the
     * op not run; otherwise the op. One round trip instead of two, the check's answer and the op's from the same moment.
     */
    static String unlessThen(String unless, String command) {
        return "if (\n" + unless + "\n) >&2; then echo '" + CHECK_PASSED + "'; exit 0; fi\n" + command;
    }

    /** Whether an {@link #unlessThen} command's stdout says its check passed (its last line, the run's id filled in). */
    private boolean checkPassed(String stdout) {
        String out = stdout.endsWith("\n") ? stdout.substring(0, stdout.length() - 1) : stdout;
        return out.substring(out.lastIndexOf('\n') + 1).equals(facts.substitute(CHECK_PASSED));
    }

    /**
     * Where a write to {@code path} lands (a link's target), checked on the host: a refusal ({@link HostFiles}) stops
     * the op before anything is written.
     */
    private HostFiles.Target target(String path, String what) {
        String command = HostFiles.probeCommand(path);
        ExecResult r = asker.exec(command);
        HostFiles.Target t = HostFiles.parse(path, r.exit(), r.stdout());
        if (t instanceof HostFiles.Refused refused) {
            throw new StepRunner.OpFailed(what, "check " + path + " before writing it", new ExecResult(1, "", HostFiles.refusal(refused)));
        }
        return t;
    }

    private String readTarget(HostFiles.Existing e) {
        return new String(remote.download(e.target()), StandardCharsets.UTF_8);
    }

    /**
     * Backs the old file up once, then writes the new content to the real file (a link's target, the link kept)
     * through a temp file beside it and a rename, with the mode and owner given.
     */
    private void write(String path, String what, Optional<HostFiles.Existing> existing, String content, String mode,
                       String owner, String shown) {
        String target = existing.map(HostFiles.Existing::target).orElse(path);
        log.line((existing.isEmpty() ? "write " : "edit ") + path
            + (target.equals(path) ? "" : " (a link: writing its target " + target + ")") + " (" + mode + " " + owner + ")" + shown);
        // kept as it was before gpuctl first changed it (PATH.gpuctl-orig, never overwritten) and the change recorded in
        // the host's journal (HostJournal.beforeWrite), in the write's own command: no file is changed without its line
        String journal = facts.substitute(HostJournal.beforeWrite(path, target));
        long t0 = System.nanoTime();
        ExecResult r = remote.upload(journal, content.getBytes(StandardCharsets.UTF_8), target, mode, owner);
        log.command(journal, r, "(in the write's command, " + (System.nanoTime() - t0) / 1_000_000 + " ms with the write)");
        if (!r.ok()) throw new StepRunner.OpFailed("back up " + path + " and journal the change before: " + what, journal, r);
    }
}
