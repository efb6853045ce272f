package dev.gpuctl.workflow;

import dev.gpuctl.engine.Backups;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.steps.BackupStep;
import dev.gpuctl.steps.Phase;
import dev.gpuctl.steps.RestoreGuardStep;
import dev.gpuctl.steps.RestoreStep;
import java.nio.file.Path;
import java.util.List;

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
}
