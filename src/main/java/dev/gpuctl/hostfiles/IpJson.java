package dev.gpuctl.hostfiles;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.net.Cidr;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.text.Json;
import dev.gpuctl.text.JsonText;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Reads iproute2's JSON output ({@code ip -j addr}, {@code ip -j route}, also with {@code -6} or
 * {@code -4}) into the ranges a host already uses, for the CIDR overlap check.
 *
 * <p>Left out, because they cannot collide with a pod or service network: default routes
 * ({@code default}, {@code 0.0.0.0/0}, {@code ::/0}), loopback (interface {@code lo},
 * 127.0.0.0/8, ::1), link-local (169.254.0.0/16, fe80::/10), multicast (224.0.0.0/4, ff00::/8)
 * and the kernel's {@code local}/{@code broadcast}/{@code multicast}/{@code anycast} route types.
 * Blackhole, unreachable and prohibit routes are kept: they reserve their range as well.
 */
public final class IpJson {

    public static final String INTERFACE_ADDRESS = "interface address";
    public static final String ROUTE = "route";

    private static final List<Cidr> IGNORED = List.of(
            cidr("127.0.0.0/8"), cidr("169.254.0.0/16"), cidr("224.0.0.0/4"),
            cidr("::1/128"), cidr("fe80::/10"), cidr("ff00::/8"));
    private static final Set<String> IGNORED_ROUTE_TYPES = Set.of("local", "broadcast", "multicast", "anycast");
    /** Route origins not worth naming: the kernel's own, boot-time and static routes, DHCP's and router adverts'. */
    private static final Set<String> ROUTINE_PROTOCOLS = Set.of("kernel", "boot", "static", "dhcp", "ra");
    private static final Set<String> NO_DEVICE_ROUTE_TYPES = Set.of("blackhole", "unreachable", "prohibit", "throw");

    private IpJson() {
    }

    /**
     * Parses {@code ip -j addr}: each interface's {@code addr_info[]} {@code local}/{@code prefixlen}
     * becomes one range of kind {@value #INTERFACE_ADDRESS}, {@code cidr} the network
     * (10.1.2.3/24 gives 10.1.2.0/24), {@code address} the address as configured, {@code source}
     * like {@code "eth0 10.1.2.3/24"}. Empty objects (what {@code ip -4 -j addr} prints for
     * interfaces without such addresses) are skipped.
     *
     * @throws HostConfException when the text is not a JSON list
     */
    public static List<NetworkRange> addresses(String ipJsonAddr) {
        return addresses(list(ipJsonAddr, "ip -j addr"));
    }

    private static List<NetworkRange> addresses(JsonNode links) {
        List<NetworkRange> found = new ArrayList<>();
        for (JsonNode link : links) {
            String ifname = link.path("ifname").asText("");
            if (ifname.equals("lo")) continue;
            for (JsonNode a : link.path("addr_info")) {
                String local = a.path("local").asText("");
                if (local.isEmpty() || !a.path("prefixlen").isNumber()) continue;
                String address = local + "/" + a.path("prefixlen").asInt();
                Optional<Cidr> net = Cidr.parse(address);
                if (net.isEmpty() || ignored(net.get())) continue;
                found.add(new NetworkRange(INTERFACE_ADDRESS, format(net.get()), address,
                        (ifname.isEmpty() ? "interface" : ifname) + " " + address));
            }
        }
        return List.copyOf(found);
    }

    /**
     * Parses {@code ip -j route}: each route's {@code dst} becomes one range of kind
     * {@value #ROUTE}; a host route's bare address ({@code "10.1.2.3"}) is a /32 (or /128);
     * {@code source} as {@code ip route} shows it: {@code "route 10.0.0.0/8 via 10.1.0.1 dev eth0"},
     * {@code "route blackhole 10.9.0.0/16 proto bird"} (the protocol only when it is not the kernel's, boot's,
     * static, DHCP's or a router advert's: a routing daemon or a CNI named there tells whose route it is).
     *
     * @throws HostConfException when the text is not a JSON list
     */
    public static List<NetworkRange> routes(String ipJsonRoute) {
        return routes(list(ipJsonRoute, "ip -j route"));
    }

