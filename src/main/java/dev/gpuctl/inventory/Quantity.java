package dev.gpuctl.inventory;

import java.math.BigDecimal;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kubernetes resource quantities ("500m", "4", "1.5", "16Gi", "1e3") as the API server reads them: a non-negative
 * decimal number, then one binary suffix (Ki Mi Gi Ti Pi Ei), one decimal suffix (n u m k M G T P E) or a decimal
 * exponent (e3, E-2). Pure.
 */
public final class Quantity {
    private static final Pattern FORM = Pattern.compile("([0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][-+]?[0-9]{1,3})?");
    private static final Map<String, BigDecimal> SUFFIX = Map.ofEntries(
        Map.entry("Ki", BigDecimal.valueOf(1L << 10)), Map.entry("Mi", BigDecimal.valueOf(1L << 20)),
        Map.entry("Gi", BigDecimal.valueOf(1L << 30)), Map.entry("Ti", BigDecimal.valueOf(1L << 40)),
        Map.entry("Pi", BigDecimal.valueOf(1L << 50)), Map.entry("Ei", BigDecimal.valueOf(1L << 60)),
        Map.entry("n", new BigDecimal("1e-9")), Map.entry("u", new BigDecimal("1e-6")), Map.entry("m", new BigDecimal("1e-3")),
        Map.entry("k", new BigDecimal("1e3")), Map.entry("M", new BigDecimal("1e6")), Map.entry("G", new BigDecimal("1e9")),
        Map.entry("T", new BigDecimal("1e12")), Map.entry("P", new BigDecimal("1e15")), Map.entry("E", new BigDecimal("1e18")));

    private Quantity() {}

    /** The quantity's value in base units (cores, bytes), or empty when it is not a quantity. */
    public static Optional<BigDecimal> parse(String s) {
        Matcher m = FORM.matcher(s);
        if (!m.matches()) return Optional.empty();
        BigDecimal number = new BigDecimal(m.group(1).startsWith(".") ? "0" + m.group(1) : m.group(1));
        String suffix = m.group(2);
        if (suffix == null) return Optional.of(number);
        if (SUFFIX.containsKey(suffix)) return Optional.of(number.multiply(SUFFIX.get(suffix)));
        return Optional.of(number.scaleByPowerOfTen(Integer.parseInt(suffix.substring(1))));
    }
}
