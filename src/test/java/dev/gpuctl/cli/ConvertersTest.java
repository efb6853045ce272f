package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

/** Durations and counts on the command line: units, bare numbers, and every value that must be refused. */
class ConvertersTest {
    @Test void durationsTakeUnitsAndABareNumberIsSeconds() {
        assertEquals(Duration.ofSeconds(90), Converters.duration("90s"));
        assertEquals(Duration.ofMinutes(5), Converters.duration("5m"));
        assertEquals(Duration.ofHours(24), Converters.duration("24h"));
        assertEquals(Duration.ofDays(2), Converters.duration("2d"));
        assertEquals(Duration.ofMinutes(90), Converters.duration("1h30m"));
        assertEquals(Duration.ofSeconds(600), Converters.duration("600"));
        assertEquals(Duration.ofDays(365), Converters.duration("365d"));
    }

    @Test void aWaitMayBeZeroAndIsOtherwiseADuration() {
        assertEquals(Duration.ZERO, Converters.waitDuration("0"));
        assertEquals(Duration.ZERO, Converters.waitDuration("0s"));
        assertEquals(Duration.ofMinutes(5), Converters.waitDuration("5m"));
        assertEquals(Duration.ofSeconds(120), Converters.waitDuration("120"));
        assertTrue(assertThrows(TypeConversionException.class, () -> Converters.waitDuration("-1")).getMessage().contains("is negative"));
    }

    @Test void zeroNegativeMalformedAndOverflowingDurationsAreRefused() {
        Map<String, String> refused = Map.ofEntries(
            Map.entry("0", "is zero"), Map.entry("0s", "is zero"), Map.entry("0h0m", "is zero"),
            Map.entry("-5m", "is negative"), Map.entry("-1", "is negative"),
            Map.entry("366d", "is too large"), Map.entry("9223372036854775807", "is too large"),
            Map.entry("99999999999999999999s", "is too large"), Map.entry("999999999999d", "is too large"),
            Map.entry("5x", "is not a duration"), Map.entry("1.5h", "is not a duration"),
            Map.entry("", "is not a duration"), Map.entry("h", "is not a duration"), Map.entry("5 m", "is not a duration"),
            Map.entry("500ms", "is not a duration"));
        for (var c : refused.entrySet()) {
            var e = assertThrows(TypeConversionException.class, () -> Converters.duration(c.getKey()), c.getKey());
            assertTrue(e.getMessage().startsWith("'" + c.getKey() + "' " + c.getValue()), e.getMessage());
        }
    }

    @Test void countsArePositiveInts() {
        assertEquals(1, Converters.positiveInt("1"));
        assertEquals(16, Converters.positiveInt("16"));
        for (var c : Map.of("0", "is zero", "-3", "is negative", "2147483648", "is too large", "99999999999999999999", "is too large",
                "1000001", "is too large", "four", "is not a whole number", "1.5", "is not a whole number").entrySet()) {
            var e = assertThrows(TypeConversionException.class, () -> Converters.positiveInt(c.getKey()), c.getKey());
            assertTrue(e.getMessage().startsWith("'" + c.getKey() + "' " + c.getValue()), e.getMessage());
        }
    }

    @Test void theCommandLineRefusesThemWithTheOptionsNameAndExit2() {
        String[][] cases = {
            {"join-token", "--ttl", "0"}, {"join-token", "--ttl=-5m"}, {"join-token", "--ttl", "400d"},
            {"bootstrap", "--command-timeout", "0"}, {"bootstrap", "--wait-timeout", "1e9"},
            {"bootstrap", "--concurrency", "0"}, {"bootstrap", "--concurrency=-2"}, {"bootstrap", "--concurrency", "99999999999"}};
        for (String[] args : cases) {
            CliTest.Run r = CliTest.run(args);
            assertEquals(2, r.code(), () -> String.join(" ", args) + ": " + r);
            String option = args[1].contains("=") ? args[1].substring(0, args[1].indexOf('=')) : args[1];
            assertTrue(r.err().startsWith("gpuctl: Invalid value for option '" + option + "': '"), r::toString);
            assertFalse(r.err().contains("Exception"), r::toString);
            assertEquals("", r.out(), r::toString);
        }
    }
}
