package dev.gpuctl.cli;

import dev.gpuctl.kube.Kube;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryException;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.inventory.InventoryPlaces;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.SshSettings;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.remote.Remotes;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.workflow.ActingMaster;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
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
            .findFirst().flatMap(n -> InventoryPlaces.identityFilePlace(file, n.name()))
            .map(p -> p + ": ssh.identityFile: ").orElse(file + ": ");
        return place + why + (why.endsWith(".") ? "" : ".") + " Nothing was connected to.";
    }

    /** The master a command acts through, connected, and the inventory with it as the first master ({@link Inventory#actingFirst}). */
    record Acting(Inventory inv, Remote master) {}

    /**
     * The master, connected, for a command that needs the cluster (gpus, job, join-token, kubeconfig, queue, usage, drain,
     * uncordon, repair): with several masters the first in inventory order that answers with its admin.conf
     * ({@link ActingMaster#choose}; those passed over are named on {@code err}). When the first master has no
     * {@value Kube#ADMIN_CONF} and no other master has one there is no cluster yet, which is exit 2 with the command to
     * run; no master reached is exit 6 with each one's reason. A single master that cannot be connected to throws
     * its {@link RemoteException}, as before.
     */
    static Acting openCluster(Inventory inv, SshOptions ssh, Path file, PrintWriter err) {
        String test = "test -s " + Kube.ADMIN_CONF;
        List<ActingMaster.Attempt> attempts = new ArrayList<>();
        for (Node m : inv.masters()) {
            Remote remote;
            try {
                remote = Remotes.open(m, ssh);
            } catch (RemoteException e) {
                if (!inv.highlyAvailable()) throw e;
                attempts.add(new ActingMaster.Attempt(m.name(), ActingMaster.State.UNREACHABLE, "unreachable (" + e.getMessage() + ")"));
                continue;
            }
            ExecResult r;
            try {
                r = remote.exec(test, Duration.ofSeconds(30));
            } catch (RuntimeException e) {
                remote.close();
                if (!inv.highlyAvailable()) throw e;
                attempts.add(new ActingMaster.Attempt(m.name(), ActingMaster.State.UNREACHABLE, "connection lost (" + e.getMessage() + ")"));
                continue;
            }
            if (r.ok()) {
                attempts.add(new ActingMaster.Attempt(m.name(), ActingMaster.State.READY, ""));
                String note = ActingMaster.passedOverNote(ActingMaster.choose(attempts));
                if (!note.isEmpty()) {
                    err.println("gpuctl: " + note);
                    err.flush();
                }
                return new Acting(inv.actingFirst(m.name()), remote);
            }
            remote.close();
            attempts.add(r.exit() == 1
                ? new ActingMaster.Attempt(m.name(), ActingMaster.State.NO_CLUSTER, "no " + Kube.ADMIN_CONF + " (`" + test + "` exit 1)")
                : new ActingMaster.Attempt(m.name(), ActingMaster.State.FAILED, "`" + test + "` failed (exit " + r.exit() + "): " + r.tail(3)));
        }
        ActingMaster.Choice c = ActingMaster.choose(attempts);
        String each = String.join("\n  ", c.passedOver());
        switch (c.refusal().orElseThrow()) {
            case NO_CLUSTER -> throw new GpuctlException(ExitCode.USAGE, inv.master().name() + ": no cluster yet: the master has no "
                + Kube.ADMIN_CONF + " (`" + test + "` exit 1)" + (inv.highlyAvailable() ? ", nor has any other master:\n  " + each + "\n" : ". ")
                + "Create it with: gpuctl bootstrap " + file);
            case UNREACHABLE -> throw new GpuctlException(ExitCode.UNREACHABLE, "no master could be reached:\n  " + each
                + "\nCheck them with: gpuctl verify " + file);
            default -> throw new GpuctlException(ExitCode.STEP_FAILED, inv.highlyAvailable()
                ? "no master answered with its " + Kube.ADMIN_CONF + ":\n  " + each + "\nCheck them with: gpuctl verify " + file
                : c.passedOver().get(0));
        }
    }

    /**
     * The inventory for the commands that handle any number of masters: bootstrap and verify (kubeadm join
     * --control-plane), upgrade (upgrade node on the other masters), certs (every master), backup (a healthy member),
     * restore (every member restored from one snapshot with one --initial-cluster), remove-node and reset (a master's etcd
     * member removed before its reset), and the commands that need one healthy master ({@link #openCluster}): every command.
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
