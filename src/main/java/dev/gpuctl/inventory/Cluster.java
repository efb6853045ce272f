package dev.gpuctl.inventory;

import dev.gpuctl.net.Cidr;
import java.util.List;
import java.util.Optional;

/**
 * The cluster-wide settings of the inventory's `cluster:` block, with defaults applied.
 *
 * @param cniOperatorManifest calico's Tigera operator manifest (given, or found beside the custom resources); null
 *                            with flannel
 * @param controlPlaneSchedulable whether the master's control-plane taint is removed, so that pods (and, on a master
 *                                with GPUs, the device plugin) run there
 * @param gpuSharing how GPU nodes share their GPUs unless a node says otherwise ({@link GpuSharing#NONE} by default)
 * @param controlPlaneEndpoint {@code cluster.controlPlaneEndpoint} when given (a VIP on the masters or a site load
 *                             balancer); empty means the first master's address ({@link Inventory#controlPlaneEndpoint})
 */
public record Cluster(String name, String kubernetesVersion, ContainerRuntime runtime, Cni cni,
                      Cidr podCidr, Cidr serviceCidr, List<Cidr> siteNetworks, List<String> timeServers,
                      PackageSource packages, ManifestRef cniManifest, ManifestRef cniOperatorManifest,
                      DevicePlugin devicePlugin, boolean controlPlaneSchedulable, GpuDriver gpuDriver,
                      Optional<Proxy> proxy, GpuSharing gpuSharing,
                      Optional<ControlPlaneEndpoint> controlPlaneEndpoint) {
    public Cluster {
        siteNetworks = List.copyOf(siteNetworks);
        timeServers = List.copyOf(timeServers);
    }
}
