package dev.gpuctl.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The command line's numbers, in one place: every duration option ({@code --ttl}, {@code --command-timeout},
 * {@code --wait-timeout}) takes {@link DurationValue}, every count ({@code --concurrency}) {@link PositiveInt}.
 * Zero, negative, malformed and overflowing values are refused by picocli with the option's name (exit 2).
 */
final class Converters {
    private Converters() {}

    /** The longest duration any option takes: a year (a token or a wait that long is a typo, never a plan). */
    static final Duration MAX_DURATION = Duration.ofDays(365);
    private static final Pattern PART = Pattern.compile("(\\d{1,12})([smhd])");
    private static final Pattern WHOLE = Pattern.compile("(\\d{1,12}[smhd])+");

    /**
     * A positive duration: a number and a unit (s, m, h, d), several of them summed ("1h30m"), or a bare
     * number of seconds (what the timeouts took before units). At most {@link #MAX_DURATION}.
     */
    static Duration duration(String text) {
        String t = text.strip();
        Duration d;
        if (t.matches("\\d{1,12}")) {
            d = Duration.ofSeconds(Long.parseLong(t));
        } else if (WHOLE.matcher(t).matches()) {
            d = Duration.ZERO;
            Matcher m = PART.matcher(t);
            while (m.find()) {
                long n = Long.parseLong(m.group(1));
                Duration part = switch (m.group(2)) {
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    default -> Duration.ofDays(n);
                };
                d = d.plus(part);
                if (d.compareTo(MAX_DURATION) > 0) break;
            }
        } else if (t.matches("-.*")) {
            throw new TypeConversionException("'" + text + "' is negative (expected a positive duration such as 90s, 5m or 24h)");
        } else if (t.matches("\\d{13,}.*")) {
            throw new TypeConversionException("'" + text + "' is too large (expected at most 365d)");
        } else {
            throw new TypeConversionException("'" + text + "' is not a duration (expected a number and a unit, such as"
                + " 90s, 5m, 24h or 1h30m (units: s, m, h, d); a bare number is seconds)");
        }
        if (d.isZero()) {
            throw new TypeConversionException("'" + text + "' is zero (expected a positive duration such as 90s, 5m or 24h)");
        }
        if (d.compareTo(MAX_DURATION) > 0) {
            throw new TypeConversionException("'" + text + "' is too large (expected at most 365d)");
        }
        return d;
    }

    /** A wait: a {@link #duration}, or zero ("0", "0s") for no waiting at all. */
    static Duration waitDuration(String text) {
        return text.strip().matches("0+[smhd]?") ? Duration.ZERO : duration(text);
    }

    /** A whole number, at least 1, at most 1,000,000. */
    static int positiveInt(String text) {
        String t = text.strip();
        if (t.matches("-\\d+")) throw new TypeConversionException("'" + text + "' is negative (expected a whole number, at least 1)");
        if (!t.matches("\\d+")) throw new TypeConversionException("'" + text + "' is not a whole number (expected at least 1)");
        if (t.length() > 7 || Integer.parseInt(t) > 1_000_000) {
            throw new TypeConversionException("'" + text + "' is too large (expected at most 1000000)");
        }
        int n = Integer.parseInt(t);
        if (n < 1) throw new TypeConversionException("'" + text + "' is zero (expected a whole number, at least 1)");
        return n;
    }

    /** picocli's converter for {@link #duration}. */
    static final class DurationValue implements ITypeConverter<Duration> {
        @Override public Duration convert(String value) { return duration(value); }
    }

    /** picocli's converter for {@link #waitDuration}. */
    static final class WaitValue implements ITypeConverter<Duration> {
        @Override public Duration convert(String value) { return waitDuration(value); }
    }

    /** picocli's converter for {@link #positiveInt}. */
    static final class PositiveInt implements ITypeConverter<Integer> {
        @Override public Integer convert(String value) { return positiveInt(value); }
    }
}
