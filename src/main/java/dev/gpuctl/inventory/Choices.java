package dev.gpuctl.inventory;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.yaml.snakeyaml.nodes.ScalarNode;

/** A value that must be one of a few words: runtime, cni, packages, role, connection. */
final class Choices {
    private Choices() {}

    static <E extends Enum<E>> Optional<E> read(Section section, String key, String what, E[] values,
                                                Function<E, String> word) {
        Optional<ScalarNode> node = section.scalar(key);
        if (node.isEmpty()) return Optional.empty();
        String text = node.get().getValue();
        Optional<E> match = Arrays.stream(values).filter(v -> word.apply(v).equals(text)).findFirst();
        if (match.isEmpty()) {
            List<String> words = Arrays.stream(values).map(word).toList();
            section.problems().at(node.get(), section.child(key) + ": unknown " + what + " '" + text
                + "' (expected one of: " + String.join(", ", words) + ")");
        }
        return match;
    }
}
