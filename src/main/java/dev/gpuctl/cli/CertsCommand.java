package dev.gpuctl.cli;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.VerifyText;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.workflow.VerifyWorkflow;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "certs",
    description = "Check the expiry of the cluster's certificates, or renew the control plane's.",
    subcommands = {CertsCommand.Check.class, CertsCommand.Renew.class})
final class CertsCommand implements Runnable {
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public void run() {
        spec.commandLine().usage(spec.commandLine().getErr());
        throw new GpuctlException(ExitCode.USAGE, "certs needs a subcommand: check or renew (see above)");
    }

    /** verify's certificate checks alone, on every host; exit as verify's. */
    static int check(Inventory inv, SshOptions ssh, CommandSpec spec) {
        Runner.Result result = VerifyCommand.run(inv, ssh, Set.of(), Duration.ZERO, spec, VerifyWorkflow.certificates());
        PrintWriter out = spec.commandLine().getOut();
        out.print(VerifyText.render(result.report()));
        out.flush();
        return VerifyCommand.exitCode(result, spec.commandLine().getErr());
    }

    @Command(name = "check",
        description = {"Check the expiry of every certificate of the cluster (read-only).",
            "The control plane's and the CAs (kubeadm certs check-expiration on the master), this machine's kubeconfig,"
                + " every kubelet's client certificate and its rotation: the same checks as verify's 'certs' lines. Under 30 days"
                + " left warns (exit 5), expired fails (exit 4)."})
    static final class Check implements Callable<Integer> {
        @Mixin InventoryOption inventory;
        @Mixin HostOptions connection;
        @Spec CommandSpec spec;
        @ParentCommand CertsCommand certs;

        @Override public Integer call() {
            Inventory inv = Inventories.loadHaAware(inventory.resolve(certs.parent.env), certs.parent.env);
            SshOptions ssh = connection.ssh();
            Inventories.checkIdentityFiles(inventory.resolve(certs.parent.env), inv.nodes(), ssh);
            return check(inv, ssh, spec);
        }
    }

    @Command(name = "renew",
        description = {"Renew the control plane's certificates and restart the control plane to use them.",
            "kubeadm certs renew all on the master (with several masters: on each, one at a time, each only while the other"
                + " masters' API servers are ready); its static pods (etcd, kube-apiserver, kube-controller-manager,"
                + " kube-scheduler) restarted one at a time and each waited for; the new admin.conf to the master's"
                + " ~/.kube/config, rebuilt into .gpuctl/ and into a kubeconfig merged by gpuctl kubeconfig --merge; then every"
                + " certificate checked again. Takes the bootstrap lock. Running it again is safe. CAs (ten years) are not renewed."})
    static final class Renew implements Callable<Integer> {
        @Mixin CommandTimeoutOption commandTimeout;
        @Mixin ChangeOptions.OnInventory options;
        @Spec CommandSpec spec;
        @ParentCommand CertsCommand certs;

        @Override public Integer call() {
            ChangeOptions.Opened opened = options.open(certs.parent.env, "certs renew");
            Inventory inv = opened.inv();
            PrintWriter err = spec.commandLine().getErr();
            SshOptions ssh = options.checkedSsh(opened);
            // one master at a time (several masters: one round each, refused while another master's API server is not ready)
            Set<String> masters = inv.masters().stream().map(Node::name).collect(Collectors.toCollection(LinkedHashSet::new));
            PhaseRuns.judged(PhaseRuns.session(VerifyWorkflow.renewCertificates(inv), inv, ssh, err,
                    new Runner.Options(options.dryRun(), 1, masters, commandTimeout.value)),
                new PhaseRuns.Outcomes(r -> "interrupted at " + String.join(", ", r.interrupted())
                        + ". A static pod's manifest moved aside is put back by the next run: run gpuctl certs renew again.\nLogs: " + r.logDir(),
                    inv.highlyAvailable() ? "certs renew refused; nothing more was changed (a master the progress above shows renewed keeps its"
                        + " new certificates):" : "preflight refused; nothing was changed:", "certs renew stopped after a failure:",
                    "Fix the cause and run gpuctl certs renew again: renewing twice is safe."));
            if (options.dryRun()) {
                spec.commandLine().getOut().println(ChangeOptions.DRY_RUN_COMPLETE);
                return ExitCode.OK.code();
            }
            spec.commandLine().getOut().println("certificates renewed; every certificate checked again:");
            // kubeadm does not revoke: a copy merged earlier keeps working until its old certificate's date, then stops
            err.println("gpuctl: a kubeconfig merged with `gpuctl kubeconfig --merge` still holds the old client certificate:"
                + " run `gpuctl kubeconfig --merge " + opened.file() + "` again");
            return check(inv, ssh, spec);
        }
    }
}
