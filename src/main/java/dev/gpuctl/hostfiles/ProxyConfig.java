package dev.gpuctl.hostfiles;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The files that point a host at an HTTP(S) proxy: apt's (an apt.conf.d file), the proxy environment (one root-only
 * file, read by systemd for the container runtime and kubelet and sourced by gpuctl's downloads) and the systemd
 * drop-in that points a unit at it. NO_PROXY always holds what must never go through the proxy:
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
     * The proxy environment as one file that systemd reads ({@code EnvironmentFile=}) and a POSIX shell sources
     * ({@code set -a; . FILE}): HTTP_PROXY, HTTPS_PROXY and NO_PROXY, upper and lower case (Go programs read the upper,
     * curl and others the lower), each value in single quotes, which both take literally (no '$', '%' or backslash
     * expansion). A proxy URL, as the loader admits it, holds no quote, space or backslash; a value that does is
     * refused here rather than written wrong.
     */
    public static String environmentFile(Optional<String> http, Optional<String> https, List<String> noProxy) {
        List<String[]> vars = new ArrayList<>();
        http.ifPresent(u -> { vars.add(new String[] {"HTTP_PROXY", u}); vars.add(new String[] {"http_proxy", u}); });
        https.ifPresent(u -> { vars.add(new String[] {"HTTPS_PROXY", u}); vars.add(new String[] {"https_proxy", u}); });
        String no = String.join(",", noProxy);
        vars.add(new String[] {"NO_PROXY", no});
        vars.add(new String[] {"no_proxy", no});
        StringBuilder sb = new StringBuilder("# written by gpuctl from cluster.proxy in the inventory (root only: it may hold the proxy's password)\n");
        for (String[] v : vars) {
            if (!v[1].matches("[^'\"\\\\\\s]*")) throw new IllegalArgumentException(v[0] + " holds a quote, a backslash or a space");
            sb.append(v[0]).append("='").append(v[1]).append("'\n");
        }
        return sb.toString();
    }

    /**
     * A systemd drop-in that gives a unit the proxy environment from {@code environmentFile} (see
     * {@link #environmentFile}): the values stay out of the unit's properties, which any local user may read over D-Bus
     * ({@code systemctl show -p Environment}); the file is root's only.
     */
    public static String dropIn(String environmentFile) {
        return "# written by gpuctl from cluster.proxy in the inventory\n[Service]\nEnvironmentFile=" + environmentFile + "\n";
    }
}
