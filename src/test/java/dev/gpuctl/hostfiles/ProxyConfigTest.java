package dev.gpuctl.hostfiles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The proxy files a host gets, byte for byte, and NO_PROXY's fixed part. */
class ProxyConfigTest {
    static final List<String> NO = ProxyConfig.noProxy(List.of("registry.internal", "10.0.0.1"), List.of("m", "w"),
        List.of("10.0.0.1", "10.0.0.2"), "10.244.0.0/16", "10.96.0.0/12");

    @Test void noProxyHasTheUsersThenLoopbackClusterDomainNodesAndNetworksOnce() {
        assertEquals(List.of("registry.internal", "10.0.0.1", "localhost", "127.0.0.1", "::1", ".svc", ".cluster.local", "m", "w",
            "10.0.0.2", "10.244.0.0/16", "10.96.0.0/12"), NO);
    }

    @Test void apt() {
        assertEquals("// written by gpuctl from cluster.proxy in the inventory\n"
            + "Acquire::http::Proxy \"http://proxy.lab:3128\";\nAcquire::https::Proxy \"http://proxy.lab:3129\";\n",
            ProxyConfig.aptConf(Optional.of("http://proxy.lab:3128"), Optional.of("http://proxy.lab:3129")));
        assertEquals("// written by gpuctl from cluster.proxy in the inventory\nAcquire::https::Proxy \"http://p:1\";\n",
            ProxyConfig.aptConf(Optional.empty(), Optional.of("http://p:1")));
    }

    /** The drop-in names the environment file and holds no value: nothing of the proxy is in the unit's properties. */
    @Test void theDropInOnlyNamesTheEnvironmentFile() {
        assertEquals("""
            # written by gpuctl from cluster.proxy in the inventory
            [Service]
            EnvironmentFile=/etc/gpuctl/proxy.env
            """, ProxyConfig.dropIn("/etc/gpuctl/proxy.env"));
    }

    /** One file for systemd and sh: single-quoted values, which both take literally ('%' and '$' stay as they are). */
    @Test void theEnvironmentFileHoldsEveryVariableSingleQuoted() {
        assertEquals("""
            # written by gpuctl from cluster.proxy in the inventory (root only: it may hold the proxy's password)
            HTTP_PROXY='http://u:p%40s$x@p:1'
            http_proxy='http://u:p%40s$x@p:1'
            NO_PROXY='localhost,.svc'
            no_proxy='localhost,.svc'
            """, ProxyConfig.environmentFile(Optional.of("http://u:p%40s$x@p:1"), Optional.empty(), List.of("localhost", ".svc")));
        assertThrows(IllegalArgumentException.class,
            () -> ProxyConfig.environmentFile(Optional.of("http://u:it's@p:1"), Optional.empty(), List.of()));
    }
}
