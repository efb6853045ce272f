package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** cluster.proxy: read, each mistake at its FILE:LINE:COLUMN, credentials never echoed. */
class ProxyInventoryTest {
    static final String NODES = """
        nodes:
          - { name: m, address: 10.0.0.1, role: master }
          - { name: w, address: 10.0.0.2, role: worker }
        """;

    static Inventory parse(String proxy) {
        return InventoryLoader.parse("inv.yaml", "cluster: { name: c, kubernetesVersion: \"1.35\", proxy: " + proxy + " }\n" + NODES,
            Path.of("/tmp"), Map.of("HOME", "/root"));
    }

    static List<String> errors(String proxy) {
        InventoryException e = assertThrows(InventoryException.class, () -> parse(proxy));
        return e.errors().stream().map(InventoryError::format).toList();
    }

    @Test void readAsWritten() {
        Proxy p = parse("{ http: http://proxy.lab:3128, https: \"http://u:p%40ss@[fd00::1]:3128/\", noProxy: [registry.internal, .lab.example, 10.0.0.0/8, '*'] }")
            .cluster().proxy().orElseThrow();
        assertEquals(Optional.of("http://proxy.lab:3128"), p.http());
        assertEquals(Optional.of("http://u:p%40ss@[fd00::1]:3128/"), p.https());
        assertEquals(List.of("registry.internal", ".lab.example", "10.0.0.0/8", "*"), p.noProxy());
        assertTrue(InventoryLoader.parse("inv.yaml", "cluster: { name: c, kubernetesVersion: \"1.35\" }\n" + NODES, Path.of("/tmp"),
            Map.of("HOME", "/root")).cluster().proxy().isEmpty());
    }

    @Test void mistakes() {
        assertEquals(List.of("inv.yaml:1:63: cluster.proxy.http: 'proxy.lab:3128' is not a proxy URL (expected http://HOST:PORT or"
            + " https://HOST:PORT, e.g. http://proxy.lab:3128, without spaces, quotes or a path)"), errors("{ http: proxy.lab:3128 }"));
        assertEquals(List.of("inv.yaml:1:64: cluster.proxy.https: 'http://u:***@proxy/x' is not a proxy URL (expected http://HOST:PORT or"
            + " https://HOST:PORT, e.g. http://proxy.lab:3128, without spaces, quotes or a path)"), errors("{ https: \"http://u:secret@proxy/x\" }"));
        assertEquals(List.of("inv.yaml:1:85: cluster.proxy.noProxy[0]: 'a b' is not a host, domain, address or CIDR"
            + " (expected e.g. registry.internal, .lab.example, 10.0.0.5 or 10.0.0.0/8)"), errors("{ http: http://p:1, noProxy: [\"a b\"] }"));
        assertEquals(List.of("inv.yaml:1:55: cluster.proxy: neither http nor https is given (expected e.g. proxy: { http:"
            + " http://proxy.lab:3128, https: http://proxy.lab:3128 }, or leave proxy out)"), errors("{ noProxy: [x] }"));
        assertTrue(errors("{ http: http://p:1, no_proxy: [x] }").get(0).contains("unknown key 'no_proxy' in cluster.proxy (write it as noProxy:)"));
        assertTrue(errors("{ http: \"http://p:99999\" }").get(0).contains("is not a proxy URL"));
    }
}
