package dev.gpuctl.cli;

import dev.gpuctl.workflow.NodeWorkflows;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "uncordon", description = "Put drained nodes back in service: new pods may be scheduled there again.")
final class UncordonCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "HOST", description = "Nodes of the inventory to uncordon.") List<String> hosts;
    @Mixin ChangeOptions.OnNodes options;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() {
        ChangeOptions.Opened opened = options.open(parent.env, "uncordon", hosts);
        options.runActing(opened, NodeWorkflows.uncordon(hosts), Duration.ofMinutes(2), spec.commandLine().getErr(), "uncordon",
            "Fix the cause and run uncordon again.");
        spec.commandLine().getOut().println(options.completed("uncordoned: " + String.join(", ", hosts)));
        return ExitCode.OK.code();
    }
}
