package dev.gpuctl.net;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The CIDR overlap check: pure, no I/O. The same rule serves the offline check of the inventory
 * (the inventory's {@code staticRanges()}) and preflight's live check, which adds what it reads on each host.
 *
 * <p>The rule ({@link #mustNotOverlap}): the cluster's own ranges, {@value #POD_CIDR} and
 * {@value #SERVICE_CIDR}, must not overlap any other range, nor each other. Every other pair is
 * fine: a node address inside a site network is normal (nodes live in the office LAN), two site
 * networks may overlap, and a host's routes, interface addresses and docker networks may overlap
 * each other and the site networks. IPv4 and IPv6 ranges never overlap.
 */
public final class CidrCheck {
    public static final String POD_CIDR = "podCidr";
    public static final String SERVICE_CIDR = "serviceCidr";
    public static final String NODE_ADDRESS = "node address";
    public static final String SITE_NETWORK = "site network";
    /** Kinds the live check adds: what `ip -j route`, `ip -j addr` and `docker info`/daemon.json show. */
    public static final String ROUTE = "route";
    public static final String INTERFACE_ADDRESS = "interface address";
    public static final String DOCKER_BRIDGE = "docker bridge";
    public static final String DOCKER_ADDRESS_POOL = "docker address pool";

    private static final Set<String> CLUSTER_KINDS = Set.of(POD_CIDR, SERVICE_CIDR);

    private CidrCheck() {}

    /**
     * One range and where it came from.
     * @param what the kind of range, one of this class's constants (the rule depends on it)
     * @param source where it was found, for a person: "cluster.podCidr", "node worker-2", "worker-1: ip route"
     * @param host   the node it was found on or belongs to; empty for the inventory's cluster-wide ranges
     */
    public record LabeledRange(String what, Cidr cidr, String source, String host) {
        public LabeledRange(String what, Cidr cidr, String source) {
            this(what, cidr, source, "");
        }

        @Override public String toString() { return what + " " + cidr + " (" + source + ")"; }
    }

    /** Two ranges that must not overlap, but do. */
    public record Conflict(LabeledRange first, LabeledRange second) {
        /**
         * "podCidr 10.244.0.0/16 (cluster.podCidr) overlaps 10.244.3.7/32 (node worker-2 address)": the pod or
         * service network first, named by its kind; the other range by its value and where it came from.
         */
        public String message() {
            boolean swap = !CLUSTER_KINDS.contains(first.what()) && CLUSTER_KINDS.contains(second.what());
            LabeledRange a = swap ? second : first;
            LabeledRange b = swap ? first : second;
            return a + " overlaps " + b.cidr() + " (" + b.source() + ")";
        }

        /** The nodes whose ranges take part, in order, each once (none when both are the inventory's). */
        public List<String> hosts() {
            return Stream.of(first.host(), second.host()).filter(h -> !h.isEmpty()).distinct().toList();
        }
    }

    /** True when this pair is checked: at least one side is the pod or the service network. */
    public static boolean mustNotOverlap(LabeledRange a, LabeledRange b) {
        return CLUSTER_KINDS.contains(a.what()) || CLUSTER_KINDS.contains(b.what());
    }

    /** Every pair that {@link #mustNotOverlap} and overlaps, once each, in input order. */
    public static List<Conflict> check(List<LabeledRange> ranges) {
        List<Conflict> conflicts = new ArrayList<>();
        for (int i = 0; i < ranges.size(); i++) {
            for (int j = i + 1; j < ranges.size(); j++) {
                LabeledRange a = ranges.get(i);
                LabeledRange b = ranges.get(j);
                if (mustNotOverlap(a, b) && a.cidr().overlaps(b.cidr())) conflicts.add(new Conflict(a, b));
            }
        }
        return conflicts;
    }
}
