package dev.gpuctl.hostfiles;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.net.Cidr;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.text.JsonText;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads what docker itself reports, so that a step verifies the running daemon rather than the
 * file it wrote: {@code docker info --format '{{json .}}'}, {@code docker network inspect bridge},
 * and the address ranges daemon.json reserves ({@code bip}, {@code fixed-cidr},
 * {@code default-address-pools[].base}).
 */
public final class DockerInfo {

    /**
     * The parts of {@code docker info} gpuctl checks. A field docker did not print is {@code null}.
     *
     * @param runtimes runtime name to its path (docker prints {@code {"runc":{"path":"runc"}, ...}});
     *                 a runtime without a path maps to ""
     * @param driver   the storage driver ({@code Driver}, e.g. overlay2)
     */
    public record Info(String serverVersion, String cgroupDriver, String cgroupVersion, String defaultRuntime,
                       Map<String, String> runtimes, String driver, String loggingDriver, List<String> warnings) {
        public Info {
            runtimes = Collections.unmodifiableMap(new LinkedHashMap<>(runtimes));
            warnings = List.copyOf(warnings);
        }
    }

    private DockerInfo() {
    }

    /**
     * Parses {@code docker info --format '{{json .}}'}.
     *
     * @throws HostConfException when the output is not a JSON object
     */
    public static Info parseInfo(String json) {
        JsonNode root = JsonText.parse(json.strip(), "docker info output", "is the docker daemon running?");
        if (!root.isObject()) {
            throw new HostConfException("docker info printed " + JsonText.typeName(root) + ", expected an object");
        }
        Map<String, String> runtimes = new LinkedHashMap<>();
        JsonNode rt = root.path("Runtimes");
        rt.fieldNames().forEachRemaining(name -> runtimes.put(name, rt.path(name).path("path").asText("")));
        List<String> warnings = new ArrayList<>();
        root.path("Warnings").forEach(w -> warnings.add(w.asText()));
        return new Info(text(root, "ServerVersion"), text(root, "CgroupDriver"), text(root, "CgroupVersion"),
                text(root, "DefaultRuntime"), runtimes, text(root, "Driver"), text(root, "LoggingDriver"), warnings);
    }

    /**
     * The subnets of {@code docker network inspect bridge} ({@code [{"IPAM":{"Config":[{"Subnet":...}]}}]}),
     * IPv4 and IPv6, as kind "docker bridge".
     */
    public static List<NetworkRange> bridgeSubnets(String networkInspectJson) {
        return bridgeSubnets(JsonText.parse(networkInspectJson.strip(), "docker network inspect output", null));
    }

    /**
     * What preflight's docker probe tells, read once: {@code daemon.json} (an object, absent when there is no file);
     * nothing at all when docker does not run. A list that follows ({@code docker network inspect bridge}, which earlier
     * probes also printed, in recorded logs) gives the bridge's subnets; preflight now reads the bridge from its
     * interface and route (docker0), without a second docker process.
     *
     * @param reserved the ranges daemon.json reserves ({@link #daemonJsonRanges})
     * @param bridge   the bridge network's subnets ({@link #bridgeSubnets})
     */
    public record Networks(List<NetworkRange> reserved, List<NetworkRange> bridge) {
        public Networks {
            reserved = List.copyOf(reserved);
            bridge = List.copyOf(bridge);
        }

        /** @throws HostConfException when daemon.json or the inspect output is not JSON */
        public static Networks parse(String daemonJsonThenInspect) {
            List<NetworkRange> reserved = new ArrayList<>();
            List<NetworkRange> bridge = new ArrayList<>();
            String text = daemonJsonThenInspect == null ? "" : daemonJsonThenInspect;
            for (JsonNode v : JsonText.parseValues(text, "daemon.json and docker network inspect output")) {
                if (v.isObject()) reserved.addAll(daemonJsonRanges(v));
                else bridge.addAll(bridgeSubnets(v));
            }
            return new Networks(reserved, bridge);
        }
    }

    private static List<NetworkRange> bridgeSubnets(JsonNode root) {
        List<NetworkRange> found = new ArrayList<>();
        for (JsonNode net : root.isArray() ? root : List.of(root)) {
            String name = net.path("Name").asText("bridge");
            for (JsonNode cfg : net.path("IPAM").path("Config")) {
                String subnet = cfg.path("Subnet").asText("");
                if (!subnet.isBlank()) {
                    found.add(range("docker bridge", subnet, "docker network " + name + " subnet " + subnet));
                }
            }
        }
        return List.copyOf(found);
    }

    /**
     * The ranges daemon.json reserves: {@code bip} (an address with prefix, reported as its network),
     * {@code fixed-cidr}, {@code fixed-cidr-v6} and every {@code default-address-pools[].base}.
     * Empty text is an absent file. The strings are returned as written (see {@link NetworkRange}).
     */
    public static List<NetworkRange> daemonJsonRanges(String daemonJson) {
        if (daemonJson == null || daemonJson.isBlank()) return List.of();
        return daemonJsonRanges(JsonText.parse(daemonJson, "daemon.json", "fix or move it, gpuctl does not replace it"));
    }

    private static List<NetworkRange> daemonJsonRanges(JsonNode root) {
        List<NetworkRange> found = new ArrayList<>();
        for (String key : List.of("bip", "fixed-cidr", "fixed-cidr-v6")) {
            String v = root.path(key).asText("");
            if (!v.isBlank()) found.add(range("docker " + key, v, "daemon.json " + key + " " + v));
        }
        JsonNode pools = root.path("default-address-pools");
        for (int i = 0; i < pools.size(); i++) {
            String base = pools.get(i).path("base").asText("");
            if (!base.isBlank()) {
                found.add(range("docker address pool", base,
                        "daemon.json default-address-pools[" + i + "].base " + base));
            }
        }
        return List.copyOf(found);
    }

    private static NetworkRange range(String kind, String text, String source) {
        String network = Cidr.parse(text).map(c -> IpJson.format(c)).orElse(text);
        return new NetworkRange(kind, network, text, source);
    }

    private static String text(JsonNode root, String field) {
        JsonNode n = root.get(field);
        return n == null || n.isNull() ? null : n.asText();
    }
}
