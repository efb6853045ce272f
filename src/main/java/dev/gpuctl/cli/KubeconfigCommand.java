package dev.gpuctl.cli;

import dev.gpuctl.engine.StateDir;
import dev.gpuctl.hostconf.Kubeconfig;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.hostconf.Kube;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "kubeconfig",
    description = {"Print the cluster's admin kubeconfig (read from the master, so always current), or merge it into your"
        + " kubeconfig file so that kubectl works from this machine.",
        "--merge names the cluster, user and context after the cluster, replaces entries of those names, keeps every"
            + " other context, backs the file up once (FILE.gpuctl-orig) and writes it atomically, mode 0600."})
final class KubeconfigCommand implements Callable<Integer> {
    @Mixin InventoryOption inventory;
    @Option(names = "--merge", description = "Merge into the kubeconfig file instead of printing.") boolean merge;
    @Option(names = "--context", paramLabel = "NAME", description = "The merged context's name (default: the cluster's name).") String context;
    @Option(names = "--kubeconfig", paramLabel = "FILE",
        description = "The file --merge writes (default: the first path in $KUBECONFIG, else ~/.kube/config).") Path file;
    @Option(names = "--accept-new-host-keys", description = "Trust and record host keys seen for the first time.") boolean acceptNew;
    @picocli.CommandLine.Mixin ConnectTimeoutOption connect;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public Integer call() throws IOException {
        Path invFile = inventory.resolve(parent.env);
        Inventory inv = Inventories.load(invFile, parent.env);
        String name = context == null ? inv.cluster().name() : context;
        if (!name.matches("[A-Za-z0-9]([A-Za-z0-9._@-]{0,251}[A-Za-z0-9])?")) {
            throw new GpuctlException(ExitCode.USAGE, "--context '" + name + "' is not a valid context name (expected letters,"
                + " digits, '.', '_', '@' and '-', starting and ending with a letter or digit)");
        }
        Path target = merge ? target() : null;
        String existing = target != null && Files.exists(target) ? Files.readString(target, StandardCharsets.UTF_8) : "";
        SshOptions ssh = connect.options(acceptNew);
        Inventories.checkIdentityFiles(invFile, List.of(inv.master()), ssh);
        String admin;
        try (Remote master = Inventories.openCluster(inv, ssh, invFile)) {
            ExecResult r = master.exec("cat " + Kube.ADMIN_CONF, Duration.ofSeconds(30));
            if (!r.ok()) {
                throw new GpuctlException(ExitCode.STEP_FAILED, inv.master().name() + ": `cat " + Kube.ADMIN_CONF + "` failed (exit "
                    + r.exit() + "): " + r.tail(3) + "\nCheck the master with: gpuctl verify " + invFile);
            }
            admin = r.stdout();
        } catch (RemoteException e) {
            throw new GpuctlException(ExitCode.STEP_FAILED, e.getMessage(), e);
        }
        // the laptop's copy that bootstrap keeps, brought up to date
        StateDir.writePrivate(inv.stateDir().resolve(inv.cluster().name()).resolve("admin.conf"), admin.getBytes(StandardCharsets.UTF_8));
        PrintWriter out = spec.commandLine().getOut();
        if (!merge) {
            out.print(admin);
            out.flush();
            return ExitCode.OK.code();
        }
        Kubeconfig.Merged merged;
        try {
            merged = Kubeconfig.merge(existing, admin, inv.cluster().name(), name);
        } catch (Kubeconfig.Invalid e) {
            throw new GpuctlException(ExitCode.USAGE, target + ": " + e.getMessage() + "; nothing was written (fix the file, or"
                + " name another with --kubeconfig)");
        }
        write(target, merged.text());
        PrintWriter err = spec.commandLine().getErr();
        err.println("merged context " + name + " (cluster " + inv.cluster().name() + ", user " + inv.cluster().name() + "-admin) into "
            + target + (Files.exists(backup(target)) ? "; the file as it was first is " + backup(target) : ""));
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

    private static Path backup(Path f) { return f.resolveSibling(f.getFileName() + ".gpuctl-orig"); }

    /** Backup once, then a private temporary file renamed into place. */
    private static void write(Path f, String text) throws IOException {
        Path dir = f.getParent();
        if (!Files.isDirectory(dir)) Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        if (Files.exists(f) && !Files.exists(backup(f), LinkOption.NOFOLLOW_LINKS)) {
            Files.copy(f, backup(f), StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
            Files.setPosixFilePermissions(backup(f), PosixFilePermissions.fromString("rw-------"));
        }
        Path tmp = Files.createTempFile(dir, "." + f.getFileName(), ".gpuctl-tmp",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            Files.move(tmp, f, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
