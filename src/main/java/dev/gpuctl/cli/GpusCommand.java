package dev.gpuctl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.gpuctl.engine.StateDir;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.remote.Remotes;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.workload.GpuSurvey;
import dev.gpuctl.workload.GpuUsage;
import dev.gpuctl.workload.GpusText;
import dev.gpuctl.workload.KnownGpus;
import dev.gpuctl.workload.WorkloadException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
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
        "Per GPU node: the model and count nvidia-smi sees, allocatable, allocated and free nvidia.com/gpu, the pods."})
final class GpusCommand implements Callable<Integer> {
    @Mixin InventoryOption inventory;
    @Option(names = "--json", description = "Print the report as JSON (schema gpuctl.gpus/v1, see docs/gpus.md).") boolean json;
    @Option(names = "--accept-new-host-keys", description = "Trust and record host keys seen for the first time.") boolean acceptNew;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() throws IOException {
        Inventory inv = Inventories.load(inventory.resolve(parent.env), parent.env);
        SshOptions ssh = SshOptions.defaults(acceptNew);
        Inventories.checkIdentityFiles(inventory.resolve(parent.env), inv.nodes().stream()
            .filter(n -> n.isMaster() || n.gpu()).toList(), ssh);
        GpuUsage.Report report;
        try {
            report = GpuSurvey.survey(inv, n -> n.isMaster() ? Inventories.openCluster(inv, ssh, inventory.resolve(parent.env))
                : Remotes.open(n, ssh));
        } catch (RemoteException | WorkloadException e) {
            throw new GpuctlException(ExitCode.STEP_FAILED, e.getMessage(), e);
        }
        Instant now = Instant.now();
        String doc = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
            .writeValueAsString(GpusText.document(inv.cluster().name(), report, now));
        // what job render checks a job's GPU count against, offline
        StateDir.writePrivate(KnownGpus.file(inv), (doc + "\n").getBytes(StandardCharsets.UTF_8));
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? doc + "\n" : GpusText.table(report, now));
        out.flush();
        if (!report.unreachable().isEmpty()) {
            spec.commandLine().getErr().println("gpuctl: cannot reach " + String.join(", ",
                report.unreachable().stream().map(GpuUsage.NodeGpus::name).toList()) + " (see above)");
            return ExitCode.STEP_FAILED.code();
        }
        return ExitCode.OK.code();
    }
}
