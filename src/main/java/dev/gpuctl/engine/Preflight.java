package dev.gpuctl.engine;

import dev.gpuctl.kube.ClusterIdentity;
import dev.gpuctl.hostfiles.DockerInfo;
import dev.gpuctl.hostfiles.NetworkRange;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.kube.LoadBalancer;
import dev.gpuctl.inventory.ControlPlaneEndpoint;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryPlaces;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.net.Cidr;
import dev.gpuctl.net.CidrCheck;
import dev.gpuctl.steps.ClusterIdentityStep;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.steps.PreflightStep;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Preflight's judgements across hosts, from the facts each host's probes learned: unique hostnames, machine-ids and
 * product_uuids, clock skew against this machine, and the live CIDR check over every host's routes, interface
 * addresses and docker networks. Pure: facts in, problems out. Bootstrap's preflight ({@link Runner}) refuses on
 * any of them; {@code gpuctl verify} (a {@link Runner} in VERIFY mode) shows them as checks of each host. One implementation
 * serves both.
 */
public final class Preflight {
    private Preflight() {}

    /** Largest clock difference to this machine that is accepted (certificates and leases tolerate little). */
    public static final double MAX_SKEW_SECONDS = 30;

    /** The cross-host checks, as verify names them on each host. */
    public enum Kind {
        UNIQUE("hostname, machine-id and product_uuid unique among the hosts"),
        CLOCK("clock within " + (int) MAX_SKEW_SECONDS + " s of this machine's"),
        CIDR("routes, addresses and docker networks clear of podCidr and serviceCidr"),
        IDENTITY("one cluster: the master's CA is the one the workers joined and the one this machine recorded"),
        VIP("the control-plane endpoint's VIP in a subnet of every master");

        public final String what;

        Kind(String what) { this.what = what; }
    }

    /**
     * One thing wrong across hosts.
     * @param hosts the hosts it concerns (both of a duplicate; the host a conflicting range was found on); empty
     *              when only the inventory's own ranges conflict
     */
    public record Problem(Kind kind, List<String> hosts, String message) {}

    /**
     * Interfaces the cluster itself creates: their addresses and routes inside the pod network (and kube-ipvs0's
     * service addresses inside the service network) are the cluster's own, not a conflict with it.
     */
    static final Pattern CLUSTER_DEVICES = Pattern.compile(".*\\bdev (cni0|flannel\\.\\d+|cali[0-9a-f]+|tunl0|vxlan\\.calico|vxlan-v6\\.calico|kube-ipvs0|nodelocaldns)\\b.*"
        + "|^(cni0|flannel\\.\\d+|cali[0-9a-f]+|tunl0|vxlan\\.calico|vxlan-v6\\.calico|kube-ipvs0|nodelocaldns) .*");
    private static final Pattern VIA = Pattern.compile("\\bvia (\\S+)");

    /** Every problem across these hosts, as lines for a person (bootstrap's preflight). */
    public static List<String> crossHost(Inventory inv, List<Node> nodes, Facts facts) {
        return problems(inv, nodes, facts).stream().map(Problem::message).toList();
    }

    /** Every problem across these hosts, each with the hosts it concerns. */
    public static List<Problem> problems(Inventory inv, List<Node> nodes, Facts facts) {
        List<Problem> problems = new ArrayList<>();
        problems.addAll(duplicates(nodes, facts, PreflightStep.HostIdentity::hostname, "hostname"));
        problems.addAll(duplicates(nodes, facts, PreflightStep.HostIdentity::machineId,
            "machine-id (cloned image? run: rm /etc/machine-id && systemd-machine-id-setup, then reboot)"));
        problems.addAll(duplicates(nodes, facts, PreflightStep.HostIdentity::productUuid,
            "product_uuid (/sys/class/dmi/id/product_uuid; cloned VMs: give each its own UUID)"));
        for (Node n : nodes) {
            facts.get(PreflightStep.clock(n)).ifPresent(clock -> {
                try {
                    double skew = Double.parseDouble(clock.host()) - Double.parseDouble(clock.local());
                    if (Math.abs(skew) > MAX_SKEW_SECONDS) {
                        problems.add(new Problem(Kind.CLOCK, List.of(n.name()), n.name() + ": clock is " + String.format("%+.0f", skew)
                            + " s off this machine's (more than " + (int) MAX_SKEW_SECONDS + " s): set the time (chronyc makestep)"));
                    }
                } catch (NumberFormatException e) {
                    problems.add(new Problem(Kind.CLOCK, List.of(n.name()), n.name() + ": cannot read its clock: " + clock.host()));
                }
            });
        }
        for (CidrCheck.Conflict c : CidrCheck.check(liveRanges(inv, nodes, facts))) {
            problems.add(new Problem(Kind.CIDR, c.hosts(), c.message()));
        }
        identity(inv, nodes, facts).ifPresent(problems::add);
        problems.addAll(vip(inv, nodes, facts));
        return problems;
    }

