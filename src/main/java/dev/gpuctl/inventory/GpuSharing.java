package dev.gpuctl.inventory;

import dev.gpuctl.gpu.Mig;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;

/**
 * How the NVIDIA device plugin shares each GPU of a node ({@code cluster.gpuSharing}, {@code nodes[].gpuSharing}):
 * not at all, by time-slicing, or through MPS. A shared GPU is advertised {@code replicas} times as nvidia.com/gpu,
 * so a node's allocatable is its GPU count times {@code replicas}. Or the GPUs are cut into MIG instances
 * ({@link #mig}, mode none: MIG and time-slicing or MPS on one node are refused by the inventory).
 */
public record GpuSharing(Mode mode, int replicas, Optional<Mig> mig) {
    public static final GpuSharing NONE = new GpuSharing(Mode.NONE, 1);
    /** MPS serves at most 48 client processes per GPU (Volta and later); more time-slices than that is a typo. */
    public static final int MAX_REPLICAS = 48;

    public GpuSharing(Mode mode, int replicas) { this(mode, replicas, Optional.empty()); }

    public static GpuSharing of(Mig mig) { return new GpuSharing(Mode.NONE, 1, Optional.of(mig)); }

    public GpuSharing {
        mig = mig == null ? Optional.empty() : mig;
        if (mig.isPresent() && mode != Mode.NONE) throw new IllegalArgumentException("MIG with " + mode.key());
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

    /** Time-slicing or MPS: each GPU advertised {@code replicas} times. */
    public boolean shared() { return mode != Mode.NONE; }

    /** Whether the device plugin needs a config of its own for this node (sharing or MIG). */
    public boolean configured() { return shared() || mig.isPresent(); }

    /**
     * The name of this setting's entry in the device plugin's ConfigMap, which the node label picks: "time-slicing-4",
     * "mig-single-1g.18gb", "mig-mixed-1x3g.71gb-2x1g.18gb". A MIG name holds the layout, not only the strategy, so that
     * re-cutting a node's GPUs changes its label, and the plugin's config manager restarts the plugin, which finds its
     * MIG devices only when it starts. Too long for a label value (63): the strategy and a hash of the layout.
     */
    public String configName() {
        if (mig.isPresent()) {
            Mig m = mig.get();
            String layout = m.strategy() == Mig.Strategy.SINGLE ? m.profiles().get(0) : String.join("-", m.counts().entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByKey().reversed()).map(e -> e.getValue() + "x" + e.getKey()).toList());
            String name = "mig-" + m.strategy().key() + "-" + layout;
            return name.length() <= 63 ? name : "mig-" + m.strategy().key() + "-" + sha256(layout).substring(0, 12);
        }
        return shared() ? mode.key() + "-" + replicas : "none";
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                .digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override public String toString() {
        if (mig.isPresent()) return "MIG " + mig.get();
        return shared() ? mode.key() + " × " + replicas : "none";
    }
}
