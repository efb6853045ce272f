package dev.gpuctl.cli;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryException;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.workflow.JobWorkflows;
import dev.gpuctl.workload.JobList;
import dev.gpuctl.workload.JobManifest;
import dev.gpuctl.workload.JobSpec;
import dev.gpuctl.workload.JobSpecLoader;
import dev.gpuctl.workload.JobSubmit;
import dev.gpuctl.workload.TeamJobs;
import dev.gpuctl.workload.KnownGpus;
import dev.gpuctl.workload.WorkloadException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "job",
    description = {"Render, submit, list, follow and delete training Jobs written as a small YAML spec.",
        "The spec names the image, command, gpus, env, dataset and checkpoint on NFS (see docs/jobs.md)."},
    subcommands = {JobCommand.Render.class, JobCommand.Submit.class, JobCommand.List.class, JobCommand.Logs.class,
        JobCommand.Delete.class})
final class JobCommand implements Runnable {
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public void run() {
        spec.commandLine().usage(spec.commandLine().getErr());
        throw new GpuctlException(ExitCode.USAGE, "job needs a subcommand: render, submit, list, logs or delete (see above)");
    }

    /** SPEC, then the inventory as every command takes it. */
    abstract static class SpecAndInventory {
        @Parameters(index = "0", paramLabel = "SPEC", description = "The job spec (YAML, see docs/jobs.md).") Path specFile;
        @Parameters(index = "1", arity = "0..1", paramLabel = "INVENTORY",
            description = "Inventory file (default: -i, $GPUCTL_INVENTORY, or ./inventory.yaml).") Path inventoryArg;
        @Option(names = {"-i", "--inventory"}, paramLabel = "FILE", description = "Inventory file.") Path inventoryOption;
        @Spec CommandSpec spec;
        @ParentCommand JobCommand job;

        /** The inventory's path as given (for commands printed to be run next). */
        Path inventoryPath() {
            InventoryOption o = new InventoryOption();
            o.positional = inventoryArg;
            o.option = inventoryOption;
            return o.resolve(job.parent.env);
        }

        Inventory inventory() { return Inventories.loadHaAware(inventoryPath(), job.parent.env); }

        JobSpec load(Inventory inv) {
            try {
                return JobSpecLoader.load(specFile, inv);
            } catch (InventoryException e) {
                throw Inventories.usageError(specFile, e);
            }
        }

        PrintWriter out() { return spec.commandLine().getOut(); }
    }

    @Command(name = "render",
        description = {"Print the batch/v1 Job for SPEC (offline; the inventory gives the NFS server and exports).",
            "gpus is checked against the GPU counts gpuctl gpus last saw, when it has run."})
    static final class Render extends SpecAndInventory implements Callable<Integer> {
        @Override public Integer call() throws IOException {
            Inventory inv = inventory();
            JobSpec job = load(inv);
            Path known = KnownGpus.file(inv);
            var seen = Files.exists(known) ? KnownGpus.parse(Files.readString(known)) : Optional.<KnownGpus.Seen>empty();
            if (seen.isPresent() && job.gpuResource().equals(JobSpec.WHOLE_GPU)) {
                JobSubmit.unfit(job, seen.get().gpus(), "as gpuctl gpus saw it at " + seen.get().time()).ifPresent(m -> {
                    throw new GpuctlException(ExitCode.USAGE, m);
                });
            } else if (!job.gpuResource().equals(JobSpec.WHOLE_GPU)) {
                spec.commandLine().getErr().println("gpuctl: gpus not checked: the recorded counts are whole GPUs, the job asks for "
                    + job.gpuResource() + " (job submit checks it against the cluster)");
            } else {
                spec.commandLine().getErr().println("gpuctl: gpus not checked against the nodes' GPU counts: none known yet"
                    + " (gpuctl gpus records them; job submit checks the cluster)");
            }
            out().print(JobManifest.render(job));
            out().flush();
            return ExitCode.OK.code();
        }
    }

