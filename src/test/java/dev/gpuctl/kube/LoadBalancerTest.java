package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.text.HostConfException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** keepalived, its check script and haproxy, as kubeadm's software load balancing describes them. */
class LoadBalancerTest {
    static final String IP_ADDR = """
        [{"ifindex":1,"ifname":"lo","addr_info":[{"family":"inet","local":"127.0.0.1","prefixlen":8}]},
         {"ifindex":2,"ifname":"host0","addr_info":[{"family":"inet","local":"10.213.5.10","prefixlen":24},
                                                   {"family":"inet6","local":"fe80::1","prefixlen":64}]},
         {"ifindex":3,"ifname":"eth1","addr_info":[{"family":"inet","local":"192.168.7.2","prefixlen":23}]}]
        """;

    @Test void theVipGoesOnTheInterfaceWhoseSubnetHoldsIt() {
        assertEquals(new LoadBalancer.Subnet("host0", 24), LoadBalancer.subnetFor("10.213.5.100", IP_ADDR));
        assertEquals(new LoadBalancer.Subnet("eth1", 23), LoadBalancer.subnetFor("192.168.6.9", IP_ADDR));
        HostConfException e = assertThrows(HostConfException.class, () -> LoadBalancer.subnetFor("10.9.9.9", IP_ADDR));
        assertEquals("the VIP 10.9.9.9 is in none of this master's subnets (host0 10.213.5.10/24, eth1 192.168.7.2/23): keepalived"
            + " can only hold it on a subnet the master is on (expected cluster.controlPlaneEndpoint.vip to be a free address in the"
            + " masters' subnet)", e.getMessage());
    }

    @Test void theHolderSeesTheVipItselfAndStillFindsTheSameInterface() {
        String holding = IP_ADDR.replace("\"prefixlen\":24},", "\"prefixlen\":24},{\"family\":\"inet\",\"local\":\"10.213.5.100\",\"prefixlen\":24},");
        assertEquals(new LoadBalancer.Subnet("host0", 24), LoadBalancer.subnetFor("10.213.5.100", holding));
    }

    @Test void keepalivedStartsTheFirstMasterAsMasterAndTracksTheApiServer() {
        String first = LoadBalancer.keepalivedConf(new LoadBalancer.Vrrp("ha", "10.213.5.100", "host0", "24", true, "10.213.5.10"));
        String other = LoadBalancer.keepalivedConf(new LoadBalancer.Vrrp("ha", "10.213.5.100", "host0", "24", false, "10.213.5.11"));
        assertTrue(first.contains("\n    state MASTER\n    interface host0\n"), first);
        assertTrue(first.contains("\n    priority 101\n"), first);
        assertTrue(other.contains("\n    state BACKUP\n"), other);
        assertTrue(other.contains("\n    priority 100\n"), other);
        assertTrue(first.contains("\n        10.213.5.100/24\n"), first);
        assertTrue(first.contains("script \"/etc/keepalived/check_apiserver.sh\"\n    interval 3\n    weight -2\n"), first);
        assertTrue(first.contains("track_script {\n        check_apiserver\n"), first);
        int id = LoadBalancer.routerId("ha");
        assertTrue(id >= 1 && id <= 255);
        assertTrue(first.contains("virtual_router_id " + id + "\n") && other.contains("virtual_router_id " + id + "\n"));
        assertNotEquals(LoadBalancer.authPass("ha"), LoadBalancer.authPass("hb"));
        assertEquals(8, LoadBalancer.authPass("ha").length());
    }

    @Test void theCheckAsksThisMastersApiServer() {
        assertEquals("""
            #!/bin/sh
            # Written by gpuctl: keepalived's check of this master's API server (see keepalived.conf).
            curl -sfk --max-time 2 -o /dev/null https://10.213.5.10:6443/readyz || { echo "*** Error GET https://10.213.5.10:6443/readyz" >&2; exit 1; }
            """, LoadBalancer.checkScript("10.213.5.10"));
        assertTrue(LoadBalancer.checkScript("fd00::10").contains("https://[fd00::10]:6443/readyz"));
    }

    @Test void haproxyForwardsTheEndpointsPortToEveryMastersApiServer() {
        String cfg = LoadBalancer.haproxyCfg(8443, List.of(new LoadBalancer.Backend("m1", "10.0.0.11"),
            new LoadBalancer.Backend("m2", "10.0.0.12"), new LoadBalancer.Backend("m3", "fd00::13")));
        assertTrue(cfg.contains("frontend apiserver\n    bind *:8443\n    mode tcp\n"), cfg);
        assertTrue(cfg.contains("    http-check send meth GET uri /healthz\n    http-check expect status 200\n"), cfg);
        assertTrue(cfg.endsWith("""
                balance roundrobin
                server m1 10.0.0.11:6443 check check-ssl verify none
                server m2 10.0.0.12:6443 check check-ssl verify none
                server m3 [fd00::13]:6443 check check-ssl verify none
            """), cfg);
    }
}
