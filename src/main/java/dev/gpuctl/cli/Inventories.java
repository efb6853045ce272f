package dev.gpuctl.cli;

import dev.gpuctl.hostconf.Kube;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryException;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.SshSettings;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.remote.Remotes;
import dev.gpuctl.remote.SshOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;

/** Loads an inventory for a command; inventory errors become one message and exit code 2. */
final class Inventories {
    private Inventories() {}

    /**
     * Exit 2 when a node's identity file is missing, unreadable or not a usable key: nothing connects first. A key the
     * inventory names is refused at its place there (FILE:LINE:COLUMN of {@code ssh.identityFile}).
     */
    static void checkIdentityFiles(Path file, Collection<Node> nodes, SshOptions ssh) {
        try {
            Remotes.checkIdentityFiles(nodes, ssh);
        } catch (RemoteException e) {
            throw new GpuctlException(ExitCode.USAGE, identityRefusal(file, nodes, e.host(), e.getMessage()));
        }
    }

    /** "FILE:LINE:COLUMN: ssh.identityFile: WHY Nothing was connected to." (just "FILE: WHY …" for a key the file does not name). */
    static String identityRefusal(Path file, Collection<Node> nodes, String host, String why) {
        String place = nodes.stream().filter(n -> n.name().equals(host) && n.ssh().keyOrigin() == SshSettings.KeyOrigin.INVENTORY)
            .findFirst().flatMap(n -> InventoryLoader.identityFilePlace(file, n.name()))
            .map(p -> p + ": ssh.identityFile: ").orElse(file + ": ");
        return place + why + (why.endsWith(".") ? "" : ".") + " Nothing was connected to.";
    }

    /**
     * The master, connected, for a command that needs the cluster (gpus, job submit, join-token): when the master has
     * no {@value Kube#ADMIN_CONF} there is no cluster yet, which is exit 2 with the command to run.
     */
    static Remote openCluster(Inventory inv, SshOptions ssh, Path file) {
        Remote master = Remotes.open(inv.master(), ssh);
        try {
            String test = "test -s " + Kube.ADMIN_CONF;
            ExecResult r = master.exec(test, Duration.ofSeconds(30));
            if (r.exit() == 1) {
                throw new GpuctlException(ExitCode.USAGE, inv.master().name() + ": no cluster yet: the master has no "
                    + Kube.ADMIN_CONF + " (`" + test + "` exit 1). Create it with: gpuctl bootstrap " + file);
            }
            if (!r.ok()) {
                throw new GpuctlException(ExitCode.STEP_FAILED, inv.master().name() + ": `" + test + "` failed (exit " + r.exit()
                    + "): " + r.tail(3));
            }
            return master;
        } catch (RuntimeException e) {
            master.close();
            throw e;
        }
    }

    /**
     * The inventory, for a command that connects but does not manage a control plane of several masters yet: more than
     * one master is refused, naming what is HA-aware (bootstrap and verify) and what is not (every other command).
     */
    static Inventory load(Path file, Map<String, String> env) {
        Inventory inv = loadForPlan(file, env);
        if (inv.highlyAvailable()) {
            throw new GpuctlException(ExitCode.USAGE, file + ": " + inv.masters().size() + " masters: only bootstrap, verify, upgrade,"
                + " certs, backup, restore, remove-node and reset handle a control plane of several masters yet; this command (and"
                + " repair, drain, uncordon, gpus, job, join-token, kubeconfig) is not HA-aware yet and changed nothing");
        }
        return inv;
    }

    /**
     * The inventory for the commands that handle any number of masters: bootstrap and verify (kubeadm join
     * --control-plane), upgrade (upgrade node on the other masters), certs (every master), backup (a healthy member),
     * restore (every member restored from one snapshot with one --initial-cluster), remove-node and reset (a master's etcd
     * member removed before its reset).
     */
    static Inventory loadHaAware(Path file, Map<String, String> env) {
        return loadForPlan(file, env);
    }

    /** The inventory as written, any number of masters: what plan shows offline. */
    static Inventory loadForPlan(Path file, Map<String, String> env) {
        try {
            return InventoryLoader.load(file, env);
        } catch (InventoryException e) {
            throw usageError(file, e);
        }
    }

    /** Every problem of a file gpuctl reads (inventory, job spec), one a line, as exit 2. */
    static GpuctlException usageError(Path file, InventoryException e) {
        var errors = e.errors();
        String head = errors.size() == 1 ? "" : file + " has " + errors.size() + " problems:\n";
        return new GpuctlException(ExitCode.USAGE, head + e.getMessage());
    }
}
