package dev.gpuctl.net;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * An IPv4 or IPv6 network in CIDR notation. A bare address is a /32 (or /128).
 * Parsing never resolves names: only numeric literals are accepted.
 */
public record Cidr(byte[] network, int prefix) {

    public Cidr {
        network = network.clone();
        if (network.length != 4 && network.length != 16) {
            throw new IllegalArgumentException("an address has 4 or 16 bytes, not " + network.length);
        }
        int bits = network.length * 8;
        if (prefix < 0 || prefix > bits) {
            throw new IllegalArgumentException("prefix " + prefix + " out of range 0.." + bits);
        }
    }

    /** Parses "10.244.0.0/16", "10.0.0.7" (as /32), "fd00::/8". Host bits are cleared. */
    public static Optional<Cidr> parse(String text) {
        if (text == null) return Optional.empty();
        String s = text.trim();
        int slash = s.indexOf('/');
        String addr = slash < 0 ? s : s.substring(0, slash);
        Optional<byte[]> bytes = parseAddress(addr);
        if (bytes.isEmpty()) return Optional.empty();
        int bits = bytes.get().length * 8;
        int prefix = bits;
        if (slash >= 0) {
            String p = s.substring(slash + 1);
            if (!p.matches("[0-9]{1,3}")) return Optional.empty();
            prefix = Integer.parseInt(p);
            if (prefix > bits) return Optional.empty();
        }
        return Optional.of(new Cidr(mask(bytes.get(), prefix), prefix));
    }

    /** True when the CIDR text had host bits set (10.244.0.1/16): allowed, but worth a warning. */
    public static boolean hasHostBits(String text) {
        return parse(text).map(c -> {
            String addr = text.trim().split("/")[0];
            return !Arrays.equals(parseAddress(addr).orElseThrow(), c.network);
        }).orElse(false);
    }

    /** Numeric IPv4 dotted quad or IPv6 literal; never a DNS lookup. */
    public static Optional<byte[]> parseAddress(String addr) {
        if (addr == null || addr.isEmpty()) return Optional.empty();
        if (addr.indexOf('.') >= 0 && addr.indexOf(':') < 0) return parseIpv4(addr);
        if (addr.contains(":")) return parseIpv6(addr);
        return Optional.empty();
    }

    /** Dotted quad only, no leading zeros (010.0.0.1 is ambiguous: octal to some tools). */
    private static Optional<byte[]> parseIpv4(String addr) {
        if (!addr.matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}")) return Optional.empty();
        String[] parts = addr.split("\\.");
        byte[] b = new byte[4];
        for (int i = 0; i < 4; i++) {
            int v = Integer.parseInt(parts[i]);
            if (v > 255 || (parts[i].length() > 1 && parts[i].startsWith("0"))) return Optional.empty();
            b[i] = (byte) v;
        }
        return Optional.of(b);
    }

    /**
     * RFC 4291 text form: eight groups of 1-4 hex digits, at most one "::", optionally ending in a
     * dotted quad. Parsed by hand: InetAddress would look up some malformed literals in DNS.
     * No zone ids (fe80::1%eth0), no brackets.
     */
    private static Optional<byte[]> parseIpv6(String addr) {
        if (!addr.matches("[0-9A-Fa-f:.]+")) return Optional.empty();
        int gap = addr.indexOf("::");
        if (gap >= 0 && addr.indexOf("::", gap + 1) >= 0) return Optional.empty();
        List<Integer> head = new ArrayList<>();
        List<Integer> tail = new ArrayList<>();
        if (gap < 0) {
            if (!groups(addr, head, true)) return Optional.empty();
            if (head.size() != 8) return Optional.empty();
        } else {
            String before = addr.substring(0, gap);
            String after = addr.substring(gap + 2);
            if (!before.isEmpty() && !groups(before, head, false)) return Optional.empty();
            if (!after.isEmpty() && !groups(after, tail, true)) return Optional.empty();
            if (head.size() + tail.size() > 7) return Optional.empty();
        }
        byte[] b = new byte[16];
        for (int i = 0; i < head.size(); i++) putGroup(b, i, head.get(i));
        for (int i = 0; i < tail.size(); i++) putGroup(b, 8 - tail.size() + i, tail.get(i));
        return Optional.of(b);
    }

    /** Colon-separated hex groups; a dotted quad may end the address (it counts as two groups). */
    private static boolean groups(String text, List<Integer> out, boolean mayEndInIpv4) {
        String[] parts = text.split(":", -1);
        for (int i = 0; i < parts.length; i++) {
            String part = parts[i];
            if (part.contains(".")) {
                if (!mayEndInIpv4 || i != parts.length - 1) return false;
                Optional<byte[]> v4 = parseIpv4(part);
                if (v4.isEmpty()) return false;
                byte[] q = v4.get();
                out.add((q[0] & 0xff) << 8 | (q[1] & 0xff));
                out.add((q[2] & 0xff) << 8 | (q[3] & 0xff));
            } else {
                if (!part.matches("[0-9A-Fa-f]{1,4}")) return false;
                out.add(Integer.parseInt(part, 16));
            }
        }
        return true;
    }

    private static void putGroup(byte[] b, int group, int value) {
        b[2 * group] = (byte) (value >> 8);
        b[2 * group + 1] = (byte) value;
    }

    private static byte[] mask(byte[] addr, int prefix) {
        byte[] out = addr.clone();
        for (int i = 0; i < out.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - i * 8));
            out[i] &= (byte) (0xff << (8 - keep));
        }
        return out;
    }

    public boolean isIpv6() { return network.length == 16; }

    public byte[] network() { return network.clone(); }

    private BigInteger first() { return new BigInteger(1, network); }

    private BigInteger last() {
        int hostBits = network.length * 8 - prefix;
        return first().add(BigInteger.ONE.shiftLeft(hostBits)).subtract(BigInteger.ONE);
    }

    /** Two networks overlap when one contains the other (CIDR blocks never partly overlap). */
    public boolean overlaps(Cidr other) {
        if (isIpv6() != other.isIpv6()) return false;
        return first().compareTo(other.last()) <= 0 && other.first().compareTo(last()) <= 0;
    }

    public boolean contains(Cidr other) {
        if (isIpv6() != other.isIpv6()) return false;
        return first().compareTo(other.first()) <= 0 && other.last().compareTo(last()) <= 0;
    }

    @Override public boolean equals(Object o) {
        return o instanceof Cidr c && c.prefix == prefix && Arrays.equals(c.network, network);
    }

    @Override public int hashCode() { return Arrays.hashCode(network) * 31 + prefix; }

    /** "10.244.0.0/16"; IPv6 in RFC 5952 form ("fd00::/8": lowercase, longest zero run as "::"). */
    @Override public String toString() {
        return formatAddress(network) + "/" + prefix;
    }

    /** The text form of a 4- or 16-byte address, as {@link #toString()} writes it (no prefix). */
    public static String formatAddress(byte[] addr) {
        if (addr.length == 4) {
            return (addr[0] & 0xff) + "." + (addr[1] & 0xff) + "." + (addr[2] & 0xff) + "." + (addr[3] & 0xff);
        }
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) g[i] = (addr[2 * i] & 0xff) << 8 | (addr[2 * i + 1] & 0xff);
        int bestStart = -1, bestLen = 1;
        for (int i = 0; i < 8; ) {
            int j = i;
            while (j < 8 && g[j] == 0) j++;
            if (j - i > bestLen) { bestStart = i; bestLen = j - i; }
            i = Math.max(j, i + 1);
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') sb.append(':');
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }
}
