package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

class KubeadmConfigTest {
    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> docs(String yaml) {
        List<Map<String, Object>> out = new ArrayList<>();
        new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(yaml).forEach(d -> out.add((Map<String, Object>) d));
        return out;
    }

    @SuppressWarnings("unchecked")
    static Object at(Map<String, Object> m, String... path) {
        Object cur = m;
        for (String p : path) cur = ((Map<String, Object>) cur).get(p);
        return cur;
    }

    @Test void initConfigurationIsV1beta4WithTheInventorysNetworks() {
        var d = docs(KubeadmConfig.init(new KubeadmConfig.Init("gpu-lab", "v1.35.0", "master", "172.16.10.90",
            "10.244.0.0/16", "10.96.0.0/12", "unix:///var/run/cri-dockerd.sock")));
        assertEquals(3, d.size());
        assertEquals("kubeadm.k8s.io/v1beta4", d.get(0).get("apiVersion"));
        assertEquals("InitConfiguration", d.get(0).get("kind"));
        assertEquals("172.16.10.90", at(d.get(0), "localAPIEndpoint", "advertiseAddress"));
        assertEquals("unix:///var/run/cri-dockerd.sock", at(d.get(0), "nodeRegistration", "criSocket"));
        assertEquals(List.of(Map.of("name", "node-ip", "value", "172.16.10.90")), at(d.get(0), "nodeRegistration", "kubeletExtraArgs"));
        assertEquals("ClusterConfiguration", d.get(1).get("kind"));
        assertEquals("v1.35.0", d.get(1).get("kubernetesVersion"));
        assertEquals("10.244.0.0/16", at(d.get(1), "networking", "podSubnet"));
        assertEquals("10.96.0.0/12", at(d.get(1), "networking", "serviceSubnet"));
        assertEquals("172.16.10.90:6443", d.get(1).get("controlPlaneEndpoint"));
        assertEquals("KubeletConfiguration", d.get(2).get("kind"));
        assertEquals("systemd", d.get(2).get("cgroupDriver"));
    }

    @Test void theEndpointIsTheInventorysWhenGiven() {
        var d = docs(KubeadmConfig.init(new KubeadmConfig.Init("ha", "v1.35.0", "m1", "10.0.0.11",
            "10.244.0.0/16", "10.96.0.0/12", "unix:///run/containerd/containerd.sock", "10.0.0.100:8443")));
        assertEquals("10.0.0.100:8443", d.get(1).get("controlPlaneEndpoint"));
        assertEquals("10.0.0.11", at(d.get(0), "localAPIEndpoint", "advertiseAddress"));
        var v6 = docs(KubeadmConfig.init(new KubeadmConfig.Init("c", "v1.35.0", "m", "fd00::11",
            "10.244.0.0/16", "10.96.0.0/12", "unix:///run/containerd/containerd.sock")));
        assertEquals("[fd00::11]:6443", v6.get(1).get("controlPlaneEndpoint"));
    }

    @Test void joinConfigurationCarriesTheTokenInTheFile() {
        var d = docs(KubeadmConfig.join(new KubeadmConfig.Join("10.0.0.1:6443", "abcdef.0123456789abcdef",
            "sha256:" + "a".repeat(64), "worker-1", "10.0.0.2", "unix:///run/containerd/containerd.sock")));
        assertEquals("JoinConfiguration", d.get(0).get("kind"));
        assertEquals("abcdef.0123456789abcdef", at(d.get(0), "discovery", "bootstrapToken", "token"));
        assertEquals(List.of("sha256:" + "a".repeat(64)), at(d.get(0), "discovery", "bootstrapToken", "caCertHashes"));
        assertEquals("worker-1", at(d.get(0), "nodeRegistration", "name"));
    }

    @Test void ipv6EndpointInBrackets() {
        assertEquals("[fd00::1]", KubeadmConfig.hostForUrl("fd00::1"));
        assertEquals("10.0.0.1", KubeadmConfig.hostForUrl("10.0.0.1"));
    }

    @Test void theAdvertiseAddressAndNodeIpAreIpsOrFactsNeverNames() {
        String init = KubeadmConfig.init(new KubeadmConfig.Init("c", "v1.35.0", "m", "{{node.m.ip}}", "10.244.0.0/16", "10.96.0.0/12", "unix:///run/containerd/containerd.sock"));
        org.junit.jupiter.api.Assertions.assertTrue(init.contains("advertiseAddress: \"{{node.m.ip}}\""), init);
        var e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> KubeadmConfig.init(
            new KubeadmConfig.Init("c", "v1.35.0", "m", "master.lab", "10.244.0.0/16", "10.96.0.0/12", "unix:///run/containerd/containerd.sock")));
        org.junit.jupiter.api.Assertions.assertEquals("advertiseAddress must be an IP address, not 'master.lab'", e.getMessage());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> KubeadmConfig.join(
            new KubeadmConfig.Join("{{join.endpoint}}", "{{join.token}}", "{{join.caCertHash}}", "w1", "w1.lab", "unix:///run/containerd/containerd.sock")));
    }

    @Test void severalMastersPutTheCertificateKeyInTheFilesOnly() {
        String key = "ab".repeat(32);
        var init = docs(KubeadmConfig.init(new KubeadmConfig.Init("ha", "v1.35.0", "m1", "10.0.0.11",
            "10.244.0.0/16", "10.96.0.0/12", "unix:///run/containerd/containerd.sock", "10.0.0.100:8443", key)));
        assertEquals(key, init.get(0).get("certificateKey"));
        assertEquals("m1", at(init.get(0), "nodeRegistration", "name"));
        var upload = docs(KubeadmConfig.uploadCerts(key));
        assertEquals(List.of(Map.of("apiVersion", "kubeadm.k8s.io/v1beta4", "kind", "InitConfiguration", "certificateKey", key)), upload);
        var join = docs(KubeadmConfig.joinControlPlane(new KubeadmConfig.Join("10.0.0.100:8443", "abcdef.0123456789abcdef",
            "sha256:" + "a".repeat(64), "m2", "10.0.0.12", "unix:///run/containerd/containerd.sock"), key));
        assertEquals(1, join.size());
        assertEquals("10.0.0.100:8443", at(join.get(0), "discovery", "bootstrapToken", "apiServerEndpoint"));
        assertEquals(Map.of("localAPIEndpoint", Map.of("advertiseAddress", "10.0.0.12", "bindPort", 6443), "certificateKey", key),
            join.get(0).get("controlPlane"));
    }
}
