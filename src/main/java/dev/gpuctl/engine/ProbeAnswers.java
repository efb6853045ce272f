package dev.gpuctl.engine;

import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Probe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntConsumer;
import java.util.regex.Pattern;

/**
 * Where a {@link StepRunner}'s answers come from: a command run now (logged, masked, timed out), several probes'
 * commands run as one script ({@link ProbeBatch}), or a reading kept earlier in the session ({@link HostReadings}).
 * It neither judges nor waits; that is the asking loop's ({@link StepRunner#askWith}).
 */
final class ProbeAnswers {
    private final Remote remote;
    private final HostLog log;
    private final Facts facts;
    private final Duration timeout;
    private final HostReadings readings;

    ProbeAnswers(Remote remote, HostLog log, Facts facts, Duration timeout, HostReadings readings) {
        this.remote = remote;
        this.log = log;
        this.facts = facts;
        this.timeout = timeout;
        this.readings = readings;
    }

    /** Runs a command; with secretOutput its stdout (a token, say) is never written to the log. */
    ExecResult exec(String command, boolean secretOutput) {
        String cmd = facts.substitute(command);
        long t0 = System.nanoTime();
        ExecResult r = remote.exec(cmd, timeout);
        log.command(cmd, secretOutput ? notLogged(r) : r, "in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        return r;
    }

    /** {@code r} as the log shows a secret answer: its exit status and stderr, its stdout replaced. */
    static ExecResult notLogged(ExecResult r) {
        return new ExecResult(r.exit(), r.stdout().isEmpty() ? "" : "[not logged: secret]", r.stderr());
    }

    private static final Pattern FACT_REF = Pattern.compile("\\{\\{[a-zA-Z0-9_.-]+}}");

    /**
     * The end (exclusive) of the run of probes from {@code from} that can go to the host in one script. A command that
     * several probes ask goes into the script once ({@link #batch}), so only its first time counts toward the script's
     * length: the master's probes of every node that read the one cluster answer stay one command at any cluster size.
     */
    static int runEnd(List<Probe> probes, int from) {
        int end = from + 1;
        Set<String> seen = new HashSet<>();
        seen.add(probes.get(from).command());
        int length = ProbeBatch.scriptLength(List.of(probes.get(from).command()));
        while (end < probes.size()) {
            String c = probes.get(end).command();
            if (seen.add(c)) length += ProbeBatch.scriptLength(List.of(c));
            if (FACT_REF.matcher(c).find() || length > ProbeBatch.MAX_SCRIPT_CHARS) break;
            end++;
        }
        return end;
    }

    /** One probe's command as run and what it returned; reused: not run, its reading earlier in the run given. */
    record Answer(String command, ExecResult result, boolean reused) {}

    /**
     * Runs the probes' commands as one script; returns the answers that came back framed, in order (possibly
     * fewer than asked: those probes are then asked one by one). A command that several probes ask (the cluster's
     * node list, say: one probe per node reads it) runs once and answers each of them; probes are read-only, so
     * that is what asking it again a moment later would answer. A script that runs out of time is a timeout of
     * the probe that was running then, like the same probe asked alone. When the host fails to answer, {@code running}
     * is told the index (in {@code probes}) of the probe that was running, where the script says which.
     */
    List<Answer> batch(List<Probe> probes, IntConsumer running) {
        List<String> asked = probes.stream().map(p -> facts.substitute(p.command())).toList();
        Map<String, ExecResult> known = new HashMap<>();
        for (int k = 0; k < probes.size(); k++) {
            String c = asked.get(k);
            if (!known.containsKey(c)) reused(probes.get(k), c).ifPresent(r -> known.put(c, r));
        }
        List<String> commands = asked.stream().distinct().filter(c -> !known.containsKey(c)).toList();
        if (commands.isEmpty()) return asked.stream().map(c -> new Answer(c, known.get(c), true)).toList();
        long generation = readings.generation();
        String delimiter = ProbeBatch.newDelimiter();
        long t0 = System.nanoTime();
        ExecResult whole;
        try {
            whole = remote.exec(ProbeBatch.script(commands, delimiter), timeout);
        } catch (RemoteException e) {
            if (e.kind() == RemoteException.Kind.CONNECTION_LOST) {
                // the probe that was running when the host went away is the one whose step failed
                int at = ProbeBatch.running(e.partialStdout(), delimiter, commands.size());
                if (at >= 0) {
                    log.line("batch of " + asked.size() + " probes: the connection was lost while probe "
                        + (asked.indexOf(commands.get(at)) + 1) + " was running: " + facts.mask(commands.get(at)));
                    running.accept(asked.indexOf(commands.get(at)));
                }
                throw e;
            }
            if (e.kind() != RemoteException.Kind.TIMEOUT) throw e;
            // the probe that was running when time ran out is the slow one: name it, as if it had run alone
            int slow = ProbeBatch.running(e.partialStdout(), delimiter, commands.size());
            log.line("batch of " + asked.size() + " probes: no answer within " + timeout.toSeconds() + " s"
                + (slow < 0 ? "" : "; probe " + (asked.indexOf(commands.get(slow)) + 1) + " was running: " + facts.mask(commands.get(slow))));
            if (slow < 0) throw e;
            running.accept(asked.indexOf(commands.get(slow)));
            throw RemoteException.timeout(remote.name(), facts.mask(commands.get(slow)), timeout);
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        List<ExecResult> results = ProbeBatch.parse(whole.stdout(), whole.stderr(), delimiter, commands.size());
        StringBuilder line = new StringBuilder("batch of " + asked.size() + " probes"
            + (commands.size() < asked.size() ? " (" + commands.size() + " distinct commands)" : "")
            + ": one command, exit " + whole.exit() + " in " + ms + " ms");
        for (int k = 0; k < probes.size(); k++) {
            int i = commands.indexOf(asked.get(k));
            if (i >= 0 && i < results.size()) keepReading(probes.get(k), asked.get(k), results.get(i), generation);
        }
        List<Answer> answers = new ArrayList<>();
        for (String c : asked) {
            ExecResult r = known.get(c);
            int i = commands.indexOf(c);
            if (r == null && i >= results.size()) break;
            answers.add(new Answer(c, r != null ? r : results.get(i), r != null));
        }
        if (answers.size() < asked.size()) {
            line.append("; ").append(answers.size()).append(" answers came back framed, the rest are asked one by one; its output ends:\n")
                .append(new ExecResult(whole.exit(), whole.stdout(), whole.stderr()).tail(6));
        }
        log.line(line.toString());
        return answers;
    }

    /** The probe's answer: its reading when one is current ({@link HostReadings}), else the command run now. */
    ExecResult askOnce(Probe p) {
        String cmd = facts.substitute(p.command());
        Optional<ExecResult> known = reused(p, cmd);
        return known.isPresent() ? known.get() : fresh(p);
    }

    /** The probe's command run now (logged); a reusable probe's answer is kept as its reading. */
    ExecResult fresh(Probe p) {
        long generation = readings.generation();
        ExecResult r = exec(p.command(), p.secret());
        keepReading(p, facts.substitute(p.command()), r, generation);
        return r;
    }

    /** A reusable probe's current reading of {@code command}, said in the host's log; empty when it must be asked. */
    private Optional<ExecResult> reused(Probe p, String command) {
        Optional<HostReadings.Reading<?>> r = readings.forProbe(p, command);
        r.ifPresent(reading -> log.command(command, p.secret() ? notLogged(reading.answer()) : reading.answer(),
            "(not asked again: the answer read earlier in this run, op generation " + reading.generation() + ", nothing applied on this host since)"));
        return r.map(HostReadings.Reading::answer);
    }

    private void keepReading(Probe p, String command, ExecResult r, long generation) {
        if (p.reading() != null) readings.read(p.reading(), command, r, generation);
    }
}
