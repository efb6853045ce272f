package dev.gpuctl.kube;

import dev.gpuctl.hostfiles.IpJson;
import dev.gpuctl.hostfiles.NetworkRange;
import dev.gpuctl.net.Cidr;
import dev.gpuctl.text.HostConfException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The virtual IP in front of the masters' API servers, as kubeadm's "Options for software load balancing" describes it
 * (kubernetes/kubeadm docs/ha-considerations.md): keepalived holds the VIP on one master by VRRP and moves it when that
 * master stops advertising or its API server stops answering; haproxy on every master listens on the endpoint's port
 * and forwards, TCP, to each master's API server on 6443 that passes an HTTPS /healthz check. Pure text in, text out.
 */
public final class LoadBalancer {
    private LoadBalancer() {}

    public static final String KEEPALIVED_CONF = "/etc/keepalived/keepalived.conf";
    public static final String CHECK_SCRIPT = "/etc/keepalived/check_apiserver.sh";
    public static final String HAPROXY_CFG = "/etc/haproxy/haproxy.cfg";
    /** The API server's port on every master. */
    public static final int API_SERVER_PORT = 6443;

    /** One API server behind haproxy: its node name and IP (or a {{fact}} reference filled in before use). */
    public record Backend(String name, String address) {}

    /**
     * One master's keepalived settings.
     *
     * @param iface    the interface whose subnet holds the VIP (a {{fact}} reference, found on the host)
     * @param prefix   that subnet's prefix length (the VIP is added with it)
     * @param first    the first master starts as MASTER with priority 101, the others as BACKUP with 100
     * @param nodeIp   this master's own API server address, asked by the check script
     */
    public record Vrrp(String cluster, String vip, String iface, String prefix, boolean first, String nodeIp) {}

    /**
     * VRRP's virtual router id, 1..255: the same on every master of the cluster, from the cluster's name (two clusters
     * on one subnet need different ids; a clash shows as keepalived's "ip address associated with VRID not present").
     */
    public static int routerId(String cluster) {
        return Byte.toUnsignedInt(sha256(cluster)[0]) % 255 + 1;
    }

    /**
     * VRRP's PASS authentication, at most 8 characters: it travels in clear in every advert, so it is no secret; it keeps
     * the masters of another cluster that picked the same router id from joining this one.
     */
    static String authPass(String cluster) {
        return HexFormat.of().formatHex(sha256("gpuctl-vrrp:" + cluster)).substring(0, 8);
    }

    public static String keepalivedConf(Vrrp v) {
        return """
            # Written by gpuctl: the cluster's API endpoint %2$s, kept on one master by VRRP.
            # The first master starts as MASTER (priority 101), the others as BACKUP (100); a master whose API server
            # fails check_apiserver.sh 3 times in a row loses 2 points, so the VIP moves to a master whose API server is
            # ready. A master that stops advertising (down, or keepalived stopped) loses the VIP in about 3 seconds.
            global_defs {
                router_id gpuctl_%1$s
                enable_script_security
                script_user root
            }
            vrrp_script check_apiserver {
                script "%3$s"
                interval 3
                weight -2
                fall 3
                rise 2
            }
            vrrp_instance gpuctl_api {
                state %4$s
                interface %5$s
                virtual_router_id %6$d
                priority %7$d
                advert_int 1
                authentication {
                    auth_type PASS
                    auth_pass %8$s
                }
                virtual_ipaddress {
                    %2$s/%9$s
                }
                track_script {
                    check_apiserver
                }
            }
            """.formatted(v.cluster(), v.vip(), CHECK_SCRIPT, v.first() ? "MASTER" : "BACKUP", v.iface(), routerId(v.cluster()),
                v.first() ? 101 : 100, authPass(v.cluster()), v.prefix());
    }

    /** keepalived's health check: this master's own API server answers /readyz (any certificate: it is the local one). */
    public static String checkScript(String nodeIp) {
        String url = "https://" + KubeadmConfig.hostForUrl(nodeIp) + ":" + API_SERVER_PORT + "/readyz";
        return """
            #!/bin/sh
            # Written by gpuctl: keepalived's check of this master's API server (see keepalived.conf).
            curl -sfk --max-time 2 -o /dev/null %1$s || { echo "*** Error GET %1$s" >&2; exit 1; }
            """.formatted(url);
    }

    /** haproxy on every master: the endpoint's port, TCP, round robin over every master's API server that passes /healthz. */
    public static String haproxyCfg(int port, List<Backend> backends) {
        StringBuilder servers = new StringBuilder();
        for (Backend b : backends) {
            servers.append("    server ").append(b.name()).append(' ').append(KubeadmConfig.hostForUrl(b.address())).append(':')
                .append(API_SERVER_PORT).append(" check check-ssl verify none\n");
        }
        return """
            # Written by gpuctl: the cluster's API endpoint, port %1$d on every master, forwarded to each master's API server.
            global
                log /dev/log local0
                chroot /var/lib/haproxy
                user haproxy
                group haproxy
                daemon

            defaults
                log global
                mode tcp
                option tcplog
                option dontlognull
                option redispatch
                retries 1
                timeout connect 5s
                timeout client 35s
                timeout server 35s
                timeout check 10s

            frontend apiserver
                bind *:%1$d
                mode tcp
                option tcplog
                default_backend apiserverbackend

            backend apiserverbackend
                mode tcp
                option httpchk
                http-check send meth GET uri /healthz
                http-check expect status 200
                balance roundrobin
            %2$s""".formatted(port, servers);
    }

    /** The interface and prefix length of this host's subnet that holds the VIP. */
    public record Subnet(String iface, int prefix) {}

    /**
     * The interface whose address's subnet holds {@code vip}, from {@code ip -j addr}: keepalived adds the VIP there.
     *
     * @throws HostConfException when no subnet of the host holds it (the VIP would not be reachable through this master),
     *                           naming the host's subnets
     */
    public static Subnet subnetFor(String vip, String ipJsonAddr) {
        return subnetFor(vip, IpJson.addresses(ipJsonAddr));
    }

    /** {@link #subnetFor(String, String)} of the host's interface addresses as {@link IpJson#addresses} reads them. */
    public static Subnet subnetFor(String vip, List<NetworkRange> ranges) {
        byte[] ip = Cidr.parseAddress(vip).orElseThrow(() -> new IllegalArgumentException("not an IP: " + vip));
        Cidr single = new Cidr(ip, ip.length * 8);
        for (NetworkRange r : ranges) {
            Optional<Cidr> net = Cidr.parse(r.cidr());
            if (net.isPresent() && net.get().contains(single) && !r.address().startsWith(vip + "/")) {
                String iface = r.source().substring(0, r.source().indexOf(' '));
                return new Subnet(iface, net.get().prefix());
            }
        }
        throw new HostConfException("the VIP " + vip + " is in none of this master's subnets (" + (ranges.isEmpty() ? "none"
            : String.join(", ", ranges.stream().map(NetworkRange::source).toList())) + "): keepalived can only hold it on a"
            + " subnet the master is on (expected cluster.controlPlaneEndpoint.vip to be a free address in the masters' subnet)");
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
