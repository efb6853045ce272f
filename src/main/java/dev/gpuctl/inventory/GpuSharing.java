package dev.gpuctl.inventory;

/**
 * How the NVIDIA device plugin shares each GPU of a node ({@code cluster.gpuSharing}, {@code nodes[].gpuSharing}):
 * not at all, by time-slicing, or through MPS. A shared GPU is advertised {@code replicas} times as nvidia.com/gpu,
 * so a node's allocatable is its GPU count times {@code replicas}.
 */
public record GpuSharing(Mode mode, int replicas) {
    public static final GpuSharing NONE = new GpuSharing(Mode.NONE, 1);
    /** MPS serves at most 48 client processes per GPU (Volta and later); more time-slices than that is a typo. */
    public static final int MAX_REPLICAS = 48;

    public GpuSharing {
        if (mode == Mode.NONE && replicas != 1) throw new IllegalArgumentException("no sharing has 1 replica");
        if (mode != Mode.NONE && (replicas < 2 || replicas > MAX_REPLICAS)) {
            throw new IllegalArgumentException("replicas " + replicas + " out of 2.." + MAX_REPLICAS);
        }
    }

    public enum Mode {
        NONE("none"), TIME_SLICING("time-slicing"), MPS("mps");

        private final String key;

        Mode(String key) { this.key = key; }

        public String key() { return key; }
    }

    public boolean shared() { return mode != Mode.NONE; }

    /** The name of this setting's entry in the device plugin's ConfigMap, which the node label picks: "time-slicing-4". */
    public String configName() { return shared() ? mode.key() + "-" + replicas : "none"; }

    @Override public String toString() { return shared() ? mode.key() + " × " + replicas : "none"; }
}
