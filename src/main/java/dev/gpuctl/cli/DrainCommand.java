package dev.gpuctl.cli;

import dev.gpuctl.workflow.NodeWorkflows;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "drain",
    description = {"Take nodes out of service for a repair or a driver change, waiting for their GPU Jobs first.",
        "Cordon them, wait for the GPU Jobs running there to finish (never evicted unless --force), then evict the"
            + " other pods (kubectl drain; DaemonSets stay, PodDisruptionBudgets are respected). The nodes stay cordoned"
            + " until `gpuctl uncordon`."})
final class DrainCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "HOST", description = "Nodes of the inventory to drain.") List<String> hosts;
    @Option(names = "--force", description = "Evict the GPU Jobs and bare pods too, without waiting for them.") boolean force;
    @Mixin DrainTimeoutOption drainTimeout;
    @Mixin ChangeOptions.OnNodes options;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() {
        ChangeOptions.Opened opened = options.open(parent.env, "drain", hosts);
        options.runActing(opened, NodeWorkflows.drain(hosts, drainTimeout.value, force), drainTimeout.commandTimeout(),
            spec.commandLine().getErr(), "drain",
            "The nodes stay cordoned. Re-run later, raise --drain-timeout, or use --force; `gpuctl uncordon` puts them back in service.");
        spec.commandLine().getOut().println(options.completed("drained: " + String.join(", ", hosts) + " (cordoned until `gpuctl uncordon`)"));
        return ExitCode.OK.code();
    }
}
