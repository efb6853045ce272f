package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a problem message may print: values quoted up to 80 characters, controls escaped, at most 50 problems. */
class ProblemsTest {
    @Test void aShortQuotedValueIsKeptAsItIs() {
        assertEquals("cluster.name: 'gpu-lab' is fine", Problems.clip("cluster.name: 'gpu-lab' is fine"));
        String eighty = "y".repeat(80);
        assertEquals("x: '" + eighty + "' (expected z)", Problems.clip("x: '" + eighty + "' (expected z)"));
    }

    @Test void aLongQuotedValueIsCutToItsStartAndItsLength() {
        String clipped = Problems.clip("cluster.name: '" + "a".repeat(5000) + "' is not a DNS label (expected at most 63)");
        assertEquals("cluster.name: '" + "a".repeat(75) + "…' (5000 characters) is not a DNS label (expected at most 63)", clipped);
    }

    @Test void controlCharactersC1AndBidiOverridesAreEscaped() {
        assertEquals("x: 'a\\nb\\u001b[31m\\u009bc\\u202ed\\t'", Problems.clip("x: 'a\nb\u001b[31m\u009bc\u202ed\t'"));
        assertEquals("no quote \\u0007 here", Problems.clip("no quote \u0007 here"));
    }

    @Test void aMessageWithoutQuotesIsBoundedToo() {
        String clipped = Problems.clip("a number (" + "9".repeat(50_000) + ")");
        assertTrue(clipped.length() <= Problems.MESSAGE_LIMIT + 20, () -> clipped.length() + "");
        assertTrue(clipped.endsWith("… (message cut)"), clipped);
    }

    @Test void anUnpairedQuoteDoesNotHideTheRest() {
        assertEquals("it's 'b' here", Problems.clip("it's 'b' here"));
    }

    @Test void theExceptionListsFiftyProblemsAndCountsTheRest() {
        List<InventoryError> errors = new ArrayList<>();
        for (int i = 1; i <= 120; i++) errors.add(new InventoryError("inv.yaml", i, 3, "problem " + i));
        List<String> lines = new InventoryException(errors).getMessage().lines().toList();
        assertEquals(51, lines.size());
        assertEquals("inv.yaml:50:3: problem 50", lines.get(49));
        assertEquals("and 70 more problems", lines.get(50));
        assertEquals(120, new InventoryException(errors).errors().size());
        assertEquals("inv.yaml:1:3: problem 1", new InventoryException(errors.subList(0, 1)).getMessage());
        assertEquals(50, new InventoryException(errors.subList(0, 50)).getMessage().lines().count());
        assertEquals("and 1 more problem", new InventoryException(errors.subList(0, 51)).getMessage().lines().toList().get(50));
    }
}
