package dev.gpuctl.inventory;

import java.util.List;

/** The inventory could not be loaded: every problem found, in file order. The message lists them, one a line. */
public class InventoryException extends RuntimeException {
    private final transient List<InventoryError> errors;

    public InventoryException(List<InventoryError> errors) {
        super(String.join("\n", errors.stream().map(InventoryError::format).toList()));
        if (errors.isEmpty()) throw new IllegalArgumentException("an InventoryException needs an error");
        this.errors = List.copyOf(errors);
    }

    public List<InventoryError> errors() { return errors; }
}