    /**
     * What {@code ip -j addr; echo; ip -j route} tells of a host, read once: its interface addresses and its routes.
     * A list the answer lacks (its command failed) is empty.
     */
    public record HostNetwork(List<NetworkRange> addresses, List<NetworkRange> routes) {
        public HostNetwork {
            addresses = List.copyOf(addresses);
            routes = List.copyOf(routes);
        }

        /** @throws HostConfException when a list is not JSON or not a list */
        public static HostNetwork parse(String addrThenRoute) {
            List<JsonNode> lists = JsonText.parseValues(addrThenRoute == null ? "" : addrThenRoute, "ip -j addr; ip -j route output");
            for (JsonNode l : lists) {
                if (!l.isArray()) throw new HostConfException("ip -j printed " + JsonText.typeName(l) + ", expected a list");
            }
            return new HostNetwork(lists.isEmpty() ? List.of() : IpJson.addresses(lists.get(0)),
                lists.size() < 2 ? List.of() : IpJson.routes(lists.get(1)));
        }
    }

    private static List<NetworkRange> routes(JsonNode routeList) {
        List<NetworkRange> found = new ArrayList<>();
        for (JsonNode r : routeList) {
            String dst = r.path("dst").asText("");
            String type = r.path("type").asText("unicast");
            if (dst.isEmpty() || dst.equals("default") || IGNORED_ROUTE_TYPES.contains(type)) continue;
            Optional<Cidr> net = Cidr.parse(dst);
            if (net.isEmpty() || net.get().prefix() == 0 || ignored(net.get())) continue;
            String dev = r.path("dev").asText("");
            String via = r.path("gateway").asText("");
            String proto = r.path("protocol").asText("");
            String source = "route " + (NO_DEVICE_ROUTE_TYPES.contains(type) ? type + " " : "") + dst
                    + (via.isEmpty() ? "" : " via " + via)
                    + (dev.isEmpty() ? "" : " dev " + dev)
                    + (proto.isEmpty() || ROUTINE_PROTOCOLS.contains(proto) ? "" : " proto " + proto);
            found.add(new NetworkRange(ROUTE, format(net.get()), dst, source));
        }
        return List.copyOf(found);
    }

    /**
     * The source address of {@code ip -j route get ADDRESS}: the address this host sends from towards ADDRESS
     * ({@code prefsrc}); for one of the host's own addresses, that address itself. Empty when the answer names none
     * (no route) or it is a loopback address (the name led to 127.0.1.1, say).
     *
     * @throws HostConfException when the text is not a JSON list
     */
    public static Optional<String> sourceTowards(String ipJsonRouteGet) {
        for (JsonNode r : list(ipJsonRouteGet, "ip -j route get")) {
            String src = r.path("prefsrc").asText("");
            Optional<Cidr> net = Cidr.parse(src);
            if (net.isPresent() && !cidr("127.0.0.0/8").contains(net.get()) && !cidr("::1/128").contains(net.get())) {
                return Optional.of(Cidr.formatAddress(net.get().network()));
            }
        }
        return Optional.empty();
    }

    /**
     * CIDR text of a network: dotted quad for IPv4, RFC 5952 short form for IPv6
     * ({@code fd00::/64}, not {@code fd00:0:0:0:0:0:0:0/64}).
     */
    public static String format(Cidr cidr) {
        return cidr.toString();
    }

    private static boolean ignored(Cidr net) {
        return IGNORED.stream().anyMatch(i -> i.contains(net));
    }

    private static JsonNode list(String text, String what) {
        if (text == null || text.isBlank()) return Json.MAPPER.createArrayNode();
        JsonNode root = JsonText.parse(text.strip(), what + " output", null);
        if (!root.isArray()) {
            throw new HostConfException(what + " printed " + JsonText.typeName(root) + ", expected a list");
        }
        return root;
    }

    private static Cidr cidr(String text) {
        return Cidr.parse(text).orElseThrow();
    }
}
