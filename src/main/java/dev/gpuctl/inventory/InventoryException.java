package dev.gpuctl.inventory;

import java.util.List;

/**
 * The inventory could not be loaded: every problem found, in file order. The message lists the first
 * {@link #SHOWN} of them, one a line, then "and N more problems" (a hostile file can make thousands).
 */
public class InventoryException extends RuntimeException {
    /** Problems the message lists; the rest are counted. */
    public static final int SHOWN = 50;

    private final transient List<InventoryError> errors;

    public InventoryException(List<InventoryError> errors) {
        super(message(errors));
        if (errors.isEmpty()) throw new IllegalArgumentException("an InventoryException needs an error");
        this.errors = List.copyOf(errors);
    }

    private static String message(List<InventoryError> errors) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < Math.min(SHOWN, errors.size()); i++) {
            if (i > 0) sb.append('\n');
            sb.append(errors.get(i).format());
        }
        if (errors.size() > SHOWN) sb.append("\nand ").append(errors.size() - SHOWN).append(errors.size() - SHOWN == 1 ? " more problem" : " more problems");
        return sb.toString();
    }

    public List<InventoryError> errors() { return errors; }
}
