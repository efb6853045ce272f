package dev.gpuctl.inventory;

import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;

/**
 * One team of {@code teams:}: its GPU quota per GPU model ({@link Inventory#gpuModels}; the single model
 * {@link #DEFAULT_MODEL} when no node names its model), the people in it (for reports and for {@code job submit}'s
 * default team), and how many idle GPUs of the other teams it may borrow: none (0), at most N, or, empty, any.
 */
public record Team(String name, Map<String, Integer> gpus, List<String> members, OptionalInt borrowingLimit) {
    /** The model of every GPU when no node gives {@code gpuModel}: the one Kueue ResourceFlavor's name. */
    public static final String DEFAULT_MODEL = "gpu";
    /** Prefix of a team's namespace: team vision's jobs run in namespace team-vision. */
    public static final String NAMESPACE_PREFIX = "team-";

    public Team {
        gpus = java.util.Collections.unmodifiableMap(new TreeMap<>(gpus));
        members = List.copyOf(members);
    }

    /** The namespace the team's jobs and its LocalQueue live in. */
    public String namespace() { return NAMESPACE_PREFIX + name; }

    /** The team's quota of {@code model}'s GPUs (0 when it has none of that model). */
    public int quota(String model) { return gpus.getOrDefault(model, 0); }

    public boolean mayBorrow() { return borrowingLimit.isEmpty() || borrowingLimit.getAsInt() > 0; }
}
