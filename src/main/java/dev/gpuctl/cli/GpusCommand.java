package dev.gpuctl.cli;

import dev.gpuctl.text.Terminal;
import dev.gpuctl.engine.StateDir;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.remote.Remotes;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.workflow.GpusWorkflow;
import dev.gpuctl.workflow.Workflows;
import dev.gpuctl.workload.GpuSurvey;
import dev.gpuctl.workload.GpuUsage;
import dev.gpuctl.workload.GpusText;
import dev.gpuctl.workload.KnownGpus;
import dev.gpuctl.workload.WorkloadException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "gpus",
    description = {"Show who holds which GPU, node by node (read-only, through the master: no kubeconfig needed here).",
        "Per GPU node: the model and count nvidia-smi sees, allocatable, allocated and free nvidia.com/gpu, the pods;"
            + " then per GPU, sampled for a short window: the pod holding it, its utilisation and memory, and IDLE for a GPU"
            + " held but unused."})
final class GpusCommand implements Callable<Integer> {
    @Mixin InventoryOption inventory;
    @Option(names = "--json", description = "Print the report as JSON (schema gpuctl.gpus/v1, see docs/gpus.md).") boolean json;
    @Option(names = "--sample", defaultValue = "3s", paramLabel = "DURATION", converter = Converters.WaitValue.class,
        description = {"Sample each GPU's utilisation and memory this long (nvidia-smi -lms 500, all GPU nodes at once) and show"
            + " it beside the pod holding the GPU; a GPU held by a pod with 0 %% in every sample is flagged IDLE."
            + " E.g. 10s (a bare number is seconds; 0 skips the sampling; default: ${DEFAULT-VALUE}; at most 5m)."}) Duration sample;
    @Mixin HostOptions connection;
    @Spec CommandSpec spec;
    static final Duration MAX_SAMPLE = Duration.ofMinutes(5);
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() throws IOException {
        if (sample.compareTo(MAX_SAMPLE) > 0) {
            throw new GpuctlException(ExitCode.USAGE, "--sample " + GpusText.seconds(sample) + " is too long: at most 5m (the report waits for it)");
        }
        Inventory loaded = Inventories.loadHaAware(inventory.resolve(parent.env), parent.env);
        SshOptions ssh = connection.ssh();
        Inventories.checkIdentityFiles(inventory.resolve(parent.env), loaded.nodes().stream()
            .filter(n -> n.isMaster() || n.gpu()).toList(), ssh);
        // several masters: the first that answers with its admin.conf is asked (as the first master); one: as before,
        // connected with the GPU nodes, its failure reported with its log
        Inventories.Acting acting;
        try {
            acting = loaded.highlyAvailable() ? Inventories.openCluster(loaded, ssh, inventory.resolve(parent.env), spec.commandLine().getErr()) : null;
        } catch (RemoteException e) {
            throw GpuctlException.of(e);
        }
        Inventory inv = acting == null ? loaded : acting.inv();
        GpuUsage.Report report;
        GpuSurvey.Survey survey;
        boolean notConnected;
        java.nio.file.Path logDir;
        GpusWorkflow.Answers answers = null;
        try {
            GpusWorkflow workflow = new GpusWorkflow(inv, sample);
            answers = Workflows.run(workflow, new Workflows.Target(inv, n -> acting != null && n.name().equals(inv.master().name()) ? acting.master()
                : acting == null && n.isMaster() ? Inventories.openCluster(inv, ssh, inventory.resolve(parent.env), spec.commandLine().getErr()).master()
                : Remotes.open(n, ssh), new PrintWriter(Writer.nullWriter()), workflow.options(), null),
                PhaseRuns.guard(spec.commandLine().getErr()));
            if (answers.interrupted()) throw new GpuctlException(ExitCode.INTERRUPTED, "interrupted; run it again.\nLogs: " + answers.logDir());
            survey = GpuSurvey.of(inv, answers::answer, answers.unreachable(), sample);
            report = survey.usage();
            notConnected = !answers.notConnected().isEmpty();
            logDir = answers.logDir();
        } catch (RemoteException e) {
            throw GpuctlException.of(e);
        } catch (WorkloadException e) {
            // the master's answers were needed: say why it gave none, with its log
            if (answers != null && answers.unreachable().containsKey(inv.master().name())) {
                throw new GpuctlException(answers.notConnected().contains(inv.master().name()) ? ExitCode.UNREACHABLE : ExitCode.STEP_FAILED,
                    answers.unreachable().get(inv.master().name()) + "\n  log: " + answers.logDir().resolve(inv.master().name() + ".log"), e);
            }
            throw new GpuctlException(ExitCode.STEP_FAILED, e.getMessage(), e);
        }
        Instant now = Instant.now();
        java.util.Map<String, String> teams = new java.util.LinkedHashMap<>();
        inv.teams().forEach(t -> teams.put(t.namespace(), t.name()));
        String doc = Terminal.jsonWriter()
            .writeValueAsString(GpusText.document(inv.cluster().name(), report, survey.activity(), now, teams));
        // what job render checks a job's GPU count against, offline
        StateDir.writePrivate(KnownGpus.file(inv), (doc + "\n").getBytes(StandardCharsets.UTF_8));
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? doc + "\n" : GpusText.table(report, now, teams)
            + survey.activity().map(a -> "\n" + GpusText.activityTable(a, teams)).orElse(""));
        out.flush();
        if (!report.unreachable().isEmpty()) {
            spec.commandLine().getErr().println("gpuctl: cannot reach " + String.join(", ",
                report.unreachable().stream().map(GpuUsage.NodeGpus::name).toList()) + " (see above)");
            report.unreachable().forEach(n -> spec.commandLine().getErr().println("  log: " + logDir.resolve(n.name() + ".log")));
            return (notConnected ? ExitCode.UNREACHABLE : ExitCode.STEP_FAILED).code();
        }
        return ExitCode.OK.code();
    }
}
