package dev.gpuctl.gpu;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * MIG (Multi-Instance GPU) on a node ({@code gpuSharing.mig}): each GPU is cut into GPU instances of the named
 * profiles, each with its own memory, cache and compute slices, and the NVIDIA device plugin advertises them with its
 * MIG strategy: {@code single} (every GPU cut the same way, one profile, as many instances as fit, each advertised as
 * nvidia.com/gpu) or {@code mixed} (the listed profiles on each GPU, each advertised as nvidia.com/mig-PROFILE).
 *
 * @param profiles single: one profile; mixed: the instances of each GPU, a profile once per instance
 */
public record Mig(Strategy strategy, List<String> profiles) {
    /** A GPU instance profile's name as nvidia-smi mig -lgip prints it after "MIG ": compute slices, then memory. */
    public static final Pattern PROFILE = Pattern.compile("([1-9])g\\.([0-9]{1,4})gb");
    /** The most compute slices a MIG GPU has (A100, H100, H200: 7 GPCs). */
    public static final int MAX_SLICES = 7;

    public Mig {
        profiles = List.copyOf(profiles);
        if (profiles.isEmpty()) throw new IllegalArgumentException("no profile");
        if (strategy == Strategy.SINGLE && profiles.size() != 1) throw new IllegalArgumentException("single takes one profile");
        for (String p : profiles) if (!PROFILE.matcher(p).matches()) throw new IllegalArgumentException(p);
    }

    public enum Strategy {
        SINGLE("single"), MIXED("mixed");

        private final String key;

        Strategy(String key) { this.key = key; }

        public String key() { return key; }
    }

    /** Compute slices of a profile: 3 for "3g.71gb". */
    public static int slices(String profile) {
        Matcher m = PROFILE.matcher(profile);
        if (!m.matches()) throw new IllegalArgumentException(profile);
        return Integer.parseInt(m.group(1));
    }

    /** How many instances of each profile one GPU gets (mixed), in the order first written. */
    public Map<String, Integer> counts() {
        Map<String, Integer> c = new LinkedHashMap<>();
        for (String p : profiles) c.merge(p, 1, Integer::sum);
        return c;
    }

    /** The extended resource a MIG device of {@code profile} is advertised as under this strategy. */
    public String resource(String profile) {
        return strategy == Strategy.SINGLE ? "nvidia.com/gpu" : "nvidia.com/mig-" + profile;
    }

    /** "single 1g.18gb", "mixed 3g.71gb + 2 × 1g.18gb". */
    @Override public String toString() {
        if (strategy == Strategy.SINGLE) return "single " + profiles.get(0);
        return "mixed " + String.join(" + ", counts().entrySet().stream()
            .map(e -> e.getValue() == 1 ? e.getKey() : e.getValue() + " × " + e.getKey()).toList());
    }
}
