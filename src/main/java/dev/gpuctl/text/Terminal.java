package dev.gpuctl.text;

import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import java.io.FilterWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;

/**
 * Text from a host made safe for a terminal and a log: a host (or whoever controls it) can put escape sequences in
 * what it prints, its /etc/os-release or its node names, and a terminal acts on them (sets the window title, clears
 * the screen, moves the cursor to overwrite a line with a fake "ok"). Every C0 control except newline and tab, ESC,
 * DEL and every C1 control (U+0080–U+009F, which some terminals take as 8-bit CSI/OSC) is written as {@code \xHH}.
 * Everything else, valid UTF-8 text included, is left as it is; a backslash is left too, so escaping twice changes
 * nothing.
 */
public final class Terminal {
    private Terminal() {}

    /** Whether a terminal would act on {@code c}: C0 other than newline and tab, DEL, C1. */
    public static boolean acts(char c) {
        return (c < 0x20 && c != '\n' && c != '\t') || (c >= 0x7f && c <= 0x9f);
    }

    /** {@code text} with every character a terminal would act on written as {@code \xHH}; null reads as "". */
    public static String escape(String text) {
        if (text == null) return "";
        int i = 0;
        while (i < text.length() && !acts(text.charAt(i))) i++;
        if (i == text.length()) return text;
        StringBuilder out = new StringBuilder(text.length() + 16).append(text, 0, i);
        for (; i < text.length(); i++) append(out, text.charAt(i));
        return out.toString();
    }

    private static void append(StringBuilder out, char c) {
        if (acts(c)) {
            out.append("\\x").append(Character.forDigit(c >> 4, 16)).append(Character.forDigit(c & 0xf, 16));
        } else {
            out.append(c);
        }
    }

    /**
     * A writer that escapes everything written through it ({@link #escape}) before {@code out} sees it: gpuctl's own
     * output has no control characters but newline and tab, so wrapping the command line's stdout and stderr keeps every
     * host's text, wherever a message quotes it, from acting on the terminal.
     */
    public static PrintWriter escaping(PrintWriter out) {
        return new PrintWriter(new EscapingWriter(out), true);
    }

    /**
     * A stream that escapes what is written to it, a line at a time, before {@code raw} gets it: for what writes to
     * {@link System#err} itself (the SSH library's log with --verbose quotes what a server sent).
     */
    public static java.io.PrintStream escaping(java.io.OutputStream raw) {
        return new java.io.PrintStream(new java.io.OutputStream() {
            private final java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();

            @Override public synchronized void write(int b) throws IOException {
                line.write(b);
                if (b == '\n') flush();
            }

            @Override public synchronized void flush() throws IOException {
                if (line.size() > 0) {
                    raw.write(escape(line.toString(java.nio.charset.StandardCharsets.UTF_8))
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8));
                    line.reset();
                }
                raw.flush();
            }
        }, true, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static final class EscapingWriter extends FilterWriter {
        EscapingWriter(Writer out) { super(out); }

        @Override public void write(int c) throws IOException {
            if (acts((char) c)) out.write(escape(String.valueOf((char) c)));
            else out.write(c);
        }

        @Override public void write(char[] buf, int off, int len) throws IOException {
            out.write(escape(new String(buf, off, len)));
        }

        @Override public void write(String s, int off, int len) throws IOException {
            out.write(escape(s.substring(off, off + len)));
        }
    }

    /** An indenting JSON writer whose documents hold nothing a terminal acts on ({@link #JSON}). */
    public static com.fasterxml.jackson.databind.ObjectWriter jsonWriter() {
        return Json.PRETTY.with(JSON);
    }

    /**
     * Jackson's escapes for gpuctl's JSON documents: besides the C0 controls JSON itself escapes, DEL and C1 are
     * written as {@code \}{@code u00HH}, so a JSON document holds nothing a terminal acts on and stays valid JSON.
     */
    public static final CharacterEscapes JSON = new CharacterEscapes() {
        private final int[] table = table();

        private static int[] table() {
            int[] t = CharacterEscapes.standardAsciiEscapesForJSON();
            t[0x7f] = CharacterEscapes.ESCAPE_STANDARD;
            return t;
        }

        @Override public int[] getEscapeCodesForAscii() { return table; }

        @Override public SerializableString getEscapeSequence(int ch) {
            return ch >= 0x80 && ch <= 0x9f
                ? new com.fasterxml.jackson.core.io.SerializedString(String.format("\\u%04x", ch)) : null;
        }
    };
}