    @Command(name = "submit",
        description = {"Check SPEC against the cluster, then apply its Job through the master.",
            "SPEC is checked for a node with that many GPUs and for a free name; the output says how to follow the job. A"
                + " refused job (exit 2) applies nothing."})
    static final class Submit extends SpecAndInventory implements Callable<Integer> {
        @Mixin HostOptions connection;
        @Option(names = "--team", paramLabel = "TEAM", description = "The team whose queue the job waits in (default: the team"
            + " $USER is a member of, when the inventory has teams).") String team;

        @Override public Integer call() {
            Inventory inv = inventory();
            JobSpec job = load(inv);
            String manifest;
            Optional<String> person = Optional.ofNullable(this.job.parent.env.get("USER")).filter(u -> !u.isEmpty());
            try {
                Optional<dev.gpuctl.inventory.Team> t = TeamJobs.team(inv, Optional.ofNullable(team), person);
                if (t.isPresent()) {
                    job = TeamJobs.inTeam(job, t.get());
                    JobSpec queued = job;
                    TeamJobs.beyondQuota(queued, inv, t.get()).ifPresent(m -> { throw new GpuctlException(ExitCode.USAGE, m); });
                    TeamJobs.beyondNodes(queued, inv, t.get()).ifPresent(m -> { throw new GpuctlException(ExitCode.USAGE, m); });
                    manifest = TeamJobs.render(job, t.get(), person);
                } else {
                    manifest = JobManifest.render(job);
                }
            } catch (WorkloadException e) {
                throw new GpuctlException(ExitCode.USAGE, e.getMessage(), e);
            }
            JobSpec submitted = job;
            String rendered = manifest;
            String applied = onMaster(inv, inventoryPath(), connection.ssh(), spec, on -> JobWorkflows.submit(on, submitted, rendered));
            PrintWriter out = out();
            out.print(applied.endsWith("\n") ? applied : applied + "\n");
            out.println("Follow it:");
            out.println("  gpuctl gpus " + inventoryPath());
            Path kubeconfig = inv.localKubeconfig();
            String kubectl = Files.exists(kubeconfig) ? "kubectl --kubeconfig " + kubeconfig
                : "ssh " + inv.master().ssh().user() + "@" + inv.master().address() + " "
                    + (inv.master().ssh().isRoot() ? "" : "sudo ") + Kube.KUBECTL;
            String ns = " -n " + job.namespace() + " ";
            out.println("  " + kubectl + ns + "logs -f job/" + job.name());
            out.println("  " + kubectl + ns + "get job " + job.name());
            out.flush();
            return ExitCode.OK.code();
        }
    }

    /** Commands that ask the cluster through the master: the inventory as every command takes it. */
    abstract static class OnCluster {
        @Mixin HostOptions connection;
        @Spec CommandSpec spec;
        @ParentCommand JobCommand job;

        /** The job workflow on the master, with errors mapped to exit codes: refused input 2, a failed command 3. */
        <T> T onMaster(Function<Inventory, JobWorkflows.Job<T>> workflow) {
            Path path = inventory().resolve(job.parent.env);
            return JobCommand.onMaster(Inventories.loadHaAware(path, job.parent.env), path, connection.ssh(), spec, workflow);
        }

        PrintWriter out() { return spec.commandLine().getOut(); }

        abstract InventoryOption inventory();
    }

    /** NAME of a job (a DNS label, as job specs require) and its namespace. */
    abstract static class Named extends OnCluster {
        @Parameters(index = "0", paramLabel = "NAME", description = "The job's name (name: in its spec).") String name;
        @Option(names = {"-n", "--namespace"}, paramLabel = "NS", description = "The job's namespace (default: default).") String namespace = "default";
        @Parameters(index = "1", arity = "0..1", paramLabel = "INVENTORY",
            description = "Inventory file (default: -i, $GPUCTL_INVENTORY, or ./inventory.yaml).") Path inventoryArg;
        @Option(names = {"-i", "--inventory"}, paramLabel = "FILE", description = "Inventory file.") Path inventoryOption;

        @Override InventoryOption inventory() {
            InventoryOption o = new InventoryOption();
            o.positional = inventoryArg;
            o.option = inventoryOption;
            return o;
        }

