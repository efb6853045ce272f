package dev.gpuctl.inventory;

import dev.gpuctl.net.Cidr;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.ScalarNode;

/** The cluster block's {@code controlPlaneEndpoint:} (a VIP on the masters, or a load balancer's address). */
final class EndpointReader {
    private final Problems problems;
    /** Where the vip (or address) is written, for the checks against the nodes. */
    private Optional<ScalarNode> endpointNode = Optional.empty();

    EndpointReader(Problems problems) { this.problems = problems; }

    Optional<ScalarNode> endpointNode() { return endpointNode; }

    /**
     * {@code { vip: IP, port: 8443 }} (keepalived + haproxy on the masters; the port is haproxy's, never the API
     * servers' 6443) or {@code { address: NAME_OR_IP, port: 6443 }} (a site load balancer). Exactly one of vip and address.
     */
    Optional<ControlPlaneEndpoint> read(Section e) {
        Optional<ScalarNode> vip = e.scalar("vip");
        Optional<ScalarNode> address = e.scalar("address");
        Optional<Integer> port = e.port("port");
        if (vip.isPresent() && address.isPresent()) {
            problems.at(address.get(), e.child("address") + ": both vip and address are given (expected one: vip for a"
                + " virtual IP that gpuctl keeps on the masters, address for a load balancer you run)");
            return Optional.empty();
        }
        if (vip.isEmpty() && address.isEmpty()) {
            if (e.value("vip").isEmpty() && e.value("address").isEmpty()) {
                problems.at(e.node(), e.path() + ": neither vip nor address is given (expected { vip: IP } for a virtual IP"
                    + " on the masters, or { address: NAME_OR_IP, port: 6443 } for a load balancer you run)");
            }
            return Optional.empty();
        }
        if (vip.isPresent()) {
            endpointNode = vip;
            Optional<byte[]> ip = Cidr.parseAddress(vip.get().getValue());
            if (ip.isEmpty()) {
                problems.at(vip.get(), e.child("vip") + ": '" + vip.get().getValue() + "' is not an IP address (expected a"
                    + " free IPv4 or IPv6 address in the masters' subnet; for a DNS name of a load balancer you run, write"
                    + " address: instead)");
                return Optional.empty();
            }
            if (port.orElse(0) == ControlPlaneEndpoint.API_SERVER_PORT) {
                problems.at(e.value("port").orElseThrow(), e.child("port") + ": 6443 is the API servers' own port on the"
                    + " masters, where haproxy cannot listen too (expected another port, or leave it out for "
                    + ControlPlaneEndpoint.VIP_PORT + ")");
                return Optional.empty();
            }
            if (e.value("port").isPresent() && port.isEmpty()) return Optional.empty();
            return Optional.of(new ControlPlaneEndpoint(ControlPlaneEndpoint.Kind.VIP, Cidr.formatAddress(ip.get()),
                port.orElse(ControlPlaneEndpoint.VIP_PORT)));
        }
        endpointNode = address;
        Optional<String> canonical = Names.canonicalAddress(address.get().getValue());
        if (canonical.isEmpty()) {
            problems.at(address.get(), e.child("address") + ": '" + address.get().getValue() + "' is not a valid address"
                + " (expected the load balancer's IP address or DNS name)");
            return Optional.empty();
        }
        if (e.value("port").isPresent() && port.isEmpty()) return Optional.empty();
        return Optional.of(new ControlPlaneEndpoint(ControlPlaneEndpoint.Kind.ADDRESS, canonical.get(),
            port.orElse(ControlPlaneEndpoint.API_SERVER_PORT)));
    }
}