    /** Which cross-host checks a host took part in: those whose facts its preflight probes learned. */
    public static List<Kind> checkedOn(Node n, Facts facts) {
        List<Kind> kinds = new ArrayList<>();
        if (facts.get(PreflightStep.identity(n).name()).isPresent()) kinds.add(Kind.UNIQUE);
        if (facts.get(PreflightStep.clock(n).name()).isPresent()) kinds.add(Kind.CLOCK);
        if (facts.get(PreflightStep.network(n).name()).isPresent()) kinds.add(Kind.CIDR);
        if (n.isMaster() && facts.get(ClusterIdentityStep.caFact(n.name())).isPresent()) kinds.add(Kind.IDENTITY);
        return kinds;
    }

    /** {@link #checkedOn(Node, Facts)}, and the VIP check on each master whose network preflight learned. */
    public static List<Kind> checkedOn(Inventory inv, Node n, Facts facts) {
        List<Kind> kinds = new ArrayList<>(checkedOn(n, facts));
        if (n.isMaster() && vipOn(inv) && facts.get(PreflightStep.network(n)).isPresent()) kinds.add(Kind.VIP);
        return kinds;
    }

    private static boolean vipOn(Inventory inv) {
        return inv.cluster().controlPlaneEndpoint().filter(ControlPlaneEndpoint::isVip).isPresent();
    }

    /**
     * cluster.controlPlaneEndpoint.vip in a subnet of each asked master (keepalived holds it on the interface of that
     * subnet; VRRP needs the masters on one), each master whose interfaces hold no such subnet named at the VIP's
     * FILE:LINE:COLUMN with its subnets.
     */
    static List<Problem> vip(Inventory inv, List<Node> nodes, Facts facts) {
        if (!vipOn(inv)) return List.of();
        String vip = inv.controlPlaneEndpoint().host();
        String place = InventoryPlaces.vipPlace(inv.file()).orElse(inv.file().toString());
        List<Problem> problems = new ArrayList<>();
        for (Node n : nodes) {
            if (!n.isMaster()) continue;
            facts.get(PreflightStep.network(n)).ifPresent(net -> {
                try {
                    LoadBalancer.subnetFor(vip, net.addresses());
                } catch (HostConfException e) {
                    problems.add(new Problem(Kind.VIP, List.of(n.name()), place + ": cluster.controlPlaneEndpoint.vip: " + n.name()
                        + ": " + e.getMessage()));
                }
            });
        }
        return problems;
    }

    /**
     * One cluster or none ({@link ClusterIdentity#problem}), when this run asked the master for its CA: the master's CA,
     * the cluster each asked worker's kubelet.conf names, and what this machine recorded ({@link ClusterRecord}).
     */
    static Optional<Problem> identity(Inventory inv, List<Node> nodes, Facts facts) {
        Node master = inv.master();
        Optional<String> asked = facts.get(ClusterIdentityStep.caFact(master.name()));
        if (asked.isEmpty() || !(asked.get().startsWith("sha256:") || asked.get().equals("none"))) return Optional.empty();
        Map<String, Optional<ClusterIdentity.Joined>> workers = new LinkedHashMap<>();
        for (Node n : nodes) {
            if (n.isMaster()) continue;
            ClusterIdentityStep.joined(facts, n.name()).ifPresent(j -> workers.put(n.name(), j));
        }
        var seen = new ClusterIdentity.Seen(master.name(), ClusterIdentityStep.masterCa(facts, master.name()), workers,
            facts.get(ClusterRecord.RECORDED), facts.get(ClusterRecord.RECORD_FILE).orElse(".gpuctl/" + inv.cluster().name() + "/ca-cert-hash"),
            facts.get(ClusterRecord.NEWEST_BACKUP));
        return ClusterIdentity.problem(seen).map(m -> new Problem(Kind.IDENTITY, List.of(master.name()), m));
    }

