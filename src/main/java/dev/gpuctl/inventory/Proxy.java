package dev.gpuctl.inventory;

import java.util.List;
import java.util.Optional;

/**
 * {@code cluster.proxy}: the HTTP(S) proxy the hosts reach the internet through (apt, the container runtime's image
 * pulls, kubelet, the manifest downloads). URLs are {@code http://HOST:PORT} or {@code https://HOST:PORT}, optionally
 * with credentials; {@code noProxy} holds the user's own exceptions (the cluster's are added by
 * {@code dev.gpuctl.hostfiles.ProxyConfig#noProxy}).
 */
public record Proxy(Optional<String> http, Optional<String> https, List<String> noProxy) {
    public Proxy {
        noProxy = List.copyOf(noProxy);
    }
}
