package dev.gpuctl.inventory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Collects the errors of one inventory file, each at the position of the YAML node it is about. Every message is
 * made safe to print on the way in ({@link #clip}): a value quoted in it shows at most {@link #QUOTE_LIMIT}
 * characters, control characters are escaped, and the message as a whole is bounded, so that a hostile file
 * cannot make the report larger than the file by much, nor write to the terminal.
 */
public final class Problems {
    /** Characters of a quoted value that a message shows; a longer one is cut, with its length said. */
    static final int QUOTE_LIMIT = 80;
    /** Characters of one message, after quoted values are cut. */
    static final int MESSAGE_LIMIT = 1000;

    private final String file;
    private final List<InventoryError> errors = new ArrayList<>();

    Problems(String file) { this.file = file; }

    public void at(Node node, String message) { at(node.getStartMark(), message); }

    public void at(Mark mark, String message) {
        if (mark == null) {
            whole(message);
        } else {
            errors.add(new InventoryError(file, mark.getLine() + 1, mark.getColumn() + 1, clip(message)));
        }
    }

    /** A problem with the file as a whole, without a position. */
    void whole(String message) { errors.add(new InventoryError(file, 0, 0, clip(message))); }

    public boolean any() { return !errors.isEmpty(); }

    /** By position; problems found at one position keep the order they were found in. */
    List<InventoryError> sorted() {
        return errors.stream()
            .sorted(Comparator.comparingInt(InventoryError::line).thenComparingInt(InventoryError::column))
            .toList();
    }

    public static int line(Node node) { return node.getStartMark() == null ? 0 : node.getStartMark().getLine() + 1; }

    /**
     * The message as it may be printed: each span between single quotes longer than {@link #QUOTE_LIMIT} is cut to
     * its start, "…" and its length ("'xxxx…' (5000 characters)"); control characters (C0, DEL, C1), line and
     * paragraph separators and bidirectional overrides are written as {@code \n}, {@code \t} or {@code \\uXXXX};
     * a message still longer than {@link #MESSAGE_LIMIT} is cut there.
     */
    static String clip(String message) {
        StringBuilder out = new StringBuilder(Math.min(message.length(), MESSAGE_LIMIT + 40));
        int i = 0;
        while (i < message.length() && out.length() <= MESSAGE_LIMIT) {
            char c = message.charAt(i);
            int close = c == '\'' ? message.indexOf('\'', i + 1) : -1;
            if (close > 0) {
                String inner = message.substring(i + 1, close);
                int codePoints = inner.codePointCount(0, inner.length());
                out.append('\'');
                if (codePoints > QUOTE_LIMIT) {
                    escape(out, inner.substring(0, inner.offsetByCodePoints(0, QUOTE_LIMIT - 5)));
                    out.append("…' (").append(codePoints).append(" characters)");
                } else {
                    escape(out, inner);
                    out.append('\'');
                }
                i = close + 1;
            } else {
                escape(out, String.valueOf(c));
                i++;
            }
        }
        if (out.length() > MESSAGE_LIMIT) {
            out.setLength(MESSAGE_LIMIT);
            if (Character.isHighSurrogate(out.charAt(MESSAGE_LIMIT - 1))) out.setLength(MESSAGE_LIMIT - 1);
            out.append("… (message cut)");
        }
        return out.toString();
    }

    /** Appends {@code text} with every character a terminal would act on written as an escape. */
    static void escape(StringBuilder out, String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\n') out.append("\\n");
            else if (c == '\t') out.append("\\t");
            else if (c == '\r') out.append("\\r");
            else if (unsafe(c)) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
    }

    /** C0 and C1 controls, DEL, U+2028/U+2029 and the bidirectional embedding, override and isolate characters. */
    static boolean unsafe(char c) {
        return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x2028 || c == 0x2029
            || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
    }
}
