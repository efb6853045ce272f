package dev.gpuctl.inventory;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.Tag;

/** Reads a {@code gpuSharing: { mode, replicas }} block, for the cluster or for one node. */
final class GpuSharingReader {
    static final List<String> KEYS = List.of("mode", "replicas");

    private GpuSharingReader() {}

    /** The block under {@code key} of {@code parent}, when it is there and right; problems are reported. */
    static Optional<GpuSharing> read(Section parent, String key) {
        return parent.section(key, KEYS, Map.of("mig", "MIG is not a sharing mode gpuctl sets up yet")).flatMap(GpuSharingReader::read);
    }

    private static Optional<GpuSharing> read(Section s) {
        if (s.value("mode").isEmpty()) {
            s.missing("mode", "one of: none, time-slicing, mps");
            return Optional.empty();
        }
        Optional<GpuSharing.Mode> mode = Choices.read(s, "mode", "sharing mode", GpuSharing.Mode.values(), GpuSharing.Mode::key);
        if (mode.isEmpty()) return Optional.empty();
        Optional<ScalarNode> replicasNode = s.scalar("replicas");
        if (mode.get() == GpuSharing.Mode.NONE) {
            replicasNode.ifPresent(r -> s.problems().at(r, s.child("replicas") + ": replicas is only for mode time-slicing or"
                + " mps (mode none advertises each GPU once)"));
            return replicasNode.isPresent() ? Optional.empty() : Optional.of(GpuSharing.NONE);
        }
        if (replicasNode.isEmpty()) {
            s.missing("replicas", "how many pods may share each GPU, 2.." + GpuSharing.MAX_REPLICAS);
            return Optional.empty();
        }
        ScalarNode r = replicasNode.get();
        if (!r.getTag().equals(Tag.INT) || !r.getValue().matches("[0-9]{1,3}")
            || Integer.parseInt(r.getValue()) < 2 || Integer.parseInt(r.getValue()) > GpuSharing.MAX_REPLICAS) {
            s.problems().at(r, s.child("replicas") + ": '" + r.getValue() + "' is not a replica count (expected a whole number"
                + " 2.." + GpuSharing.MAX_REPLICAS + ": each GPU is advertised that many times; MPS serves at most "
                + GpuSharing.MAX_REPLICAS + " clients per GPU)");
            return Optional.empty();
        }
        return Optional.of(new GpuSharing(mode.get(), Integer.parseInt(r.getValue())));
    }
}
