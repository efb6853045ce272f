package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.text.HostConfException;
import dev.gpuctl.text.Json;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What the cluster says of its control plane, the refusals, and the texts the endpoint migration edits. */
class EndpointMigrationTest {
    static final String CC = "apiServer: {}\napiVersion: kubeadm.k8s.io/v1beta4\nclusterName: lab\ncontrolPlaneEndpoint: 10.0.0.11:6443\n"
        + "kind: ClusterConfiguration\nkubernetesVersion: v1.35.0\nnetworking:\n  dnsDomain: cluster.local\n  podSubnet: 10.244.0.0/16\n";

    static String cm(String cc) {
        return "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"kubeadm-config\",\"namespace\":\"kube-system\","
            + "\"resourceVersion\":\"7\"},\"data\":{\"ClusterConfiguration\":" + Json.MAPPER.valueToTree(cc) + "}}";
    }

    static String node(String name, boolean master, String ready) {
        return "{\"metadata\":{\"name\":\"" + name + "\",\"labels\":{" + (master ? "\"node-role.kubernetes.io/control-plane\":\"\"" : "")
            + "}},\"status\":{\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"False\"},{\"type\":\"Ready\",\"status\":\"" + ready + "\"}]}}";
    }

    static String answer(String cc, String... nodes) {
        return cm(cc) + "\n" + EndpointMigration.SEPARATOR + "\n{\"kind\":\"List\",\"items\":[" + String.join(",", nodes) + "]}\n";
    }

    @Test void theViewIsTheEndpointAndTheControlPlaneNodes() {
        EndpointMigration.View v = EndpointMigration.View.parse(answer(CC, node("m1", true, "True"), node("w1", false, "False"))).orElseThrow();
        assertEquals("10.0.0.11:6443", v.endpoint());
        assertEquals(List.of(new EndpointMigration.Master("m1", true)), v.masters());
        assertEquals(Optional.empty(), EndpointMigration.View.parse("  \n"));
        assertEquals("", EndpointMigration.View.parse(answer(CC.replace("controlPlaneEndpoint: 10.0.0.11:6443\n", ""))).orElseThrow().endpoint());
        assertThrows(HostConfException.class, () -> EndpointMigration.View.parse(answer("- a list\n")));
        assertThrows(HostConfException.class, () -> EndpointMigration.View.parse("{}"));
    }

    @Test void aSingleMasterMovesToAVipAndAClusterWithoutAnEndpointToo() {
        EndpointMigration.View single = new EndpointMigration.View("10.0.0.11:6443", List.of(new EndpointMigration.Master("m1", true)));
        assertEquals(Optional.empty(), EndpointMigration.refusal(single, List.of("m1", "m2", "m3"), "10.0.0.100:8443", "10.0.0.11:6443", "inv.yaml"));
        EndpointMigration.View old = new EndpointMigration.View("", List.of(new EndpointMigration.Master("m1", true)));
        assertEquals(Optional.empty(), EndpointMigration.refusal(old, List.of("m1", "m2", "m3"), "10.0.0.100:8443", "10.0.0.11:6443", "inv.yaml"));
        assertEquals(Optional.empty(), EndpointMigration.refusal(old, List.of("m1"), "10.0.0.11:6443", "10.0.0.11:6443", "inv.yaml"));
    }

