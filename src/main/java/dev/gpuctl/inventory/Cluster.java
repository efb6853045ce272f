package dev.gpuctl.inventory;

import dev.gpuctl.net.Cidr;
import java.util.List;
import java.util.Optional;

/** The cluster-wide settings of the inventory's `cluster:` block, with defaults applied. */
public record Cluster(String name, String kubernetesVersion, ContainerRuntime runtime, Cni cni,
                      Cidr podCidr, Cidr serviceCidr, List<Cidr> siteNetworks, List<String> timeServers,
                      PackageSource packages, ManifestRef cniManifest, DevicePlugin devicePlugin,
                      Optional<Proxy> proxy) {
    public Cluster {
        siteNetworks = List.copyOf(siteNetworks);
        timeServers = List.copyOf(timeServers);
    }
}
