package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.net.Cidr;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InventoryLoaderTest {
    private static final Map<String, String> ENV = Map.of("HOME", "/home/ops");
    private static final Path BASE = Path.of("/srv/lab");

    @TempDir Path dir;

    private static Inventory parse(String yaml) {
        return InventoryLoader.parse("inv.yaml", yaml, BASE, ENV);
    }

    private static List<String> errors(String yaml, Path base) {
        InventoryException e = assertThrows(InventoryException.class,
            () -> InventoryLoader.parse("inv.yaml", yaml, base, ENV));
        return e.errors().stream().map(InventoryError::format).toList();
    }

    private static void assertErrors(String yaml, String... expected) {
        assertEquals(List.of(expected), errors(yaml, BASE));
    }

    // ---- a good inventory ----

    @Test void goodInventoryLoadsWithDefaults() {
        Inventory inv = parse("""
            cluster:
              name: gpu-lab
              kubernetesVersion: "1.35"
            ssh:
              user: ops
              identityFile: ~/.ssh/lab_ed25519
              bastion: { address: jump.example.com }
            nodes:
              - { name: master,   address: 172.16.10.90,  role: master }
              - { name: worker-1, address: 172.16.10.100, role: worker }
              - name: worker-2
                address: 172.16.10.101
                role: worker
                gpu: false
                labels: { team: vision, example.com/rack: r1 }
                ssh: { port: 2222, knownHosts: keys/known_hosts, hostKey: "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8" }
            """);
        Cluster c = inv.cluster();
        assertEquals("gpu-lab", c.name());
        assertEquals("1.35", c.kubernetesVersion());
        assertEquals(ContainerRuntime.CONTAINERD, c.runtime());
        assertEquals(Cni.FLANNEL, c.cni());
        assertEquals("10.244.0.0/16", c.podCidr().toString());
        assertEquals("10.96.0.0/12", c.serviceCidr().toString());
        assertEquals(List.of(), c.siteNetworks());
        assertEquals(List.of(), c.timeServers());
        assertEquals(PackageSource.UPSTREAM, c.packages());
        assertEquals("https://raw.githubusercontent.com/flannel-io/flannel/v0.28.9/Documentation/kube-flannel.yml",
            c.cniManifest().toString());
        assertEquals("v0.20.0", c.devicePlugin().version());
        assertEquals("https://raw.githubusercontent.com/NVIDIA/k8s-device-plugin/v0.20.0/deployments/static/nvidia-device-plugin.yml",
            c.devicePlugin().manifest().toString());
        assertEquals(Optional.empty(), inv.nfs());
        assertEquals(BASE.resolve("inv.yaml"), inv.file());

        Node master = inv.master();
        assertEquals("master", master.name());
        assertFalse(master.gpu());
        assertEquals("ssh", master.connection());
        SshSettings ms = master.ssh();
        assertEquals("ops", ms.user());
        assertEquals(22, ms.port());
        assertEquals(Path.of("/home/ops/.ssh/lab_ed25519"), ms.identityFile());
        assertEquals(Path.of("/home/ops/.ssh/known_hosts"), ms.knownHosts());
        assertEquals(Optional.of(new Bastion("jump.example.com", "ops", 22)), ms.bastion());
        assertEquals(Optional.empty(), ms.hostKey());

        Node w1 = inv.node("worker-1").orElseThrow();
        assertTrue(w1.gpu());
        assertEquals(Map.of(), w1.labels());
        assertEquals(ms, w1.ssh());

        Node w2 = inv.node("worker-2").orElseThrow();
        assertFalse(w2.gpu());
        assertEquals(Map.of("team", "vision", "example.com/rack", "r1"), w2.labels());
        assertEquals("ops", w2.ssh().user());
        assertEquals(2222, w2.ssh().port());
        assertEquals(Path.of("/home/ops/.ssh/lab_ed25519"), w2.ssh().identityFile());
        assertEquals(Path.of("/srv/lab/keys/known_hosts"), w2.ssh().knownHosts());
        assertEquals(Optional.of("SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8"), w2.ssh().hostKey());
        assertEquals(List.of("worker-1", "worker-2"), inv.workers().stream().map(Node::name).toList());
    }

    @Test void everySettingCanBeGiven() throws IOException {
        Files.writeString(dir.resolve("calico.yaml"), "apiVersion: v1\nkind: List\nitems: [ { apiVersion: v1, kind: Namespace, metadata: { name: tigera-operator } } ]\n");
        Files.createDirectories(dir.resolve("manifests"));
        Files.writeString(dir.resolve("manifests/plugin.yml"), "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: { name: nvidia-device-plugin-daemonset, namespace: kube-system }\n");
        Files.writeString(dir.resolve("manifests/operator.yaml"), "apiVersion: v1\nkind: List\nitems: [ { apiVersion: v1, kind: Namespace, metadata: { name: tigera-operator } } ]\n");
        Inventory inv = InventoryLoader.parse("lab/inventory.yaml", """
            cluster:
              name: lab2
              kubernetesVersion: "1.31"
              runtime: docker
              cni: calico
              serviceCidr: 10.100.0.0/16
              siteNetworks: [172.16.0.0/16, "fd00:10::/64"]
              timeServers: [ntp.example.com, 172.16.0.1]
              packages: system
              cniManifest: calico.yaml
              cniOperatorManifest: manifests/operator.yaml
              devicePlugin: { version: v0.17.1, manifest: ./manifests/plugin.yml }
              controlPlaneSchedulable: true
            ssh: { user: root, port: 2200, identityFile: /keys/id, knownHosts: ~/kh }
            nodes:
              - { name: gpu0.lab, address: "fd00:10::5", role: master, gpu: true, connection: local }
              - { name: gpu1.lab, address: gpu1.example.com, role: worker, ssh: { user: admin, bastion: { address: 10.0.0.1, port: 2022 } } }
            storage:
              nfs:
                server: gpu0.lab
                exports:
                  - { path: /export/dataset, readOnly: true }
                  - { path: /export/ckpt }
            """, dir, ENV);
        Cluster c = inv.cluster();
        assertEquals(ContainerRuntime.DOCKER, c.runtime());
        assertEquals(Cni.CALICO, c.cni());
        assertEquals("192.168.0.0/16", c.podCidr().toString());
        assertEquals("10.100.0.0/16", c.serviceCidr().toString());
        assertEquals(List.of(Cidr.parse("172.16.0.0/16").orElseThrow(), Cidr.parse("fd00:10::/64").orElseThrow()),
            c.siteNetworks());
        assertEquals(List.of("ntp.example.com", "172.16.0.1"), c.timeServers());
        assertEquals(PackageSource.SYSTEM, c.packages());
        assertEquals(ManifestRef.ofFile(dir.resolve("calico.yaml")), c.cniManifest());
        assertEquals(ManifestRef.ofFile(dir.resolve("manifests/operator.yaml")), c.cniOperatorManifest());
        assertTrue(c.controlPlaneSchedulable());
        assertEquals(new DevicePlugin("v0.17.1", ManifestRef.ofFile(dir.resolve("manifests/plugin.yml"))), c.devicePlugin());
        assertEquals(dir.resolve("inventory.yaml"), inv.file());

        Node master = inv.master();
        assertTrue(master.gpu());
        assertTrue(master.isLocal());
        assertEquals(new SshSettings("root", 2200, Path.of("/keys/id"), Path.of("/home/ops/kh"),
            Optional.empty(), Optional.empty()), master.ssh());
        Node w = inv.node("gpu1.lab").orElseThrow();
        assertEquals(Optional.of(new Bastion("10.0.0.1", "admin", 2022)), w.ssh().bastion());
        assertEquals("admin", w.ssh().user());
        assertEquals(2200, w.ssh().port());
        assertEquals(Optional.of(new Nfs("gpu0.lab",
            List.of(new NfsExport("/export/dataset", true), new NfsExport("/export/ckpt", false)))), inv.nfs());
    }

    @Test void calicoDefaultsToItsManifestAndPluginManifestFollowsItsVersion() {
        Inventory inv = parse("""
            cluster: { name: a, kubernetesVersion: "1.36", cni: calico, devicePlugin: { version: v0.21.0 } }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """);
        assertEquals("https://raw.githubusercontent.com/projectcalico/calico/v3.32.1/manifests/custom-resources.yaml",
            inv.cluster().cniManifest().toString());
        assertEquals("https://raw.githubusercontent.com/NVIDIA/k8s-device-plugin/v0.21.0/deployments/static/nvidia-device-plugin.yml",
            inv.cluster().devicePlugin().manifest().toString());
    }

    @Test void loadReadsAFileAndReportsUnreadableOnes() throws IOException {
        Path file = dir.resolve("inventory.yaml");
        Files.writeString(file, "\uFEFFcluster: { name: a, kubernetesVersion: \"1.35\" }\nnodes: [{ name: m, address: 10.0.0.1, role: master }]\n");
        assertEquals(file, InventoryLoader.load(file).file());

        Path missing = dir.resolve("nope.yaml");
        assertEquals(missing + ": cannot read: no such file", loadError(missing));
        assertEquals(dir + ": cannot read: it is a directory", loadError(dir));
        Path latin1 = dir.resolve("latin1.yaml");
        Files.write(latin1, new byte[] {'a', ':', ' ', (byte) 0xe9, '\n'});
        assertEquals(latin1 + ": cannot read: not UTF-8 text", loadError(latin1));
        Path empty = dir.resolve("empty.yaml");
        Files.writeString(empty, "# nothing yet\n");
        assertEquals(empty + ": the inventory is empty (expected cluster:, ssh:, nodes:, storage:, teams: and kueue:)", loadError(empty));
    }

    private static String loadError(Path file) {
        InventoryException e = assertThrows(InventoryException.class, () -> InventoryLoader.load(file));
        assertEquals(1, e.errors().size(), e.getMessage());
        assertEquals(e.getMessage(), e.errors().get(0).toString());
        return e.getMessage();
    }

    // ---- broken inventories: each message exactly, at its line:column ----

    @Test void yamlSyntaxError() {
        assertErrors("""
            cluster:
              name: gpu-lab
               kubernetesVersion: "1.35"
            """,
            "inv.yaml:3:21: invalid YAML: mapping values are not allowed here");
    }

    @Test void tabIndentation() {
        assertErrors("cluster:\n\tname: gpu-lab\n",
            "inv.yaml:2:1: invalid YAML: found character '\\t(TAB)' that cannot start any token. (Do not use \\t(TAB) for indentation) (while scanning for the next token)");
    }

    @Test void twoDocuments() {
        assertErrors("cluster: {}\n---\nnodes: []\n",
            "inv.yaml:2:1: invalid YAML: expected a single document in the stream at line 1, column 1, but found another document");
    }

    @Test void topLevelNotAMapping() {
        assertErrors("- cluster\n", "inv.yaml:1:1: the inventory: expected a mapping, got a list");
    }

    @Test void unknownKeySuggestsClosest() {
        assertErrors("""
            cluster:
              name: gpu-lab
              kubernetesVersion: "1.35"
              podCIDR: 10.244.0.0/16
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """,
            "inv.yaml:4:3: unknown key 'podCIDR' in cluster (did you mean 'podCidr'?)");
    }

    @Test void unknownKeyWithoutSuggestionListsKnownKeys() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            storage: { nfs: { server: m, exports: [{ path: /x, mode: rw }] } }
            """,
            "inv.yaml:3:52: unknown key 'mode' in storage.nfs.exports[0] (expected one of: path, readOnly, rootSquash)");
    }

    @Test void misplacedKeysSayWhereTheyBelong() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            runtime: docker
            ssh: { hostKey: "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8" }
            nodes:
              - { name: m, address: 10.0.0.1, role: master, port: 2222 }
            """,
            "inv.yaml:2:1: unknown key 'runtime' in the top level (it belongs under cluster:)",
            "inv.yaml:3:8: unknown key 'hostKey' in ssh (hostKey is only allowed in a node's own ssh: block, as it pins one host's key)",
            "inv.yaml:5:49: unknown key 'port' in nodes[0] (it belongs under the node's ssh:)");
    }

    @Test void duplicateKeys() {
        assertErrors("""
            cluster:
              name: gpu-lab
              kubernetesVersion: "1.35"
              name: other
            nodes:
              - { name: m, address: 10.0.0.1, role: master, labels: { a: x, a: y } }
            """,
            "inv.yaml:4:3: duplicate key 'name' in cluster (first at line 2)",
            "inv.yaml:6:65: duplicate key 'a' in nodes[0].labels (first at line 6)");
    }

    @Test void wrongTypes() {
        assertErrors("""
            cluster:
              name: gpu-lab
              kubernetesVersion: "1.35"
              runtime: [docker]
              siteNetworks: 172.16.0.0/16
            ssh: root
            nodes:
              - { name: m, address: 10.0.0.1, role: master, gpu: "yes", labels: [a] }
            """,
            "inv.yaml:4:12: cluster.runtime: expected a string, got a list",
            "inv.yaml:5:17: cluster.siteNetworks: expected a list, got a string ('172.16.0.0/16')",
            "inv.yaml:6:6: ssh: expected a mapping, got a string ('root')",
            "inv.yaml:8:54: nodes[0].gpu: expected true or false, got a string ('yes')",
            "inv.yaml:8:69: nodes[0].labels: expected a mapping of label keys to values, got a list");
    }

    @Test void connectTimeoutIsADefaultANodeMayOverride() {
        Inventory inv = parse("""
            cluster: { name: a, kubernetesVersion: "1.35" }
            ssh: { connectTimeout: 5s }
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
              - { name: w1, address: 10.0.0.2, role: worker, ssh: { connectTimeout: "1m30s" } }
              - { name: w2, address: 10.0.0.3, role: worker, ssh: { connectTimeout: 40 } }
            """);
        assertEquals(java.time.Duration.ofSeconds(5), inv.node("m").orElseThrow().ssh().connectTimeout());
        assertEquals(java.time.Duration.ofSeconds(90), inv.node("w1").orElseThrow().ssh().connectTimeout());
        assertEquals(java.time.Duration.ofSeconds(40), inv.node("w2").orElseThrow().ssh().connectTimeout());
        Inventory plain = parse("""
            cluster: { name: a, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
            """);
        assertEquals(SshSettings.DEFAULT_CONNECT_TIMEOUT, plain.master().ssh().connectTimeout());
        assertEquals(java.time.Duration.ofSeconds(15), SshSettings.DEFAULT_CONNECT_TIMEOUT);
    }

    @Test void aBadConnectTimeoutIsNamedWhereItIs() {
        assertErrors("""
            cluster: { name: a, kubernetesVersion: "1.35" }
            ssh: { connectTimeout: soon }
            nodes:
              - { name: m, address: 10.0.0.1, role: master, ssh: { connectTimeout: 0s } }
              - { name: w, address: 10.0.0.2, role: worker, ssh: { connectTimeout: 2h } }
              - { name: v, address: 10.0.0.3, role: worker, ssh: { connectTimeout: -5 } }
              - { name: u, address: 10.0.0.4, role: worker, ssh: { connectTimeout: [5] } }
            """,
            "inv.yaml:2:24: ssh.connectTimeout: 'soon' is not a timeout (expected seconds such as 15 or 15s, or minutes such as 1m or 1m30s; from 1s to 5m)",
            "inv.yaml:4:72: nodes[0].ssh.connectTimeout: '0s' is zero (expected at least 1s)",
            "inv.yaml:5:72: nodes[1].ssh.connectTimeout: '2h' is not a timeout (expected seconds such as 15 or 15s, or minutes such as 1m or 1m30s; from 1s to 5m)",
            "inv.yaml:6:72: nodes[2].ssh.connectTimeout: '-5' is not a timeout (expected seconds such as 15 or 15s, or minutes such as 1m or 1m30s; from 1s to 5m)",
            "inv.yaml:7:72: nodes[3].ssh.connectTimeout: expected a string, got a list");
        assertThrows(IllegalArgumentException.class, () -> SshSettings.parseConnectTimeout("6m"));
        assertThrows(IllegalArgumentException.class, () -> SshSettings.parseConnectTimeout("1m30"));
        assertEquals(java.time.Duration.ofMinutes(5), SshSettings.parseConnectTimeout("300s"));
    }

    @Test void missingRequiredKeys() {
        assertErrors("""
            cluster:
              runtime: docker
            nodes:
              - { address: 10.0.0.1, role: master }
              - { name: w }
            """,
            "inv.yaml:2:3: missing required key 'name' in cluster (expected a DNS-1123 label such as 'gpu-lab')",
            "inv.yaml:2:3: missing required key 'kubernetesVersion' in cluster (expected a quoted minor version such as \"1.35\")",
            "inv.yaml:4:5: missing required key 'name' in nodes[0] (expected a node name such as 'worker-1')",
            "inv.yaml:5:5: missing required key 'address' in nodes[1] (expected the node's IP address or host name)",
            "inv.yaml:5:5: missing required key 'role' in nodes[1] (expected master or worker)");
    }

    @Test void missingTopLevelSections() {
        assertErrors("ssh: { user: ops }\n",
            "inv.yaml:1:1: missing required key 'cluster' in the top level (expected a mapping with name and kubernetesVersion)",
            "inv.yaml:1:1: missing required key 'nodes' in the top level (expected a list of nodes)");
    }

    @Test void emptyRequiredValue() {
        assertErrors("""
            cluster:
              name:
              kubernetesVersion: "1.35"
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """,
            "inv.yaml:2:3: cluster.name: empty value (expected a DNS-1123 label such as 'gpu-lab')");
    }

    @Test void noMaster() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - { name: w1, address: 10.0.0.1, role: worker }
            """,
            "inv.yaml:2:1: nodes: no node has role master (expected 1, 3 or 5 masters)");
    }

    @Test void twoMasters() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - { name: m1, address: 10.0.0.1, role: master }
              - { name: m2, address: 10.0.0.2, role: master }
            """,
            "inv.yaml:4:42: nodes: 2 masters, an even number (node 'm1' at line 3 is the first; expected 1, 3 or 5: etcd needs"
                + " a majority of the masters, so 2 survive no more losses than 1)");
    }

    @Test void duplicateNamesAndAddresses() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
              - { name: w, address: "fd00::1", role: worker }
              - { name: w, address: 10.0.0.1, role: worker }
              - { name: x, address: "FD00:0::1", role: worker }
            """,
            "inv.yaml:5:13: duplicate node name 'w' (first at line 4)",
            "inv.yaml:5:25: duplicate node address '10.0.0.1' (node 'm' at line 3 has it too)",
            "inv.yaml:6:25: duplicate node address 'FD00:0::1' (node 'w' at line 4 has it too)");
    }

    @Test void badAddresses() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: 300.1.1.1, role: master }
              - { name: w1, address: gpu_1.lab, role: worker }
              - { name: w2, address: "fe80::1%eth0", role: worker }
              - { name: w3, address: "10.0.0.7/32", role: worker }
            """,
            "inv.yaml:3:25: nodes[0].address: '300.1.1.1' is not a valid address (expected an IPv4 or IPv6 address, or a host name per RFC 1123)",
            "inv.yaml:4:26: nodes[1].address: 'gpu_1.lab' is not a valid address (expected an IPv4 or IPv6 address, or a host name per RFC 1123)",
            "inv.yaml:5:26: nodes[2].address: 'fe80::1%eth0' is not a valid address (expected an IPv4 or IPv6 address, or a host name per RFC 1123)",
            "inv.yaml:6:26: nodes[3].address: '10.0.0.7/32' is not a valid address (expected an IPv4 or IPv6 address, or a host name per RFC 1123)");
    }

    @Test void nodeIpIsAnIpAddressCheckedAtLoad() {
        Inventory inv = parse("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: master.lab, role: master, nodeIp: 10.0.0.5 }
              - { name: w1, address: w1.lab, role: worker, nodeIp: "FD00::0:7" }
              - { name: w2, address: w2.lab, role: worker }
            """);
        assertEquals(List.of("10.0.0.5", "fd00::7", ""), inv.nodes().stream().map(Node::nodeIp).toList());
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: master.lab, role: master, nodeIp: master.lab }
              - { name: w1, address: 10.0.0.2, role: worker, nodeIp: 10.0.0.0/24 }
            """,
            "inv.yaml:3:59: nodes[0].nodeIp: 'master.lab' is not an IP address (expected the IPv4 or IPv6 address the cluster uses for this node: kubeadm's advertise address, the kubelet's node-ip)",
            "inv.yaml:4:58: nodes[1].nodeIp: '10.0.0.0/24' is not an IP address (expected the IPv4 or IPv6 address the cluster uses for this node: kubeadm's advertise address, the kubelet's node-ip)");
    }

    @Test void badCidrs() {
        assertErrors("""
            cluster:
              name: gpu-lab
              kubernetesVersion: "1.35"
              podCidr: 10.244.0.0/33
              serviceCidr: 10.96.0.1/12
              siteNetworks: [172.16.0.0, "fd00::/200", office]
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """,
            "inv.yaml:4:12: cluster.podCidr: '10.244.0.0/33' is not a valid CIDR (expected an IPv4 or IPv6 network such as 10.244.0.0/16)",
            "inv.yaml:5:16: cluster.serviceCidr: '10.96.0.1/12' has host bits set (expected the network address: 10.96.0.0/12)",
            "inv.yaml:6:18: cluster.siteNetworks[0]: '172.16.0.0' is not a valid CIDR (expected a network with its prefix length, such as 172.16.0.0/32)",
            "inv.yaml:6:30: cluster.siteNetworks[1]: 'fd00::/200' is not a valid CIDR (expected an IPv4 or IPv6 network such as 10.244.0.0/16)",
            "inv.yaml:6:44: cluster.siteNetworks[2]: 'office' is not a valid CIDR (expected an IPv4 or IPv6 network such as 10.244.0.0/16)");
    }

    @Test void ipv6PodAndServiceNetworksAreRefused() {
        assertErrors("""
            cluster:
              name: gpu-lab
              kubernetesVersion: "1.35"
              podCidr: "fd00:244::/56"
              serviceCidr: "fd00:96::/108"
            nodes: [{ name: m, address: "fd00::10", role: master }]
            """,
            "inv.yaml:4:12: cluster.podCidr: IPv6/dual-stack pod networks are not supported yet (expected an IPv4 CIDR)",
            "inv.yaml:5:16: cluster.serviceCidr: IPv6/dual-stack service networks are not supported yet (expected an IPv4 CIDR)");
    }

    @Test void podAndServiceNetworkSizes() {
        assertErrors("""
            cluster:
              name: gpu-lab
              kubernetesVersion: "1.35"
              podCidr: 10.244.0.0/25
              serviceCidr: 10.0.0.0/8
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """,
            "inv.yaml:4:12: cluster.podCidr: 10.244.0.0/25 is too small (kubeadm gives each node a /24 of it: expected a prefix of /24 or shorter, such as /16)",
            "inv.yaml:5:16: cluster.serviceCidr: 10.0.0.0/8 is too large (kube-apiserver takes at most 2^20 service addresses: expected a prefix of /12 or longer)");
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35", podCidr: 10.244.0.0/23, serviceCidr: 10.96.0.0/29 }
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
              - { name: w1, address: 10.0.0.2, role: worker }
              - { name: w2, address: 10.0.0.3, role: worker }
            """,
            "inv.yaml:1:63: cluster.podCidr: 10.244.0.0/23 has room for 2 nodes (kubeadm gives each node a /24), but the inventory has 3 (expected a shorter prefix, such as /16)",
            "inv.yaml:1:91: cluster.serviceCidr: 10.96.0.0/29 is too small (kubeadm puts the cluster DNS at its 10th address: expected a prefix of /28 or shorter)");
    }

    @Test void badPorts() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            ssh: { port: 0, bastion: { address: jump, port: ssh } }
            nodes: [{ name: m, address: 10.0.0.1, role: master, ssh: { port: 65536 } }]
            """,
            "inv.yaml:2:14: ssh.port: port 0 is out of range (expected 1..65535)",
            "inv.yaml:2:49: ssh.bastion.port: expected a port number (1..65535), got a string ('ssh')",
            "inv.yaml:3:66: nodes[0].ssh.port: port 65536 is out of range (expected 1..65535)");
    }

    @Test void unknownChoices() {
        assertErrors("""
            cluster:
              name: gpu-lab
              kubernetesVersion: "1.35"
              runtime: cri-o
              cni: cilium
              packages: apt
            nodes: [{ name: m, address: 10.0.0.1, role: control-plane, connection: winrm }]
            """,
            "inv.yaml:4:12: cluster.runtime: unknown runtime 'cri-o' (expected one of: docker, containerd)",
            "inv.yaml:5:8: cluster.cni: unknown cni 'cilium' (expected one of: flannel, calico)",
            "inv.yaml:6:13: cluster.packages: unknown packages value 'apt' (expected one of: upstream, system)",
            "inv.yaml:7:45: nodes[0].role: unknown role 'control-plane' (expected one of: master, worker)",
            "inv.yaml:7:72: nodes[0].connection: unknown connection 'winrm' (expected one of: ssh, local)");
    }

    @Test void nfsServerMustBeANode() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - { name: master, address: 10.0.0.1, role: master }
              - { name: worker-1, address: 10.0.0.2, role: worker }
            storage:
              nfs:
                server: nas
                exports: [{ path: /export/dataset }]
            """,
            "inv.yaml:7:13: storage.nfs.server: no node named 'nas' (expected the name of a node: master, worker-1; or, for a NAS that is not a node, its IP address or fully qualified host name)");
    }

    @Test void unquotedKubernetesVersionIsANumber() {
        assertErrors("""
            cluster:
              name: gpu-lab
              kubernetesVersion: 1.30
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """,
            "inv.yaml:3:22: cluster.kubernetesVersion: 1.30 is a number in YAML (quote it: \"1.30\")");
    }

    @Test void kubernetesVersionIsAMinorOfASupportedRelease() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35.2" }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """,
            "inv.yaml:1:46: cluster.kubernetesVersion: '1.35.2' is a patch version (expected a minor version such as \"1.35\": gpuctl installs and holds its newest patch)");
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "v1.35" }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """,
            "inv.yaml:1:46: cluster.kubernetesVersion: 'v1.35' is not a Kubernetes minor version (expected e.g. \"1.35\")");
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.29" }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """,
            "inv.yaml:1:46: cluster.kubernetesVersion: '1.29' is too old (expected 1.31 or newer: gpuctl writes kubeadm.k8s.io/v1beta4 configuration)");
    }

    @Test void clusterNameIsADnsLabel() {
        assertErrors("""
            cluster: { name: GPU_lab, kubernetesVersion: "1.35" }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """,
            "inv.yaml:1:18: cluster.name: 'GPU_lab' is not a valid cluster name (expected a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)");
    }

    @Test void nodeNamesAreDnsSubdomains() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - { name: Master, address: 10.0.0.1, role: master }
              - { name: worker-.1, address: 10.0.0.2, role: worker }
            """,
            "inv.yaml:3:13: nodes[0].name: 'Master' is not a valid node name (expected a DNS-1123 subdomain, as Kubernetes needs for node names: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)",
            "inv.yaml:4:13: nodes[1].name: 'worker-.1' is not a valid node name (expected a DNS-1123 subdomain, as Kubernetes needs for node names: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)");
    }

    @Test void emptyNodeList() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes: []
            """,
            "inv.yaml:2:8: nodes: the list is empty (expected at least one node: 1, 3 or 5 masters and any number of workers)");
    }

    @Test void exportPathsAreAbsoluteAndUnique() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            storage:
              nfs:
                server: m
                exports:
                  - { path: export/dataset }
                  - { path: /export/ckpt }
                  - { path: "/export/my data" }
                  - { path: /export/ckpt, readOnly: true }
                  - { path: /export/../etc }
                  - { path: /data/data }
            """,
            "inv.yaml:7:17: storage.nfs.exports[0].path: 'export/dataset' is not usable as an export path: it is not an absolute path (expected an absolute path such as /export/dataset, of letters, digits, '.', '_', '-', '+' and '@', without '.' or '..' parts, '//' or a trailing '/')",
            "inv.yaml:9:17: storage.nfs.exports[2].path: '/export/my data' is not usable as an export path: it contains a space (expected an absolute path such as /export/dataset, of letters, digits, '.', '_', '-', '+' and '@', without '.' or '..' parts, '//' or a trailing '/')",
            "inv.yaml:10:17: duplicate export path '/export/ckpt' (first at line 8)",
            "inv.yaml:11:17: storage.nfs.exports[4].path: '/export/../etc' is not usable as an export path: it has a '..' part (expected an absolute path such as /export/dataset, of letters, digits, '.', '_', '-', '+' and '@', without '.' or '..' parts, '//' or a trailing '/')");
    }

    @Test void labelsMayNotUseReservedPrefixes() {
        String reserved = "(Kubernetes, its node roles and the NVIDIA device plugin own those labels; expected your own prefix,"
            + " such as team or example.com/team)";
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - name: m
                address: 10.0.0.1
                role: master
                labels:
                  kubernetes.io/hostname: x
                  node-role.kubernetes.io/control-plane: ""
                  k8s.io/a: b
                  topology.K8S.io/zone: z
                  nvidia.com/gpu.present: "true"
                  feature.node.kubernetes.io/x: y
                  example.com/team: ok
                  kubernetes.io.example.com/fine: ok
                  team: ok
            """,
            "inv.yaml:7:7: nodes[0].labels: 'kubernetes.io/hostname' uses the reserved prefix kubernetes.io/ " + reserved,
            "inv.yaml:8:7: nodes[0].labels: 'node-role.kubernetes.io/control-plane' uses the reserved prefix *.kubernetes.io/"
                + " (node-role.kubernetes.io/) " + reserved,
            "inv.yaml:9:7: nodes[0].labels: 'k8s.io/a' uses the reserved prefix k8s.io/ " + reserved,
            "inv.yaml:10:7: nodes[0].labels: 'topology.K8S.io/zone' is not a valid label key (expected [prefix/]name: a name of at"
                + " most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit, and an optional DNS subdomain prefix)",
            "inv.yaml:10:7: nodes[0].labels: 'topology.K8S.io/zone' uses the reserved prefix *.k8s.io/ (topology.k8s.io/) " + reserved,
            "inv.yaml:11:7: nodes[0].labels: 'nvidia.com/gpu.present' uses the reserved prefix nvidia.com/ " + reserved,
            "inv.yaml:12:7: nodes[0].labels: 'feature.node.kubernetes.io/x' uses the reserved prefix *.kubernetes.io/"
                + " (feature.node.kubernetes.io/) " + reserved);
    }

    /** What an NFS layer decodes (awk's and exportfs's backslash escapes, quotes, comments, option lists) never loads. */
    @Test void exportPathsUseSafeCharactersOnly() {
        Map<String, String> refused = new java.util.LinkedHashMap<>();
        refused.put("\"/export/a b\"", "it contains a space");
        refused.put("'/export/a\\057..'", "it contains '\\'");
        refused.put("'/export/a\"'", "it contains '\"'");
        refused.put("\"/export/a#b\"", "it contains '#'");
        refused.put("\"/export/a,b\"", "it contains ','");
        refused.put("/export/a(rw)", "it contains '('");
        refused.put("/export/a)", "it contains ')'");
        refused.put("\"/export/a\\nb\"", "it contains a newline");
        refused.put("/export/..", "it has a '..' part");
        refused.put("/export/./x", "it has a '.' part");
        refused.put("/export//x", "it has an empty part ('//')");
        refused.put("/export/x/", "it ends with '/'");
        refused.put("/", "it is / itself");
        refused.put("\"/export/\\u0085x\"", "it contains a control character (U+0085)");
        refused.put("/export/d\u00e9j\u00e0", "it contains '\u00e9'");
        for (var c : refused.entrySet()) {
            List<String> errors = errors("""
                cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
                nodes: [{ name: m, address: 10.0.0.1, role: master }]
                storage:
                  nfs:
                    server: m
                    exports:
                      - { readOnly: true, path: PATH }
                """.replace("PATH", c.getKey()), BASE);
            assertEquals(1, errors.size(), () -> c.getKey() + ": " + errors);
            assertTrue(errors.get(0).startsWith("inv.yaml:7:33: storage.nfs.exports[0].path: '"), errors.get(0));
            assertTrue(errors.get(0).contains("' is not usable as an export path: " + c.getValue() + " (expected"),
                () -> c.getKey() + ": " + errors.get(0));
        }
        assertEquals("/srv/nfs/Data_set-2.v1+x@y", InventoryLoader.parse("inv.yaml", """
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            storage: { nfs: { server: m, exports: [ { path: /srv/nfs/Data_set-2.v1+x@y } ] } }
            """, BASE, Map.of("HOME", "/home/x")).nfs().orElseThrow().exports().get(0).path());
    }

    @Test void rootSquashDefaultsToTrueOnEveryExportAndIsABoolean() {
        Inventory inv = InventoryLoader.parse("inv.yaml", """
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            storage:
              nfs:
                server: m
                exports:
                  - { path: /export/dataset, readOnly: true }
                  - { path: /export/ckpt }
                  - { path: /export/home, rootSquash: true }
                  - { path: /export/tools, readOnly: true, rootSquash: false }
            """, BASE, Map.of("HOME", "/home/x"));
        assertEquals(List.of(new NfsExport("/export/dataset", true, true), new NfsExport("/export/ckpt", false, true),
            new NfsExport("/export/home", false, true), new NfsExport("/export/tools", true, false)), inv.nfs().orElseThrow().exports());
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            storage: { nfs: { server: m, exports: [ { path: /export/ckpt, rootSquash: maybe } ] } }
            """, "inv.yaml:3:75: storage.nfs.exports[0].rootSquash: expected true or false, got a string ('maybe')");
    }

    @Test void nfsNeedsExports() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            storage: { nfs: { server: m } }
            """,
            "inv.yaml:3:17: missing required key 'exports' in storage.nfs (expected a list of exports such as { path: /export/dataset })");
    }

    @Test void hostKeyMustBeASha256Fingerprint() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - name: m
                address: 10.0.0.1
                role: master
                ssh: { hostKey: "MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48" }
            """,
            "inv.yaml:6:21: nodes[0].ssh.hostKey: 'MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48' is not a SHA-256 host key fingerprint (expected \"SHA256:\" and 43 base64 characters, as `ssh-keygen -lf` prints it)");
    }

    @Test void labelsFollowKubernetesSyntax() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - name: m
                address: 10.0.0.1
                role: master
                labels:
                  team name: vision
                  Example.com/rack: r1
                  tier: "-gold"
                  owner:
            """,
            "inv.yaml:7:7: nodes[0].labels: 'team name' is not a valid label key (expected [prefix/]name: a name of at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit, and an optional DNS subdomain prefix)",
            "inv.yaml:8:7: nodes[0].labels: 'Example.com/rack' is not a valid label key (expected [prefix/]name: a name of at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit, and an optional DNS subdomain prefix)",
            "inv.yaml:9:13: nodes[0].labels.tier: '-gold' is not a valid label value (expected at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit)",
            "inv.yaml:10:13: nodes[0].labels.owner: expected a label value (a string), got an empty value");
    }

    @Test void manifestsAreUrlsOrExistingFiles() throws IOException {
        Files.createDirectories(dir.resolve("manifests"));
        List<String> errors = errors("""
            cluster:
              name: gpu-lab
              kubernetesVersion: "1.35"
              cniManifest: ftp://mirror/flannel.yml
              devicePlugin:
                version: "0.20.0"
                manifest: manifests
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """, dir);
        assertEquals(List.of(
            "inv.yaml:4:16: cluster.cniManifest: unsupported URL scheme 'ftp' (expected an http:// or https:// URL, or a local file)",
            "inv.yaml:6:14: cluster.devicePlugin.version: '0.20.0' is not a release tag (expected e.g. \"v0.20.0\")",
            "inv.yaml:7:15: cluster.devicePlugin.manifest: " + dir.resolve("manifests") + " is not a regular file (expected a manifest file)"),
            errors);
        assertEquals(List.of("inv.yaml:1:67: cluster.cniManifest: file " + dir.resolve("flannel.yml")
                + " does not exist (expected an http(s) URL, or a local file relative to the inventory's directory)",
                "inv.yaml:1:106: cluster.devicePlugin.manifest: 'https://exa mple.com/x.yml' is not a valid URL (expected e.g. https://example.com/manifest.yaml)"),
            errors("""
                cluster: { name: gpu-lab, kubernetesVersion: "1.35", cniManifest: flannel.yml, devicePlugin: { manifest: "https://exa mple.com/x.yml" } }
                nodes: [{ name: m, address: 10.0.0.1, role: master }]
                """, dir));
    }

    /** A local manifest that is not UTF-8, over 16 MiB, not YAML or empty is refused at load, the file named. */
    @Test void unusableLocalManifestsAreRefusedAtLoad() throws IOException {
        Files.write(dir.resolve("latin1.yml"), "kind: ConfigMap # caf\u00e9\n".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        try (var f = new java.io.RandomAccessFile(dir.resolve("huge.yml").toFile(), "rw")) {
            f.setLength(16L * 1024 * 1024 + 1);
        }
        Files.writeString(dir.resolve("broken.yml"), "kind: DaemonSet\nspec: [unclosed\n");
        Files.writeString(dir.resolve("empty.yml"), "# nothing\n");
        Map<String, String> cases = Map.of(
            "latin1.yml", "manifest " + dir.resolve("latin1.yml") + " is not UTF-8 text (expected a YAML manifest)",
            "huge.yml", "manifest " + dir.resolve("huge.yml") + " is 16777217 bytes (gpuctl reads at most 16 MiB)",
            "broken.yml", "manifest " + dir.resolve("broken.yml") + " is not valid YAML at line 3, column 1:",
            "empty.yml", "manifest " + dir.resolve("empty.yml") + " has no YAML document (expected a manifest)");
        for (var c : cases.entrySet()) {
            List<String> errors = errors("""
                cluster: { name: gpu-lab, kubernetesVersion: "1.35", cniManifest: FILE }
                nodes: [{ name: m, address: 10.0.0.1, role: master }]
                """.replace("FILE", c.getKey()), dir);
            assertEquals(1, errors.size(), errors::toString);
            assertTrue(errors.get(0).startsWith("inv.yaml:1:67: cluster.cniManifest: " + c.getValue()), errors.get(0));
        }
    }

    @Test void sshSettingsAreChecked() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            ssh: { user: "-oProxyCommand=x", identityFile: ~bob/.ssh/id, bastion: { user: ops } }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """,
            "inv.yaml:2:14: ssh.user: '-oProxyCommand=x' is not a valid user name (expected at most 32 letters, digits, '_', '.' and '-', not starting with '-' or '.')",
            "inv.yaml:2:48: ssh.identityFile: '~bob/.ssh/id' names another user's home, which is not supported (expected '~/…', an absolute path, or a path relative to the inventory)",
            "inv.yaml:2:71: missing required key 'address' in ssh.bastion (expected the bastion's IP address or host name)");
    }

    @Test void onlyOneLocalNode() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: 10.0.0.1, role: master, connection: local }
              - { name: w, address: 10.0.0.2, role: worker, connection: local }
            """,
            "inv.yaml:4:61: a second node with connection: local (only the machine gpuctl runs on can be local, and node 'm' at line 3 is already)");
    }

    @Test void timeServersAreAddresses() {
        assertErrors("""
            cluster: { name: gpu-lab, kubernetesVersion: "1.35", timeServers: ["ntp pool", [x]] }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """,
            "inv.yaml:1:68: cluster.timeServers[0]: 'ntp pool' is not a valid time server (expected an IPv4 or IPv6 address, or a host name per RFC 1123)",
            "inv.yaml:1:80: cluster.timeServers[1]: expected a string, got a list");
    }

    @Test void yamlFeaturesThatAreRefused() {
        assertErrors("""
            base: &base { name: gpu-lab }
            cluster:
              <<: *base
              kubernetesVersion: !!binary "MS4zNQ=="
            nodes: [{ name: m, address: 10.0.0.1, role: !role master }]
            """,
            "inv.yaml:1:1: unknown key 'base' in the top level (expected one of: cluster, ssh, nodes, storage, teams, kueue)",
            "inv.yaml:3:3: merge keys ('<<') are not supported in cluster (write the keys out)",
            "inv.yaml:3:3: missing required key 'name' in cluster (expected a DNS-1123 label such as 'gpu-lab')",
            "inv.yaml:4:22: cluster.kubernetesVersion: expected a string, got a value tagged 'tag:yaml.org,2002:binary' (YAML tags are not supported)",
            "inv.yaml:5:45: nodes[0].role: expected a string, got a value tagged '!role' (YAML tags are not supported)");
    }

    @Test void severalErrorsAreAllReportedInFileOrder() {
        List<String> errors = errors("""
            cluster:
              name: gpu-lab
              kubernetesVersion: 1.35
              runtime: podman
              podCidr: 172.16.0.0/12
            ssh:
              prot: 22
            nodes:
              - { name: master, address: 172.16.10.90, role: master }
              - { name: master, address: 172.16.10.91, role: worker, gpu: maybe }
            storage:
              nfs: { server: nas, exports: [{ path: data }] }
            """, BASE);
        assertEquals(List.of(
            "inv.yaml:3:22: cluster.kubernetesVersion: 1.35 is a number in YAML (quote it: \"1.35\")",
            "inv.yaml:4:12: cluster.runtime: unknown runtime 'podman' (expected one of: docker, containerd)",
            "inv.yaml:7:3: unknown key 'prot' in ssh (did you mean 'port'?)",
            "inv.yaml:10:13: duplicate node name 'master' (first at line 9)",
            "inv.yaml:10:63: nodes[1].gpu: expected true or false, got a string ('maybe')",
            "inv.yaml:12:18: storage.nfs.server: no node named 'nas' (expected the name of a node: master, master; or, for a NAS that is not a node, its IP address or fully qualified host name)",
            "inv.yaml:12:41: storage.nfs.exports[0].path: 'data' is not usable as an export path: it is not an absolute path (expected an absolute path such as /export/dataset, of letters, digits, '.', '_', '-', '+' and '@', without '.' or '..' parts, '//' or a trailing '/')"),
            errors);
    }

    @Test void aliasBombIsRefused() {
        StringBuilder yaml = new StringBuilder("a: &a [x, x]\n");
        for (int i = 0; i < 60; i++) yaml.append("b").append(i).append(": &b").append(i).append(" [*a, *a]\n");
        List<String> errors = errors(yaml.toString(), BASE);
        assertEquals(1, errors.size(), errors.toString());
        assertEquals("inv.yaml:27:12: more than 50 aliases (*name) in one file (write the values out, or use fewer aliases)",
            errors.get(0));
    }

    @Test void deepNestingIsRefused() {
        String yaml = "cluster: " + "[".repeat(5000) + "]".repeat(5000) + "\n";
        List<String> errors = errors(yaml, BASE);
        assertEquals(1, errors.size(), errors.toString());
        assertTrue(errors.get(0).startsWith("inv.yaml"), errors.get(0));
    }

    @Test void recursiveStructureDoesNotLoop() {
        assertErrors("""
            cluster: &c { name: gpu-lab, kubernetesVersion: "1.35", devicePlugin: *c }
            nodes: [{ name: m, address: 10.0.0.1, role: master }]
            """,
            "inv.yaml:1:15: unknown key 'name' in cluster.devicePlugin (expected one of: version, manifest)",
            "inv.yaml:1:30: unknown key 'kubernetesVersion' in cluster.devicePlugin (expected one of: version, manifest)",
            "inv.yaml:1:57: unknown key 'devicePlugin' in cluster.devicePlugin (expected one of: version, manifest)");
    }
}
