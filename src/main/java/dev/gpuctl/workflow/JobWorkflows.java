package dev.gpuctl.workflow;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StepFailure;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.steps.MasterAnswersStep;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.workload.JobControl;
import dev.gpuctl.workload.JobList;
import dev.gpuctl.workload.JobSpec;
import dev.gpuctl.workload.JobSubmit;
import dev.gpuctl.workload.MasterAnswers;
import dev.gpuctl.workload.WorkloadException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * {@code gpuctl job submit|list|logs|delete}: one session on the master alone, its commands in the master's log. list
 * and logs only ask (VERIFY, read-only); delete and submit ask, and make their change in the same step when the answers
 * allow it (APPLY, no lock: a job is the cluster's scheduler's, not a change to the hosts). The answers are read as
 * {@link JobControl} and {@link JobSubmit} say; a refusal or a failed command is the outcome's {@link WorkloadException}.
 */
public final class JobWorkflows {
    /** Longest a command on the master may run. */
    static final Duration TIMEOUT = Duration.ofMinutes(1);
    private static final String SAID = "job.said";

    private JobWorkflows() {}

    /**
     * What a job command gets: its report, or the refusal or failure that stopped it (a message for people), or neither
     * when the master could not be asked (the result's failures say why).
     */
    public record Outcome<T>(Runner.Result result, Optional<T> report, Optional<WorkloadException> error) {}

    /** A job command's workflow and the session it runs in ({@link #options}: the master alone). */
    public static final class Job<T> implements Workflow<Outcome<T>> {
        private final Runner.Options options;
        private final List<Phase> phases;
        private final BiFunction<Runner.Result, Facts, T> report;
        /** A local file the session sends, written as it starts and removed once it ended; null: none. */
        private Path staged;
        private String content;

        Job(Runner.Options options, List<Phase> phases, BiFunction<Runner.Result, Facts, T> report) {
            this.options = options;
            this.phases = phases;
            this.report = report;
        }

        public Runner.Options options() { return options; }

        Job<T> staging(Path file, String text) {
            this.staged = file;
            this.content = text;
            return this;
        }

        @Override public List<Phase> first() {
            if (staged != null) {
                try {
                    Files.writeString(staged, content, StandardCharsets.UTF_8);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot write " + staged + ": " + e.getMessage(), e);
                }
            }
            return phases;
        }

        @Override public Optional<List<Phase>> next(Runner.Result done) { return Optional.empty(); }

        @Override public Outcome<T> outcome(Runner.Result last, Facts learned) {
            if (staged != null) {
                try {
                    Files.deleteIfExists(staged);
                } catch (IOException e) {
                    staged.toFile().deleteOnExit();
                }
            }
            if (last.wasInterrupted() || last.failures().stream().anyMatch(f -> f.command().isEmpty())) {
                return new Outcome<>(last, Optional.empty(), Optional.empty());
            }
            try {
                return new Outcome<>(last, Optional.of(report.apply(last, learned)), Optional.empty());
            } catch (WorkloadException e) {
                return new Outcome<>(last, Optional.empty(), Optional.of(e));
            }
        }
    }

    /** {@code gpuctl job list}: the gpuctl jobs of {@code namespace} (all when null); {@code queued}: their queue places too. */
    public static Job<List<JobList.Row>> list(Inventory inv, String namespace, boolean queued) {
        List<String> asks = JobControl.listAsks(namespace, queued);
        return asking(inv, "job-list", "the cluster's gpuctl jobs", asks,
            (last, learned) -> JobControl.list(answers(inv, asks, learned), namespace, queued));
    }

    /** {@code gpuctl job logs}: the logs of job NS/NAME's pod. */
    public static Job<String> logs(Inventory inv, String namespace, String name, OptionalInt tail) {
        List<String> asks = JobControl.logsAsks(namespace, name, tail);
        return asking(inv, "job-logs", "the job's logs", asks,
            (last, learned) -> JobControl.logs(answers(inv, asks, learned), namespace, name, tail));
    }

