package dev.gpuctl.inventory;

import dev.gpuctl.gpu.Mig;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/** Reads a {@code gpuSharing: { mode, replicas }} or {@code gpuSharing: { mig: { strategy, profile } }} block, for the cluster or for one node. */
final class GpuSharingReader {
    static final List<String> KEYS = List.of("mode", "replicas", "mig");
    static final List<String> MIG_KEYS = List.of("strategy", "profile");

    private GpuSharingReader() {}

    /** The block under {@code key} of {@code parent}, when it is there and right; problems are reported. */
    static Optional<GpuSharing> read(Section parent, String key) {
        return parent.section(key, KEYS, Map.of()).flatMap(GpuSharingReader::read);
    }

    private static Optional<GpuSharing> read(Section s) {
        if (s.value("mig").isPresent()) return readMig(s);
        if (s.value("mode").isEmpty()) {
            s.missing("mode", "one of: none, time-slicing, mps; or a mig: { strategy, profile } block");
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

    /** {@code mig: { strategy: single | mixed, profile: NAME | [NAME, ...] }}; mode, when given, must be none. */
    private static Optional<GpuSharing> readMig(Section s) {
        Optional<GpuSharing.Mode> mode = s.value("mode").isPresent()
            ? Choices.read(s, "mode", "sharing mode", GpuSharing.Mode.values(), GpuSharing.Mode::key) : Optional.of(GpuSharing.Mode.NONE);
        if (mode.isEmpty()) return Optional.empty();
        if (mode.get() != GpuSharing.Mode.NONE) {
            s.problems().at(s.value("mode").orElseThrow(), s.child("mig") + ": MIG and " + mode.get().key() + " on the same GPUs"
                + " are not supported: a MIG instance is already a GPU of its own, with its own memory (remove mode and replicas,"
                + " or remove mig)");
            return Optional.empty();
        }
        Optional<Node> replicas = s.value("replicas");
        replicas.ifPresent(r -> s.problems().at(r, s.child("replicas") + ": replicas is only for mode time-slicing"
            + " or mps (with mig, the profile decides how many devices each GPU gives)"));
        Optional<Section> m = s.section("mig", MIG_KEYS, Map.of());
        if (m.isEmpty() || replicas.isPresent()) return Optional.empty();
        Section mig = m.get();
        if (mig.value("strategy").isEmpty()) {
            mig.missing("strategy", "single (every GPU cut the same way, advertised as nvidia.com/gpu) or mixed (the listed"
                + " profiles on each GPU, advertised as nvidia.com/mig-PROFILE)");
            return Optional.empty();
        }
        Optional<Mig.Strategy> strategy = Choices.read(mig, "strategy", "MIG strategy", Mig.Strategy.values(), Mig.Strategy::key);
        if (mig.value("profile").isEmpty()) {
            mig.missing("profile", "a GPU instance profile such as 1g.18gb (nvidia-smi mig -lgip lists a GPU's)");
            return Optional.empty();
        }
        Node value = mig.value("profile").get();
        List<ScalarNode> names = new ArrayList<>();
        if (value instanceof SequenceNode seq) {
            for (Node item : seq.getValue()) {
                if (item instanceof ScalarNode sc && Section.isPlainScalar(item)) names.add(sc);
                else mig.problems().at(item, mig.child("profile") + ": expected a profile name, got " + Section.describe(item));
            }
            if (seq.getValue().isEmpty()) mig.problems().at(seq, mig.child("profile") + ": the list is empty (expected at least one profile)");
        } else if (value instanceof ScalarNode sc && Section.isPlainScalar(value)) {
            names.add(sc);
        } else {
            mig.problems().at(value, mig.child("profile") + ": expected a profile name or a list of them, got " + Section.describe(value));
            return Optional.empty();
        }
        boolean ok = !names.isEmpty() && names.size() == (value instanceof SequenceNode seq ? seq.getValue().size() : 1);
        for (ScalarNode n : names) {
            if (!Mig.PROFILE.matcher(n.getValue()).matches()) {
                mig.problems().at(n, mig.child("profile") + ": '" + n.getValue() + "' is not a GPU instance profile name (expected"
                    + " compute slices then memory, such as 1g.18gb or 3g.71gb, as nvidia-smi mig -lgip prints them after 'MIG ';"
                    + " media-extension profiles (+me) are not supported)");
                ok = false;
            }
        }
        if (!ok || strategy.isEmpty()) return Optional.empty();
        List<String> profiles = names.stream().map(ScalarNode::getValue).toList();
        if (strategy.get() == Mig.Strategy.SINGLE && profiles.size() != 1) {
            mig.problems().at(value, mig.child("profile") + ": strategy single takes one profile (every GPU is cut into as many"
                + " instances of it as fit); for several profiles on a GPU use strategy mixed");
            return Optional.empty();
        }
        int slices = profiles.stream().mapToInt(Mig::slices).sum();
        if (slices > Mig.MAX_SLICES) {
            mig.problems().at(value, mig.child("profile") + ": the profiles take " + slices + " compute slices of a GPU, which has at"
                + " most " + Mig.MAX_SLICES + " (the number before 'g' is a profile's slices: 3g.71gb takes 3)");
            return Optional.empty();
        }
        return Optional.of(GpuSharing.of(new Mig(strategy.get(), profiles)));
    }
}