        void checkName() {
            for (String[] v : new String[][] {{"NAME", name}, {"--namespace", namespace}}) {
                if (!DNS_LABEL.matcher(v[1]).matches() || v[1].length() > 63) {
                    throw new GpuctlException(ExitCode.USAGE, v[0] + " '" + v[1] + "' is not a job " + (v[0].equals("NAME") ? "name" : "namespace")
                        + " (expected at most 63 lowercase letters, digits and '-', as in the job spec)");
                }
            }
        }
    }

    static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");

    @Command(name = "list",
        description = {"List the cluster's gpuctl jobs: namespace, name, status, GPUs, node and age.",
            "With teams: a job not yet running is Admitted (its GPUs reserved) or Pending #N in TEAM (its place in the queue).",
            "Read through the master: no kubeconfig is needed here."})
    static final class List extends OnCluster implements Callable<Integer> {
        @Mixin InventoryOption inventory;

        @Override InventoryOption inventory() { return inventory; }

        @Option(names = {"-n", "--namespace"}, paramLabel = "NS", description = "Only this namespace (default: all).") String namespace;

        @Override public Integer call() {
            if (namespace != null && !DNS_LABEL.matcher(namespace).matches()) {
                throw new GpuctlException(ExitCode.USAGE, "--namespace '" + namespace + "' is not a namespace (expected lowercase letters, digits and '-')");
            }
            out().print(JobList.text(onMaster(inv -> JobWorkflows.list(inv, namespace, !inv.teams().isEmpty()))));
            out().flush();
            return ExitCode.OK.code();
        }
    }

    @Command(name = "logs",
        description = {"Print the logs of job NAME's pod, also of a finished job.",
            "A finished job's logs stay until ttlSecondsAfterFinished deletes it; a pod still being created has no logs"
                + " yet. No such job is exit 2."})
    static final class Logs extends Named implements Callable<Integer> {
        @Option(names = "--tail", paramLabel = "LINES", description = "Only the last LINES lines.") Integer tail;

        @Override public Integer call() {
            checkName();
            if (tail != null && tail < 0) throw new GpuctlException(ExitCode.USAGE, "--tail " + tail + ": expected 0 or more lines");
            String logs = onMaster(inv -> JobWorkflows.logs(inv, namespace, name, tail == null ? OptionalInt.empty() : OptionalInt.of(tail)));
            out().print(logs.isEmpty() || logs.endsWith("\n") ? logs : logs + "\n");
            out().flush();
            return ExitCode.OK.code();
        }
    }

    @Command(name = "delete",
        description = {"Delete job NAME and its pods (propagationPolicy Background).",
            "Only jobs gpuctl submitted are deleted: another job, or no such job, is refused (exit 2)."})
    static final class Delete extends Named implements Callable<Integer> {
        @Override public Integer call() {
            checkName();
            String said = onMaster(inv -> JobWorkflows.delete(inv, namespace, name));
            out().print(said.endsWith("\n") ? said : said + "\n");
            out().flush();
            return ExitCode.OK.code();
        }
    }

    /**
     * A job workflow run on the master; its report, or a refusal (exit 2), a failed command (3), the master not
     * reached (6: its error and log).
     */
    static <T> T onMaster(Inventory inv, Path file, SshOptions ssh, CommandSpec spec, Function<Inventory, JobWorkflows.Job<T>> workflow) {
        JobWorkflows.Outcome<T> o = MasterSession.run(inv, file, ssh, spec, on -> {
            JobWorkflows.Job<T> w = workflow.apply(on);
            return new MasterSession.Planned<>(w, w.options());
        }, JobWorkflows.Outcome::result);
        if (o.error().isPresent()) {
            WorkloadException e = o.error().get();
            throw new GpuctlException(e.refused() ? ExitCode.USAGE : ExitCode.STEP_FAILED, e.getMessage(), e);
        }
        if (o.report().isEmpty()) {
            String why = o.result().failures().stream().map(f -> f.detail() + "\n  log: " + f.log()).findFirst()
                .orElse(inv.master().name() + ": the master was not asked");
            throw new GpuctlException(PhaseRuns.noConnection(o.result()) ? ExitCode.UNREACHABLE : ExitCode.STEP_FAILED, why);
        }
        return o.report().get();
    }
}