    /** {@code gpuctl job delete}: job NS/NAME and its pods, when gpuctl submitted it; kubectl's answer. */
    public static Job<String> delete(Inventory inv, String namespace, String name) {
        List<String> asks = JobControl.existingAsks(namespace, name);
        String command = JobControl.deleteCommand(namespace, name);
        MasterAnswersStep step = MasterAnswersStep.changing("job-delete", "the job deleted", asks,
            facts -> allows(() -> JobControl.deletable(answers(inv, asks, facts), namespace, name)),
            "job " + namespace + "/" + name + " is to be deleted", List.of(said("delete the job and its pods", command)));
        return changing(inv, step, (last, learned) -> {
            JobControl.deletable(answers(inv, asks, learned), namespace, name);
            return made(inv, last, learned, Map.of(command, JobControl.NEXT));
        });
    }

    /**
     * {@code gpuctl job submit}: {@code job} checked against the cluster, then {@code manifest} uploaded (0600, through a
     * private local file that lives as long as the session) and applied; kubectl apply's answer.
     */
    public static Job<String> submit(Inventory inv, JobSpec job, String manifest) {
        Path staged;
        try {
            staged = Files.createTempFile("gpuctl-job-", ".yaml", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make a local file for the job's manifest: " + e.getMessage(), e);
        }
        staged.toFile().deleteOnExit();
        List<String> asks = JobSubmit.checkAsks(job);
        String apply = JobSubmit.applyCommand(job);
        List<Op> ops = List.of(Op.Run.of("the directory of submitted jobs", JobSubmit.MKDIR),
            new Op.Send("the job's manifest", staged, JobSubmit.path(job), "0600"),
            said("apply the job's manifest", apply));
        MasterAnswersStep step = MasterAnswersStep.changing("job-submit", "the job submitted", asks,
            facts -> allows(() -> JobSubmit.check(job, answers(inv, asks, facts))),
            "job " + job.namespace() + "/" + job.name() + " is to be submitted", ops);
        return changing(inv, step, (last, learned) -> {
            JobSubmit.check(job, answers(inv, asks, learned));
            return made(inv, last, learned, Map.of(JobSubmit.MKDIR, JobSubmit.NOT_APPLIED, apply, JobSubmit.applyNext(job, inv.master().name())));
        }).staging(staged, manifest);
    }

    private static Job<String> changing(Inventory inv, MasterAnswersStep step, BiFunction<Runner.Result, Facts, String> report) {
        return new Job<>(new Runner.Options(false, 1, Set.of(inv.master().name()), TIMEOUT),
            List.of(new Phase(step.id(), step.title(), List.of(step), false)), report);
    }

    private static <T> Job<T> asking(Inventory inv, String id, String title, List<String> asks, BiFunction<Runner.Result, Facts, T> report) {
        return new Job<>(Runner.Options.verify(1, Set.of(inv.master().name()), TIMEOUT, Duration.ZERO),
            List.of(new Phase(id, title, List.of(new MasterAnswersStep(id, title, asks)), true)), report);
    }

    /** The master's kept answers to {@code asks}. */
    static MasterAnswers answers(Inventory inv, List<String> asks, Facts facts) {
        Map<String, ExecResult> byCommand = new LinkedHashMap<>();
        for (String c : asks) facts.kept(MasterAnswersStep.key(c)).ifPresent(r -> byCommand.put(c, r));
        return new MasterAnswers(inv.master().name(), byCommand);
    }

    /** Whether the answers allow the change: the check neither refused it nor failed (the outcome says which). */
    private static boolean allows(Runnable check) {
        try {
            check.run();
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** A kubectl command whose stdout is the command's report. */
    private static Op said(String what, String command) {
        return new Op.Capture(what, command, out -> Map.of(SAID, out), false);
    }

    /** What the change's kubectl said, or its failure in the words of a failed question ({@code next}: by command). */
    private static String made(Inventory inv, Runner.Result last, Facts learned, Map<String, String> next) {
        for (StepFailure f : last.failures()) {
            throw MasterAnswers.changeFailed(inv.master().name(), f.command(), f.exit(), f.detail(),
                next.getOrDefault(f.command(), JobControl.NEXT));
        }
        return learned.get(SAID).orElse("");
    }
}
