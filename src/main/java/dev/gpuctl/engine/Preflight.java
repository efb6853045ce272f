package dev.gpuctl.engine;

import dev.gpuctl.hostconf.DockerInfo;
import dev.gpuctl.hostconf.IpJson;
import dev.gpuctl.hostconf.NetworkRange;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.net.Cidr;
import dev.gpuctl.net.CidrCheck;
import dev.gpuctl.steps.Facts;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Preflight's judgements across hosts, from the facts each host's probes learned: unique hostnames and
 * machine-ids, clock skew against this machine, and the live CIDR check over every host's routes, interface
 * addresses and docker networks. Pure: facts in, problems out.
 */
public final class Preflight {
    private Preflight() {}

    /** Largest clock difference to this machine that is accepted (certificates and leases tolerate little). */
    public static final double MAX_SKEW_SECONDS = 30;

    /** Interfaces the cluster itself creates: their routes are the pod network, not a conflict with it. */
    static final Pattern CLUSTER_DEVICES = Pattern.compile(".*\\b(dev )?(cni0|flannel\\.\\d+|cali[0-9a-f]+|tunl0|vxlan\\.calico|kube-ipvs0|nodelocaldns)\\b.*");

    public static List<String> crossHost(Inventory inv, List<Node> nodes, Facts facts) {
        List<String> problems = new ArrayList<>();
        problems.addAll(duplicates(nodes, facts, "hostname", "hostname"));
        problems.addAll(duplicates(nodes, facts, "machineId", "machine-id (cloned image? run: rm /etc/machine-id && systemd-machine-id-setup)"));
        for (Node n : nodes) {
            var clock = facts.get("host." + n.name() + ".clock");
            var local = facts.get("host." + n.name() + ".clockLocal");
            if (clock.isPresent() && local.isPresent()) {
                try {
                    double skew = Double.parseDouble(clock.get()) - Double.parseDouble(local.get());
                    if (Math.abs(skew) > MAX_SKEW_SECONDS) {
                        problems.add(n.name() + ": clock is " + String.format("%+.0f", skew) + " s off this machine's (more than "
                            + (int) MAX_SKEW_SECONDS + " s): set the time (chronyc makestep) before bootstrapping");
                    }
                } catch (NumberFormatException e) {
                    problems.add(n.name() + ": cannot read its clock: " + clock.get());
                }
            }
        }
        problems.addAll(CidrCheck.check(liveRanges(inv, nodes, facts)).stream().map(CidrCheck.Conflict::message).toList());
        return problems;
    }

    private static List<String> duplicates(List<Node> nodes, Facts facts, String key, String label) {
        Map<String, String> seen = new HashMap<>();
        List<String> problems = new ArrayList<>();
        for (Node n : nodes) {
            facts.get("host." + n.name() + "." + key).ifPresent(v -> {
                String other = seen.putIfAbsent(v, n.name());
                if (other != null) problems.add(n.name() + " and " + other + " have the same " + label + ": " + v);
            });
        }
        return problems;
    }

    /** The inventory's ranges plus what every host reports: routes, interface addresses, docker networks. */
    static List<CidrCheck.LabeledRange> liveRanges(Inventory inv, List<Node> nodes, Facts facts) {
        List<CidrCheck.LabeledRange> ranges = new ArrayList<>(CidrCheck.staticRanges(inv));
        for (Node n : nodes) {
            facts.get("host." + n.name() + ".ip").ifPresent(text -> {
                int split = text.indexOf("]\n");
                if (split < 0) return;
                add(ranges, n, IpJson.addresses(text.substring(0, split + 1)), CidrCheck.INTERFACE_ADDRESS);
                add(ranges, n, IpJson.routes(text.substring(split + 2).strip()), CidrCheck.ROUTE);
            });
            facts.get("host." + n.name() + ".docker").filter(s -> !s.isBlank()).ifPresent(text -> {
                int split = text.indexOf("\n[");
                String daemonJson = split < 0 ? "" : text.substring(0, split).strip();
                String inspect = split < 0 ? text : text.substring(split + 1);
                try {
                    if (!daemonJson.isEmpty()) add(ranges, n, DockerInfo.daemonJsonRanges(daemonJson), null);
                    add(ranges, n, DockerInfo.bridgeSubnets(inspect), CidrCheck.DOCKER_BRIDGE);
                } catch (RuntimeException e) {
                    // daemon.json problems are the runtime step's to report; the CIDR check uses what it can read
                }
            });
        }
        return ranges;
    }

    private static void add(List<CidrCheck.LabeledRange> ranges, Node n, List<NetworkRange> found, String kind) {
        for (NetworkRange r : found) {
            if (CLUSTER_DEVICES.matcher(r.source()).matches()) continue;
            Cidr.parse(r.cidr()).ifPresent(c -> ranges.add(new CidrCheck.LabeledRange(
                kind != null ? kind : (r.kind().contains("pool") ? CidrCheck.DOCKER_ADDRESS_POOL : CidrCheck.DOCKER_BRIDGE),
                c, n.name() + ": " + r.source())));
        }
    }
}
