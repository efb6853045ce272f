package dev.gpuctl.inventory;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A training job as a person writes it ({@code gpuctl job render|submit SPEC}), validated against the inventory by
 * {@link JobSpecLoader}. Mounts name exports of the inventory's storage.nfs.
 *
 * @param gpusAt where gpus was written, "FILE:LINE:COLUMN", for problems found later (against the cluster)
 * @param env    the container's environment, in the order written
 */
public record JobSpec(String name, String namespace, String image, List<String> command, int gpus, String gpusAt,
                      Map<String, String> env, Optional<Mount> dataset, Optional<Mount> checkpoint) {
    public JobSpec {
        command = List.copyOf(command);
        env = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(env));
    }

    /** An NFS export mounted into the container; server is the NFS server node's address. */
    public record Mount(String server, NfsExport export, String mountPath) {}
}
