package dev.gpuctl.net;

import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;

/**
 * An IPv4 or IPv6 network in CIDR notation. A bare address is a /32 (or /128).
 * Parsing never resolves names: only numeric literals are accepted.
 */
public record Cidr(byte[] network, int prefix) {

    public Cidr {
        network = network.clone();
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
            return !java.util.Arrays.equals(parseAddress(addr).orElseThrow(), c.network);
        }).orElse(false);
    }

    /** Numeric IPv4 dotted quad or IPv6 literal; never a DNS lookup. */
    public static Optional<byte[]> parseAddress(String addr) {
        if (addr == null || addr.isEmpty()) return Optional.empty();
        if (addr.matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}")) {
            String[] parts = addr.split("\\.");
            byte[] b = new byte[4];
            for (int i = 0; i < 4; i++) {
                int v = Integer.parseInt(parts[i]);
                if (v > 255 || (parts[i].length() > 1 && parts[i].startsWith("0"))) return Optional.empty();
                b[i] = (byte) v;
            }
            return Optional.of(b);
        }
        if (addr.contains(":") && addr.matches("[0-9A-Fa-f:.]+")) {
            try {
                // A literal with ':' is never resolved by InetAddress.
                byte[] b = InetAddress.getByName(addr).getAddress();
                return b.length == 16 ? Optional.of(b) : Optional.empty();
            } catch (UnknownHostException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
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

    public boolean isHost() { return prefix == network.length * 8; }

    @Override public boolean equals(Object o) {
        return o instanceof Cidr c && c.prefix == prefix && java.util.Arrays.equals(c.network, network);
    }

    @Override public int hashCode() { return java.util.Arrays.hashCode(network) * 31 + prefix; }

    @Override public String toString() {
        try {
            String a = InetAddress.getByAddress(network).getHostAddress();
            return a + "/" + prefix;
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