    @Test void aShrinkAnEndpointMovedFromALoadBalancerAndAChangeWhileAMasterIsDownAreRefused() {
        EndpointMigration.View three = new EndpointMigration.View("10.0.0.100:8443", List.of(new EndpointMigration.Master("m1", true),
            new EndpointMigration.Master("m2", true), new EndpointMigration.Master("m3", true)));
        assertTrue(EndpointMigration.refusal(three, List.of("m1", "m2"), "10.0.0.100:8443", "10.0.0.11:6443", "inv.yaml").orElseThrow()
            .contains("control-plane node(s) m3 that the inventory does not list as masters; gpuctl does not shrink a control plane by an"
                + " inventory edit (its etcd member would be left behind): remove it first (gpuctl remove-node m3 inv.yaml)"));
        assertTrue(EndpointMigration.refusal(three, List.of("m1", "m2", "m3"), "10.0.0.11:6443", "10.0.0.11:6443", "inv.yaml").orElseThrow()
            .startsWith("the cluster's controlPlaneEndpoint is 10.0.0.100:8443 and the inventory asks for 10.0.0.11:6443; gpuctl moves only"));
        assertEquals(Optional.empty(), EndpointMigration.refusal(three, List.of("m1", "m2", "m3"), "10.0.0.100:8443", "10.0.0.11:6443", "inv.yaml"));
        EndpointMigration.View down = new EndpointMigration.View("10.0.0.11:6443", List.of(new EndpointMigration.Master("m1", false)));
        assertTrue(EndpointMigration.refusal(down, List.of("m1", "m2", "m3"), "10.0.0.100:8443", "10.0.0.11:6443", "inv.yaml").orElseThrow()
            .startsWith("master m1 is not Ready; gpuctl changes no control plane (the endpoint 10.0.0.11:6443 to 10.0.0.100:8443, masters added)"));
        // nothing changes: a master down is verify's business, not a refusal
        assertEquals(Optional.empty(), EndpointMigration.refusal(down, List.of("m1"), "10.0.0.11:6443", "10.0.0.11:6443", "inv.yaml"));
    }

    @Test void theClusterConfigurationLosesItsEndpointAndKeepsTheRest() {
        String without = EndpointMigration.withoutEndpoint(CC);
        assertEquals("", EndpointMigration.endpointOf(without));
        assertEquals("10.0.0.100:8443", EndpointMigration.endpointOf(without + "controlPlaneEndpoint: \"10.0.0.100:8443\"\n"));
        assertTrue(without.contains("clusterName: lab\n") && without.contains("  podSubnet: 10.244.0.0/16\n"), without);
        assertEquals(CC, EndpointMigration.clusterConfiguration(cm(CC)));
    }

    static final String CLUSTER_INFO = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cluster-info\",\"namespace\":"
        + "\"kube-public\",\"resourceVersion\":\"12\",\"managedFields\":[{}]},\"data\":{\"kubeconfig\":"
        + Json.MAPPER.valueToTree("apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: QUJD\n    server: https://10.0.0.11:6443\n"
            + "  name: \"\"\ncontexts: null\ncurrent-context: \"\"\nkind: Config\n") + ",\"jws-kubeconfig-abcdef\":\"x\"}}";

    @Test void aConfigMapsKubeconfigIsPointedAtTheEndpointAndKeepsEverythingElse() {
        assertEquals(Optional.of(List.of("https://10.0.0.11:6443")), EndpointMigration.configMapServers(CLUSTER_INFO, "kubeconfig"));
        String edited = EndpointMigration.configMapWithServer(CLUSTER_INFO, "kubeconfig", "https://10.0.0.100:8443");
        assertEquals(Optional.of(List.of("https://10.0.0.100:8443")), EndpointMigration.configMapServers(edited, "kubeconfig"));
        assertTrue(edited.contains("\"resourceVersion\":\"12\"") && edited.contains("\"jws-kubeconfig-abcdef\":\"x\"")
            && edited.contains("certificate-authority-data: QUJD") && !edited.contains("managedFields"), edited);
        assertEquals(Optional.empty(), EndpointMigration.configMapServers("", "kubeconfig"));
        assertThrows(HostConfException.class, () -> EndpointMigration.configMapServers(CLUSTER_INFO, "kubeconfig.conf"));
    }

    @Test void subjectAltNamesAndHosts() {
        assertEquals(Set.of("kubernetes", "m1", "10.96.0.1", "10.0.0.100"), EndpointMigration.subjectAltNames(
            "X509v3 Subject Alternative Name: \n    DNS:kubernetes, DNS:m1, IP Address:10.96.0.1, IP Address:10.0.0.100\n"));
        assertEquals("10.0.0.100", EndpointMigration.host("10.0.0.100:8443"));
        assertEquals("lb.lab", EndpointMigration.host("lb.lab:6443"));
        assertEquals("fd00::1", EndpointMigration.host("[fd00::1]:6443"));
    }
}
