package dev.gpuctl.workload;

import dev.gpuctl.inventory.NfsExport;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A training job as a person writes it ({@code gpuctl job render|submit SPEC}), validated against the inventory by
 * {@link JobSpecLoader}. Mounts name exports of the inventory's storage.nfs.
 *
 * @param gpusAt where gpus was written, "FILE:LINE:COLUMN", for problems found later (against the cluster)
 * @param env    the container's environment, in the order written (values from Secrets are in {@link Pod#secretEnv})
 * @param pod    where and how the pod runs: scheduling, resources, /dev/shm, lifetime
 * @param gpuResource the extended resource its gpus are: nvidia.com/gpu, or nvidia.com/mig-PROFILE (MIG, strategy mixed)
 */
public record JobSpec(String name, String namespace, String image, List<String> command, int gpus, String gpusAt,
                      Map<String, String> env, Optional<Mount> dataset, Optional<Mount> checkpoint, Pod pod, String gpuResource) {
    /** Whole GPUs; {@code migProfile: P} in a spec asks for MIG devices of that profile instead: nvidia.com/mig-P. */
    public static final String WHOLE_GPU = "nvidia.com/gpu";

    public JobSpec {
        command = List.copyOf(command);
        env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
    }

    /** A job asking for whole GPUs (nvidia.com/gpu). */
    public JobSpec(String name, String namespace, String image, List<String> command, int gpus, String gpusAt,
                   Map<String, String> env, Optional<Mount> dataset, Optional<Mount> checkpoint, Pod pod) {
        this(name, namespace, image, command, gpus, gpusAt, env, dataset, checkpoint, pod, WHOLE_GPU);
    }

    /** A job with none of the optional pod settings. */
    public JobSpec(String name, String namespace, String image, List<String> command, int gpus, String gpusAt,
                   Map<String, String> env, Optional<Mount> dataset, Optional<Mount> checkpoint) {
        this(name, namespace, image, command, gpus, gpusAt, env, dataset, checkpoint, Pod.NONE);
    }

    /** An NFS export mounted into the container; server is the NFS server node's address. */
    public record Mount(String server, NfsExport export, String mountPath) {}

    /** An environment variable's value taken from key {@code key} of Secret {@code secret} in the job's namespace. */
    public record SecretRef(String secret, String key) {}

    /**
     * A toleration as Kubernetes writes it; operator is "Equal" or "Exists", value and effect may be empty (effect
     * empty: every effect), seconds only with effect NoExecute.
     */
    public record Toleration(String key, String operator, String value, String effect, Optional<Long> seconds) {}

    /** CPU and memory quantities as written ("500m", "4", "16Gi"); empty when not given. */
    public record Resources(Optional<String> cpuRequest, Optional<String> cpuLimit,
                            Optional<String> memoryRequest, Optional<String> memoryLimit) {
        public static final Resources NONE = new Resources(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());

        public boolean anyRequest() { return cpuRequest.isPresent() || memoryRequest.isPresent(); }
    }

    /**
     * The optional pod settings of a job spec.
     *
     * @param args                    the container's args (after command, or the image's entrypoint)
     * @param shm                     size of a memory-backed emptyDir mounted at /dev/shm
     * @param ttlSecondsAfterFinished how long a finished Job (and its pods, its logs) stays before Kubernetes deletes it
     * @param activeDeadlineSeconds   how long the Job may run before Kubernetes stops it (status Failed, DeadlineExceeded)
     */
    public record Pod(List<String> args, Optional<String> workingDir, Map<String, String> nodeSelector,
                      List<Toleration> tolerations, List<String> imagePullSecrets, Resources resources,
                      Optional<String> shm, Map<String, SecretRef> secretEnv, Optional<Long> ttlSecondsAfterFinished,
                      Optional<Long> activeDeadlineSeconds) {
        public static final Pod NONE = new Pod(List.of(), Optional.empty(), Map.of(), List.of(), List.of(), Resources.NONE,
            Optional.empty(), Map.of(), Optional.empty(), Optional.empty());

        public Pod {
            args = List.copyOf(args);
            nodeSelector = Collections.unmodifiableMap(new LinkedHashMap<>(nodeSelector));
            tolerations = List.copyOf(tolerations);
            imagePullSecrets = List.copyOf(imagePullSecrets);
            secretEnv = Collections.unmodifiableMap(new LinkedHashMap<>(secretEnv));
        }
    }
}