    private static List<Problem> duplicates(List<Node> nodes, Facts facts, Function<PreflightStep.HostIdentity, String> field, String label) {
        Map<String, String> seen = new LinkedHashMap<>();
        List<Problem> problems = new ArrayList<>();
        for (Node n : nodes) {
            facts.get(PreflightStep.identity(n)).map(field).filter(v -> !v.isBlank()).ifPresent(v -> {
                String other = seen.putIfAbsent(v, n.name());
                if (other != null) {
                    problems.add(new Problem(Kind.UNIQUE, List.of(n.name(), other), n.name() + " and " + other + " have the same " + label + ": " + v));
                }
            });
        }
        return problems;
    }

    /**
     * The inventory's ranges, each node's IP (the inventory's, or the one its preflight found for a host name),
     * plus what every host reports: routes, interface addresses, docker networks; less what the cluster itself
     * made (see {@link #clusterOwn}).
     */
    static List<CidrCheck.LabeledRange> liveRanges(Inventory inv, List<Node> nodes, Facts facts) {
        List<CidrCheck.LabeledRange> ranges = new ArrayList<>(inv.staticRanges());
        List<String> nodeIps = new ArrayList<>();
        for (Node n : inv.nodes()) {
            Optional<String> ip = HostContext.literalNodeIp(n).or(() -> facts.get(HostContext.nodeIpFact(n)));
            ip.ifPresent(nodeIps::add);
            if (Cidr.parseAddress(n.address()).isPresent()) continue; // staticRanges has it
            ip.flatMap(Cidr::parseAddress).ifPresent(bytes -> ranges.add(new CidrCheck.LabeledRange(CidrCheck.NODE_ADDRESS,
                new Cidr(bytes, bytes.length * 8), "node " + n.name() + " IP " + ip.get(), n.name())));
        }
        Cidr pod = inv.cluster().podCidr();
        Cidr service = inv.cluster().serviceCidr();
        for (Node n : nodes) {
            facts.get(PreflightStep.network(n)).ifPresent(net -> {
                add(ranges, n, net.addresses(), CidrCheck.INTERFACE_ADDRESS, pod, service, nodeIps);
                add(ranges, n, net.routes(), CidrCheck.ROUTE, pod, service, nodeIps);
            });
            Optional<DockerInfo.Networks> docker;
            try {
                docker = facts.get(PreflightStep.docker(n));
            } catch (RuntimeException e) {
                docker = Optional.empty(); // daemon.json problems are the runtime step's to report
            }
            docker.ifPresent(d -> {
                add(ranges, n, d.reserved(), null, pod, service, nodeIps);
                add(ranges, n, d.bridge(), CidrCheck.DOCKER_BRIDGE, pod, service, nodeIps);
            });
        }
        return ranges;
    }

    /**
     * True when a range a host reports is the cluster's own doing, which a bootstrapped host legitimately has:
     * inside the pod network, an address or route on an interface the CNI made (cni0, flannel.N, cali*, tunl0,
     * vxlan.calico), a route Calico's BIRD installed ({@code proto bird}, its blackholes included), or a route via
     * another node (flannel's host-gw: the pod subnet of that node); inside the service network, kube-proxy's
     * kube-ipvs0 addresses. Anything else in or around those networks (a route someone added, a VPN, an old
     * cluster's interface in another range) is a conflict.
     */
    static boolean clusterOwn(Cidr range, String source, Cidr pod, Cidr service, List<String> nodeIps) {
        if (pod.contains(range)) {
            if (CLUSTER_DEVICES.matcher(source).matches() && !source.contains("kube-ipvs0")) return true;
            if (source.startsWith("route ") && source.matches(".* proto bird\\b.*")) return true;
            var via = VIA.matcher(source);
            if (source.startsWith("route ") && via.find() && nodeIps.contains(via.group(1))) return true;
        }
        return service.contains(range) && source.matches("(.*\\bdev )?kube-ipvs0\\b.*");
    }

    private static void add(List<CidrCheck.LabeledRange> ranges, Node n, List<NetworkRange> found, String kind,
                            Cidr pod, Cidr service, List<String> nodeIps) {
        for (NetworkRange r : found) {
            Optional<Cidr> c = Cidr.parse(r.cidr());
            if (c.isEmpty() || clusterOwn(c.get(), r.source(), pod, service, nodeIps)) continue;
            ranges.add(new CidrCheck.LabeledRange(
                kind != null ? kind : (r.kind().contains("pool") ? CidrCheck.DOCKER_ADDRESS_POOL : CidrCheck.DOCKER_BRIDGE),
                c.get(), n.name() + ": " + r.source(), n.name()));
        }
    }
}
