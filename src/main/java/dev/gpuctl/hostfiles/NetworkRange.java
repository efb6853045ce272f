package dev.gpuctl.hostfiles;

/**
 * An address range a host already uses, for the CIDR overlap check.
 *
 * @param kind    what it is: {@code "interface address"}, {@code "route"}, {@code "docker bridge"},
 *                {@code "docker bip"}, {@code "docker address pool"}, ...
 * @param cidr    the network in CIDR text, host bits cleared ({@code 10.1.2.0/24}); as found when it
 *                could not be read as a CIDR (the overlap check reports it)
 * @param address the text as found on the host ({@code 10.1.2.3/24} for an interface address; for
 *                a route or pool the same as {@code cidr}, or the host route's bare address)
 * @param source  where it came from, for the message a person reads ({@code "eth0 10.1.2.3/24"},
 *                {@code "route 10.0.0.0/8 dev eth0"}, {@code "daemon.json bip"})
 */
public record NetworkRange(String kind, String cidr, String address, String source) {
}
