package dev.gpuctl.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TerminalTest {
    static final String TITLE_CLEAR = "Debian\u001b]0;title\u0007\u001b[2J";

    @Test void escMakesNoSequence() {
        assertEquals("Debian\\x1b]0;title\\x07\\x1b[2J", Terminal.escape(TITLE_CLEAR));
        assertEquals("\\x1b[1A\\x1b[2K\\x0d ok", Terminal.escape("\u001b[1A\u001b[2K\r ok"), "cursor up, erase line, CR");
        assertEquals("a\\x00b\\x08c", Terminal.escape("a\u0000b\bc"));
    }

    @Test void delAndC1AreEscapedNewlineAndTabAreKept() {
        assertEquals("x\\x7fy", Terminal.escape("x\u007fy"));
        assertEquals("\\x9b2J \\x9d0;t\\x9c \\x80 \\x9f", Terminal.escape("\u009b2J \u009d0;t\u009c \u0080 \u009f"));
        assertEquals("line 1\n\tline 2\n", Terminal.escape("line 1\n\tline 2\n"));
    }

    @Test void validUtf8AndBackslashesAreLeftAsTheyAre() {
        String text = "ünï ☃ 日本語 \uD83D\uDE80 é \u00a0 \\x1b C:\\path";
        assertSame(text, Terminal.escape(text));
        assertEquals("", Terminal.escape(null));
        String once = Terminal.escape(TITLE_CLEAR);
        assertEquals(once, Terminal.escape(once), "escaping twice changes nothing");
    }

    @Test void theEscapingWriterEscapesEveryWayOfWriting() {
        StringWriter s = new StringWriter();
        PrintWriter w = Terminal.escaping(new PrintWriter(s));
        w.println("os: " + TITLE_CLEAR);
        w.print('\u001b');
        w.write("\u009b".toCharArray(), 0, 1);
        w.write("ab\u0007cd", 1, 3);
        w.flush();
        assertEquals("os: Debian\\x1b]0;title\\x07\\x1b[2J" + System.lineSeparator() + "\\x1b\\x9bb\\x07c", s.toString());
    }

    @Test void theEscapingStreamEscapesWholeLinesOfUtf8() {
        java.io.ByteArrayOutputStream raw = new java.io.ByteArrayOutputStream();
        java.io.PrintStream p = Terminal.escaping(raw);
        p.println("banner " + TITLE_CLEAR + " ü\u009b");
        p.print("no newline \u001b");
        p.flush();
        assertEquals("banner Debian\\x1b]0;title\\x07\\x1b[2J ü\\x9b" + System.lineSeparator() + "no newline \\x1b",
            raw.toString(java.nio.charset.StandardCharsets.UTF_8));
    }

    @Test void jsonDocumentsHoldNoControlAndStayJson() throws Exception {
        var m = Terminal.jsonWriter();
        String doc = m.writeValueAsString(Map.of("os", TITLE_CLEAR + "\u009b\u007f ü"));
        for (char c : doc.toCharArray()) assertFalse(Terminal.acts(c) , "raw control in " + doc);
        assertEquals(TITLE_CLEAR + "\u009b\u007f ü", Json.MAPPER.readTree(doc).get("os").asText());
    }
}
