package dev.gpuctl.inventory;

/**
 * One problem in an inventory file, at a 1-based line and column; line 0 means the file as a
 * whole (it could not be read, or YAML gave no position).
 */
public record InventoryError(String file, int line, int column, String message) {
    /** "FILE:LINE:COLUMN: message", or "FILE: message" for the file as a whole. */
    public String format() {
        return line > 0 ? file + ":" + line + ":" + column + ": " + message : file + ": " + message;
    }

    @Override public String toString() { return format(); }
}
