package dev.gpuctl.inventory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.nodes.Node;

/** Collects the errors of one inventory file, each at the position of the YAML node it is about. */
final class Problems {
    private final String file;
    private final List<InventoryError> errors = new ArrayList<>();

    Problems(String file) { this.file = file; }

    void at(Node node, String message) { at(node.getStartMark(), message); }

    void at(Mark mark, String message) {
        if (mark == null) {
            whole(message);
        } else {
            errors.add(new InventoryError(file, mark.getLine() + 1, mark.getColumn() + 1, message));
        }
    }

    /** A problem with the file as a whole, without a position. */
    void whole(String message) { errors.add(new InventoryError(file, 0, 0, message)); }

    boolean any() { return !errors.isEmpty(); }

    /** By position; problems found at one position keep the order they were found in. */
    List<InventoryError> sorted() {
        return errors.stream()
            .sorted(Comparator.comparingInt(InventoryError::line).thenComparingInt(InventoryError::column))
            .toList();
    }

    static int line(Node node) { return node.getStartMark() == null ? 0 : node.getStartMark().getLine() + 1; }
}
