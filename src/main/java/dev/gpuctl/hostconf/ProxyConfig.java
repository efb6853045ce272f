package dev.gpuctl.hostconf;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The files that point a host at an HTTP(S) proxy: apt's (an apt.conf.d file) and a systemd drop-in with the proxy
 * environment for the container runtime and kubelet. NO_PROXY always holds what must never go through the proxy:
 * localhost, every node's name and address, the pod and service networks and the cluster's DNS domain, so that
 * kubelet, the runtime and the API server's clients reach each other directly. Pure: settings in, file text out.
 */
public final class ProxyConfig {
    /** Always direct: loopback and the cluster's DNS domain. */
    public static final List<String> ALWAYS_DIRECT = List.of("localhost", "127.0.0.1", "::1", ".svc", ".cluster.local");

    private ProxyConfig() {}

    /**
     * NO_PROXY's entries, in this order without repeats: the user's, {@link #ALWAYS_DIRECT}, the nodes' names and
     * addresses, the pod and service CIDRs.
     */
    public static List<String> noProxy(List<String> user, List<String> nodeNames, List<String> nodeAddresses, String podCidr,
                                       String serviceCidr) {
        Set<String> all = new LinkedHashSet<>(user);
        all.addAll(ALWAYS_DIRECT);
        all.addAll(nodeNames);
        all.addAll(nodeAddresses);
        all.add(podCidr);
        all.add(serviceCidr);
        return List.copyOf(all);
    }

    /** /etc/apt/apt.conf.d/ file text: Acquire::http::Proxy and Acquire::https::Proxy for the URLs given. */
    public static String aptConf(Optional<String> http, Optional<String> https) {
        StringBuilder sb = new StringBuilder("// written by gpuctl from cluster.proxy in the inventory\n");
        http.ifPresent(u -> sb.append("Acquire::http::Proxy \"").append(u).append("\";\n"));
        https.ifPresent(u -> sb.append("Acquire::https::Proxy \"").append(u).append("\";\n"));
        return sb.toString();
    }

    /**
     * A systemd drop-in ([Service] Environment=) with HTTP_PROXY, HTTPS_PROXY and NO_PROXY, upper and lower case (Go
     * programs read the upper, curl and others the lower). '%' is written '%%' (systemd's specifier character).
     */
    public static String dropIn(Optional<String> http, Optional<String> https, List<String> noProxy) {
        List<String> vars = new ArrayList<>();
        http.ifPresent(u -> vars.addAll(List.of("HTTP_PROXY=" + u, "http_proxy=" + u)));
        https.ifPresent(u -> vars.addAll(List.of("HTTPS_PROXY=" + u, "https_proxy=" + u)));
        String no = String.join(",", noProxy);
        vars.addAll(List.of("NO_PROXY=" + no, "no_proxy=" + no));
        StringBuilder sb = new StringBuilder("# written by gpuctl from cluster.proxy in the inventory\n[Service]\n");
        for (String v : vars) sb.append("Environment=\"").append(v.replace("%", "%%")).append("\"\n");
        return sb.toString();
    }

    /** The same variables as a shell prefix for one command (curl on the master): {@code env https_proxy=... curl ...}. */
    public static String envPrefix(Optional<String> http, Optional<String> https, List<String> noProxy) {
        List<String> words = new ArrayList<>(List.of("env"));
        http.ifPresent(u -> words.add(shellQuote("http_proxy=" + u)));
        https.ifPresent(u -> words.add(shellQuote("https_proxy=" + u)));
        words.add(shellQuote("no_proxy=" + String.join(",", noProxy)));
        return String.join(" ", words) + " ";
    }

    private static String shellQuote(String s) { return "'" + s.replace("'", "'\\''") + "'"; }
}
