package dev.gpuctl.inventory;

import dev.gpuctl.text.Secrets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.ScalarNode;

/** The cluster block's {@code proxy:} ({@code http}, {@code https}, {@code noProxy}), each value checked. */
final class ProxyReader {
    /** A proxy URL: scheme, optional user:password@, host (name, IPv4 or [IPv6]), optional port, optional "/". */
    private static final Pattern PROXY_URL = Pattern.compile(
        "(https?)://([^\\s/@\"'\\\\]+@)?([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?/?");
    /** A noProxy entry: a host name, a domain (leading '.'), an address or a CIDR, optionally :PORT; or '*'. */
    private static final Pattern NO_PROXY_ENTRY = Pattern.compile("\\*|\\.?[A-Za-z0-9][-A-Za-z0-9.]*(:[0-9]{1,5})?|[0-9A-Fa-f:.]+(/[0-9]{1,3})?");

    private final Problems problems;

    ProxyReader(Problems problems) { this.problems = problems; }

    Optional<Proxy> read(Section p) {
        Optional<String> http = p.scalar("http").flatMap(n -> proxyUrl(n, p.child("http")));
        Optional<String> https = p.scalar("https").flatMap(n -> proxyUrl(n, p.child("https")));
        List<String> noProxy = new ArrayList<>();
        ClusterReader.forEachScalar(p, "noProxy", (node, path) -> {
            if (NO_PROXY_ENTRY.matcher(node.getValue()).matches()) noProxy.add(node.getValue());
            else problems.at(node, path + ": '" + node.getValue() + "' is not a host, domain, address or CIDR"
                + " (expected e.g. registry.internal, .lab.example, 10.0.0.5 or 10.0.0.0/8)");
        });
        if (http.isEmpty() && https.isEmpty()) {
            if (p.value("http").isEmpty() && p.value("https").isEmpty()) {
                problems.at(p.node(), p.path() + ": neither http nor https is given (expected e.g. proxy: { http:"
                    + " http://proxy.lab:3128, https: http://proxy.lab:3128 }, or leave proxy out)");
            }
            return Optional.empty();
        }
        return Optional.of(new Proxy(http, https, noProxy));
    }

    private Optional<String> proxyUrl(ScalarNode n, String path) {
        Matcher m = PROXY_URL.matcher(n.getValue());
        if (!m.matches() || m.group(4) != null && (Integer.parseInt(m.group(4).substring(1)) < 1
            || Integer.parseInt(m.group(4).substring(1)) > 65535)) {
            problems.at(n, path + ": '" + Secrets.maskUrl(n.getValue()) + "' is not a proxy URL (expected"
                + " http://HOST:PORT or https://HOST:PORT, e.g. http://proxy.lab:3128, without spaces, quotes or a path)");
            return Optional.empty();
        }
        return Optional.of(n.getValue());
    }
}
