package dev.gpuctl.cli;

import dev.gpuctl.engine.LaptopKubeconfigs;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.workflow.KubeconfigWorkflow;
import dev.gpuctl.kube.Kubeconfig;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.kube.Kube;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "kubeconfig",
    description = {"Print the cluster's admin kubeconfig, or merge it into your kubeconfig file so that kubectl works from here.",
        "It is read from the master, so always current, and rebuilt, never copied: only the API server's https endpoint,"
            + " the CA (the one recorded at bootstrap) and the embedded client certificate and key are taken; an admin.conf"
            + " with anything else (an exec or auth-provider plugin, file paths, a token file, a proxy,"
            + " insecure-skip-tls-verify) is refused, naming the field.",
        "--merge names the cluster, user and context after the cluster, replaces entries of those names, keeps every"
            + " other context, backs the file up once (FILE.gpuctl-orig) and writes it atomically, mode 0600."})
final class KubeconfigCommand implements Callable<Integer> {
    @Mixin InventoryOption inventory;
    @Option(names = "--merge", description = "Merge into the kubeconfig file instead of printing.") boolean merge;
    @Option(names = "--context", paramLabel = "NAME", description = "The merged context's name (default: the cluster's name).") String context;
    @Option(names = "--kubeconfig", paramLabel = "FILE",
        description = "The file --merge writes (default: the first path in $KUBECONFIG, else ~/.kube/config).") Path file;
    @Mixin HostOptions connection;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() throws IOException {
        Path invFile = inventory.resolve(parent.env);
        Inventory inv = Inventories.loadHaAware(invFile, parent.env);
        String name = context == null ? inv.cluster().name() : context;
        if (!name.matches("[A-Za-z0-9]([A-Za-z0-9._@-]{0,251}[A-Za-z0-9])?")) {
            throw new GpuctlException(ExitCode.USAGE, "--context '" + name + "' is not a valid context name (expected letters,"
                + " digits, '.', '_', '@' and '-', starting and ending with a letter or digit)");
        }
        Path target = merge ? target() : null;
        if (target != null && Files.exists(target)) {
            try {
                Kubeconfig.contexts(Files.readString(target, StandardCharsets.UTF_8));
            } catch (Kubeconfig.Invalid e) {
                throw new GpuctlException(ExitCode.USAGE, target + ": " + e.getMessage() + "; nothing was written (fix the file, or"
                    + " name another with --kubeconfig)");
            }
        }
        PrintWriter err = spec.commandLine().getErr();
        // the master's connection is the session's: `cat admin.conf` goes to the master's log in .gpuctl/logs, its content not
        KubeconfigWorkflow.Read read = MasterSession.run(inv, invFile, connection.ssh(), spec, on -> new MasterSession.Planned<>(new KubeconfigWorkflow(),
            new Runner.Options(false, 1, Set.of(on.master().name()), Duration.ofSeconds(30))), KubeconfigWorkflow.Read::result);
        Runner.Result result = read.result();
        if (!result.failures().isEmpty()) {
            StringBuilder sb = new StringBuilder("the master's admin.conf could not be read:\n");
            result.failures().forEach(f -> sb.append(f.describe()));
            throw new GpuctlException(PhaseRuns.noConnection(result) ? ExitCode.UNREACHABLE : ExitCode.STEP_FAILED,
                sb + "Check the master with: gpuctl verify " + invFile);
        }
        ExecResult r = read.admin().orElseThrow();
        if (!r.ok()) {
            throw new GpuctlException(ExitCode.STEP_FAILED, inv.master().name() + ": `cat " + Kube.ADMIN_CONF + "` failed (exit "
                + r.exit() + "): " + r.tail(3) + "\nCheck the master with: gpuctl verify " + invFile);
        }
        String admin = r.stdout();
        PrintWriter out = spec.commandLine().getOut();
        LaptopKubeconfigs.ForUser made;
        try {
            made = LaptopKubeconfigs.forUser(inv.localKubeconfig(), inv.master(), inv.controlPlaneEndpoint(), inv.cluster().name(), admin, Optional.ofNullable(target), name);
        } catch (Kubeconfig.Refused | Kubeconfig.Invalid e) {
            throw new GpuctlException(ExitCode.STEP_FAILED, inv.master().name() + ": " + Kube.ADMIN_CONF + ": " + e.getMessage()
                + "\nNothing was written on this machine. Look at the master before you trust it (a master rebuilt on purpose:"
                + " gpuctl reset " + invFile + ", then gpuctl bootstrap " + invFile + ").");
        }
        made.notes().forEach(err::println);
        if (made.merged().isEmpty()) {
            out.print(made.text());
            out.flush();
            return ExitCode.OK.code();
        }
        Kubeconfig.Merged merged = made.merged().get();
        err.println("merged context " + name + " (cluster " + inv.cluster().name() + ", user " + inv.cluster().name() + "-admin) into "
            + target + (Files.exists(LaptopKubeconfigs.backup(target)) ? "; the file as it was first is " + LaptopKubeconfigs.backup(target) : ""));
        err.println(merged.setCurrentContext() ? "current context: " + name : "to use it: kubectl config use-context " + name);
        err.flush();
        return ExitCode.OK.code();
    }

    /** The file to merge into, its link followed (a link to a managed file stays a link). */
    private Path target() throws IOException {
        Path f = file;
        if (f == null) {
            String kc = parent.env.getOrDefault("KUBECONFIG", "");
            String first = kc.split(File.pathSeparator, -1)[0];
            String home = parent.env.getOrDefault("HOME", System.getProperty("user.home"));
            f = first.isEmpty() ? Path.of(home, ".kube", "config") : Path.of(first);
        }
        f = f.toAbsolutePath();
        if (Files.isSymbolicLink(f)) f = f.toRealPath();
        if (Files.exists(f, LinkOption.NOFOLLOW_LINKS) && !Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) {
            throw new GpuctlException(ExitCode.USAGE, f + " is not a regular file; nothing was written");
        }
        return f;
    }
}
