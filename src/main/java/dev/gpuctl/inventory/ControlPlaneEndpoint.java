package dev.gpuctl.inventory;

/**
 * Where clients and kubelets reach the API servers: kubeadm's {@code controlPlaneEndpoint}, HOST:PORT.
 * <ul>
 * <li>{@link Kind#VIP}: a virtual IP that gpuctl keeps on one master with keepalived (VRRP), and haproxy on every master
 *     listening on {@code port} (default {@link #VIP_PORT}) and forwarding to each master's API server on 6443.</li>
 * <li>{@link Kind#ADDRESS}: a load balancer the site runs (a DNS name or an IP) in front of every master's 6443.</li>
 * <li>{@link Kind#MASTER}: neither is given: the single master's own address and 6443, so that the cluster can still
 *     grow (kubeadm adds control-plane nodes only to a cluster initialised with a controlPlaneEndpoint).</li>
 * </ul>
 */
public record ControlPlaneEndpoint(Kind kind, String host, int port) {
    public enum Kind { VIP, ADDRESS, MASTER }

    /** haproxy's port on the masters; 6443 is the API servers' own. */
    public static final int VIP_PORT = 8443;
    public static final int API_SERVER_PORT = 6443;

    /** HOST:PORT as kubeadm takes it (an IPv6 address in brackets). */
    public String hostPort() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    public String url() { return "https://" + hostPort(); }

    /** Whether gpuctl runs the load balancing (keepalived + haproxy) on the masters. */
    public boolean isVip() { return kind == Kind.VIP; }
}
