package dev.gpuctl.workflow;

import dev.gpuctl.engine.Backups;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.backup.EtcdRestore;
import dev.gpuctl.steps.BackupStep;
import dev.gpuctl.steps.EtcdMemberRestoreStep;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Phase;
import dev.gpuctl.steps.RestoreGuardStep;
import dev.gpuctl.steps.RestoreStep;
import dev.gpuctl.steps.RestoreStopStep;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * {@code gpuctl backup} and {@code gpuctl restore}, each one session on the master alone. The archive's checks and
 * rotation on this machine are {@link Backups}'.
 */
public final class BackupWorkflow {
    private BackupWorkflow() {}

    /** The backup on the master into {@code archive} (0600, NAME.sha256 beside it); {@link Backups#finish} checks it after. */
    public static Workflow<Runner.Result> backup(Path archive) {
        return Workflow.of(List.of(BackupStep.phase(archive)));
    }

    /** Where the archive of a control plane of several masters records its etcd member list. */
    public static final String MEMBERS_FILE = BackupStep.MEMBERS_FILE;

    /**
     * How a backup ended.
     *
     * @param result the session's result
     * @param member the master whose etcd member the snapshot was taken from (empty with one master: the master's own)
     */
    public record Backed(Runner.Result result, Optional<String> member) {}

    /**
     * The backup of a control plane of several masters: every master's etcd member asked (read-only), then the snapshot,
     * the member list and the rest taken on the first master whose member is healthy ({@link BackupStep#haPhases}); one
     * master: {@link #backup(Path)}'s phase.
     */
    public static Workflow<Backed> backup(Inventory inv, Path archive) {
        List<String> masters = inv.masters().stream().map(Node::name).toList();
        List<Phase> phases = inv.highlyAvailable() ? BackupStep.haPhases(archive, masters) : List.of(BackupStep.phase(archive));
        return new Workflow<>() {
            @Override public List<Phase> first() { return phases; }
            @Override public Optional<List<Phase>> next(Runner.Result done) { return Optional.empty(); }
            @Override public Backed outcome(Runner.Result last, Facts learned) {
                return new Backed(last, inv.highlyAvailable()
                    ? BackupStep.chosenMember(masters, m -> learned.get(BackupStep.healthFact(m))) : Optional.empty());
            }
        };
    }

    /**
     * The restore: read-only checks on the master ({@link RestoreGuardStep}: a live cluster is refused unless
     * {@code force}), then the control plane put back from the archive ({@link RestoreStep}: what the master had moved
     * aside first, the etcd snapshot restored, every node Ready again, the kubeconfigs rebuilt, another cluster's CA refused).
     */
    public static Workflow<Runner.Result> restore(Backups.Restorable archive, boolean force) {
        return Workflow.of(List.of(
            new Phase("restore-check", "restore: checks on the master, read-only", List.of(new RestoreGuardStep(force)), true),
            new Phase("restore", "restore the control plane", List.of(new RestoreStep(archive.upload(), archive.uploadSha256(), archive.sha256())), false)));
    }

    /**
     * The restore of a whole control plane of several masters, as etcd's disaster recovery and kubeadm's docs do it:
     * read-only checks on every master ({@link RestoreGuardStep}: its own PKI and etcd manifest still there, no healthy
     * cluster unless {@code force}); every master's control plane stopped ({@link RestoreStopStep}) before any member is
     * restored; then on each master the same snapshot restored as its member with one {@code --initial-cluster} naming
     * every master, the control plane started, and the wait (bounded, announced) until the members are exactly these,
     * all healthy, each API server ready and every node Ready ({@link EtcdMemberRestoreStep}).
     *
     * @param members every master's etcd member, in inventory order ({@link #members})
     */
    public static Workflow<Runner.Result> restoreWholeControlPlane(Backups.Restorable archive, boolean force, List<EtcdRestore.Member> members) {
        return Workflow.of(restorePhases(archive.upload(), archive.uploadSha256(), archive.sha256(), force, members));
    }

    /** {@link #restoreWholeControlPlane}'s phases: check, stop everywhere, restore each member. */
    static List<Phase> restorePhases(Path upload, String uploadSha256, String sha256, boolean force, List<EtcdRestore.Member> members) {
        return List.of(
            new Phase("restore-check", "restore: checks on every master, read-only", List.of(new RestoreGuardStep(force, true)), true),
            new Phase("restore-stop", "restore: every master's control plane stopped before any member is restored",
                List.of(new RestoreStopStep(upload, uploadSha256, sha256)), false),
            new Phase("restore-etcd", "restore: the snapshot restored as every member, with one --initial-cluster ("
                + EtcdRestore.initialCluster(members) + ")", List.of(new EtcdMemberRestoreStep(uploadSha256, sha256, members)), false));
    }

    /**
     * Every master's etcd member as kubeadm made it (the node's name, https://IP:2380), in inventory order; a master
     * whose IP the inventory does not give (an address that is a host name, no nodeIp) has none.
     */
    public static Optional<List<EtcdRestore.Member>> members(Inventory inv) {
        List<EtcdRestore.Member> out = new java.util.ArrayList<>();
        for (Node m : inv.masters()) {
            Optional<String> ip = dev.gpuctl.step.HostContext.literalNodeIp(m);
            if (ip.isEmpty()) return Optional.empty();
            out.add(EtcdRestore.Member.of(m.name(), ip.get()));
        }
        return Optional.of(List.copyOf(out));
    }
}
