package dev.gpuctl.kube;

import dev.gpuctl.net.Cidr;

/**
 * Renders kubeadm's configuration files (kubeadm.k8s.io/v1beta4), pure text in, text out.
 * Values are plain scalars that need no YAML quoting except where quoted below (addresses, CIDRs, names
 * are validated by the inventory loader). Fact references such as {{join.token}} pass through unchanged.
 */
public final class KubeadmConfig {
    private KubeadmConfig() {}

    /**
     * Inputs of kubeadm init on the (first) master.
     *
     * @param controlPlaneEndpoint HOST:PORT every kubeconfig names and the API server's certificate carries: a VIP, a
     *                             site load balancer, or the master's own advertise address and 6443 (every cluster gets
     *                             one, so that masters can be added later)
     */
    public record Init(String clusterName, String kubernetesVersion, String nodeName, String advertiseAddress,
                       String podSubnet, String serviceSubnet, String criSocket, String controlPlaneEndpoint,
                       String certificateKey) {
        /** Without a certificate key (a control plane of one master: nothing is uploaded). */
        public Init(String clusterName, String kubernetesVersion, String nodeName, String advertiseAddress,
                    String podSubnet, String serviceSubnet, String criSocket, String controlPlaneEndpoint) {
            this(clusterName, kubernetesVersion, nodeName, advertiseAddress, podSubnet, serviceSubnet, criSocket,
                controlPlaneEndpoint, null);
        }

        /** With the master's own address as the endpoint. */
        public Init(String clusterName, String kubernetesVersion, String nodeName, String advertiseAddress,
                    String podSubnet, String serviceSubnet, String criSocket) {
            this(clusterName, kubernetesVersion, nodeName, advertiseAddress, podSubnet, serviceSubnet, criSocket,
                hostForUrl(advertiseAddress) + ":6443");
        }
    }

    /** Inputs of kubeadm join on a worker. */
    public record Join(String apiServerEndpoint, String token, String caCertHash, String nodeName,
                       String nodeIp, String criSocket) {}

    /**
     * InitConfiguration + ClusterConfiguration + KubeletConfiguration (cgroupDriver: systemd), one file.
     * @throws IllegalArgumentException when the advertise address is neither an IP nor a {{fact}} reference (kubeadm
     *         refuses a host name there, and the kubelet's node-ip must be an IP)
     */
    public static String init(Init c) {
        requireIp(c.advertiseAddress(), "advertiseAddress");
        return """
            # Written by gpuctl: kubeadm init --config this-file
            apiVersion: kubeadm.k8s.io/v1beta4
            kind: InitConfiguration
            localAPIEndpoint:
              advertiseAddress: "%4$s"
              bindPort: 6443
            %9$snodeRegistration:
              name: "%3$s"
              criSocket: "%7$s"
              kubeletExtraArgs:
                - name: node-ip
                  value: "%4$s"
            ---
            apiVersion: kubeadm.k8s.io/v1beta4
            kind: ClusterConfiguration
            clusterName: "%1$s"
            kubernetesVersion: "%2$s"
            controlPlaneEndpoint: "%8$s"
            networking:
              podSubnet: "%5$s"
              serviceSubnet: "%6$s"
            ---
            apiVersion: kubelet.config.k8s.io/v1beta1
            kind: KubeletConfiguration
            cgroupDriver: systemd
            """.formatted(c.clusterName(), c.kubernetesVersion(), c.nodeName(), c.advertiseAddress(),
                c.podSubnet(), c.serviceSubnet(), c.criSocket(), c.controlPlaneEndpoint(),
                c.certificateKey() == null ? "" : "certificateKey: \"" + c.certificateKey() + "\"\n");
    }

    /**
     * The InitConfiguration {@code kubeadm init phase upload-certs --upload-certs --config} reads: only the certificate
     * key (the key lives in this 0600 file, never in argv).
     */
    public static String uploadCerts(String certificateKey) {
        return """
            # Written by gpuctl: kubeadm init phase upload-certs --upload-certs --config this-file (removed after it)
            apiVersion: kubeadm.k8s.io/v1beta4
            kind: InitConfiguration
            certificateKey: "%s"
            """.formatted(certificateKey);
    }

    /**
     * JoinConfiguration of another master: the worker's, plus {@code controlPlane} (its own API server's address and
     * the certificate key that decrypts the kubeadm-certs Secret).
     */
    public static String joinControlPlane(Join j, String certificateKey) {
        requireIp(j.nodeIp(), "advertiseAddress");
        return join(j).replace("(removed after the join)", "--control-plane (removed after the join)") + """
            controlPlane:
              localAPIEndpoint:
                advertiseAddress: "%s"
                bindPort: 6443
              certificateKey: "%s"
            """.formatted(j.nodeIp(), certificateKey);
    }

    /** JoinConfiguration with a bootstrap token: the token lives in this 0600 file, never in argv. */
    public static String join(Join j) {
        requireIp(j.nodeIp(), "node-ip");
        return """
            # Written by gpuctl: kubeadm join --config this-file (removed after the join)
            apiVersion: kubeadm.k8s.io/v1beta4
            kind: JoinConfiguration
            discovery:
              bootstrapToken:
                apiServerEndpoint: "%s"
                token: "%s"
                caCertHashes:
                  - "%s"
            nodeRegistration:
              name: "%s"
              criSocket: "%s"
              kubeletExtraArgs:
                - name: node-ip
                  value: "%s"
            """.formatted(j.apiServerEndpoint(), j.token(), j.caCertHash(), j.nodeName(), j.criSocket(), j.nodeIp());
    }

    /** An IP address, or a {{fact}} reference that is filled in with one before use. */
    static void requireIp(String value, String what) {
        if (value.matches("\\{\\{[a-zA-Z0-9_.-]+}}") || Cidr.parseAddress(value).isPresent()) return;
        throw new IllegalArgumentException(what + " must be an IP address, not '" + value + "'");
    }

    /** An IPv6 address goes in brackets in host:port. */
    public static String hostForUrl(String address) {
        return address.contains(":") ? "[" + address + "]" : address;
    }
}
