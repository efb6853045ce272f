package dev.gpuctl.cli;

import dev.gpuctl.workflow.NodeWorkflows;
import dev.gpuctl.inventory.Inventory;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "reset",
    description = {"Take the whole cluster down, after showing what it will do and asking (unless --yes).",
        "kubeadm resets every worker, then the masters (one at a time, each removing its own etcd member; the first"
            + " master last), and removes what reset leaves; this machine's .gpuctl/CLUSTER is"
            + " archived, not deleted. The host preparation stays, unless --restore-host: then every host's files, units,"
            + " package holds and swap are put back as they were before gpuctl, from the change journal it keeps on each"
            + " host. A second reset changes nothing."})
final class ResetCommand implements Callable<Integer> {
    @Option(names = "--yes", description = "Do not ask for confirmation.") boolean yes;
    @Option(names = "--restore-host", description = "After the reset, put every host's preparation back as it was before gpuctl; with --dry-run, say what each host would get back.")
    boolean restoreHost;
    @Mixin ChangeOptions.OnInventory options;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() throws IOException {
        ChangeOptions.Opened opened = options.open(parent.env, "reset");
        Inventory inv = opened.inv();
        var err = spec.commandLine().getErr();
        err.print(NodeWorkflows.resetPlan(inv, restoreHost));
        err.flush();
        if (!yes && !options.dryRun()) {
            err.print("Type the cluster's name (" + inv.cluster().name() + ") to reset it: ");
            err.flush();
            String answer = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            if (answer == null || !answer.strip().equals(inv.cluster().name())) {
                throw new GpuctlException(ExitCode.USAGE, "not confirmed" + (answer == null ? " (no input: pass --yes to reset without asking)" : "")
                    + "; nothing was changed");
            }
        }
        options.run(opened, NodeWorkflows.reset(inv, restoreHost), Duration.ofMinutes(10), err, "reset",
            "Fix the cause and run reset again: hosts already clean are left as they are.");
        var out = spec.commandLine().getOut();
        if (options.dryRun()) {
            out.println(ChangeOptions.DRY_RUN_COMPLETE);
            return ExitCode.OK.code();
        }
        Optional<Path> archived = NodeWorkflows.archiveClusterState(inv);
        out.println("reset complete" + archived.map(p -> "; local state archived in " + p).orElse("; no local state to archive"));
        return ExitCode.OK.code();
    }
}
