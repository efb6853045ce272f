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
 */
public record Cluster(String name, String kubernetesVersion, ContainerRuntime runtime, Cni cni,
                      Cidr podCidr, Cidr serviceCidr, List<Cidr> siteNetworks, List<String> timeServers,
                      PackageSource packages, ManifestRef cniManifest, ManifestRef cniOperatorManifest,
                      DevicePlugin devicePlugin, boolean controlPlaneSchedulable, GpuDriver gpuDriver,
                      Optional<Proxy> proxy) {
    public Cluster {
        siteNetworks = List.copyOf(siteNetworks);
        timeServers = List.copyOf(timeServers);
    }
}
