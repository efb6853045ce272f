package dev.gpuctl.kube;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.text.Fixtures;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.text.JsonText;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ManifestsTest {

    private static final String FLANNEL = Fixtures.read("manifests/kube-flannel-v0.28.9.yml");
    private static final String CALICO = Fixtures.read("manifests/calico-custom-resources.yaml");

    private static List<Map<String, Object>> docs(String yaml) {
        List<Map<String, Object>> docs = new ArrayList<>();
        for (Object o : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(yaml)) {
            if (o != null) {
                @SuppressWarnings("unchecked") Map<String, Object> m = (Map<String, Object>) o;
                docs.add(m);
            }
        }
        return docs;
    }

    @SuppressWarnings("unchecked")
    private static Object at(Map<String, Object> doc, String... path) {
        Object cur = doc;
        for (String p : path) {
            cur = cur instanceof List<?> l ? l.get(Integer.parseInt(p)) : ((Map<String, Object>) cur).get(p);
        }
        return cur;
    }

    @Test
    void flannelNetworkIsSetAndOnlyThatValueChanges() {
        String out = Manifests.patchFlannelNetwork(FLANNEL, "10.32.0.0/12");
        assertEquals(FLANNEL.replace("\"Network\": \"10.244.0.0/16\"", "\"Network\": \"10.32.0.0/12\""), out);
        assertEquals(FLANNEL.length() - "10.244.0.0/16".length() + "10.32.0.0/12".length(), out.length());
    }

    @Test
    void flannelResultIsStillTheSameManifestWithTheNewNetwork() {
        String out = Manifests.patchFlannelNetwork(FLANNEL, "10.32.0.0/12");
        List<Map<String, Object>> before = docs(FLANNEL);
        List<Map<String, Object>> after = docs(out);
        assertEquals(before.size(), after.size());
        Map<String, Object> cm = after.stream().filter(d -> "ConfigMap".equals(d.get("kind"))).findFirst().orElseThrow();
        JsonNode netConf = JsonText.parse((String) at(cm, "data", "net-conf.json"), "net-conf.json", null);
        assertEquals("10.32.0.0/12", netConf.get("Network").asText());
        assertEquals("vxlan", netConf.at("/Backend/Type").asText());
        assertEquals(false, netConf.get("EnableNFTables").asBoolean());
    }

    @Test
    void flannelIdempotentAndSameCidrIsNoChange() {
        assertEquals(FLANNEL, Manifests.patchFlannelNetwork(FLANNEL, "10.244.0.0/16"));
        String once = Manifests.patchFlannelNetwork(FLANNEL, "10.100.0.0/16");
        assertEquals(once, Manifests.patchFlannelNetwork(once, "10.100.0.0/16"));
    }

    @Test
    void flannelWithoutConfigMapSaysWhatIsMissing() {
        HostConfException e = assertThrows(HostConfException.class,
                () -> Manifests.patchFlannelNetwork(CALICO, "10.32.0.0/12"));
        assertTrue(e.getMessage().contains("no ConfigMap with data.net-conf.json"), e.getMessage());
    }

    @Test
    void flannelNetConfWithoutNetworkSaysSo() {
        String noNetwork = FLANNEL.replace("\"Network\": \"10.244.0.0/16\",", "");
        HostConfException e = assertThrows(HostConfException.class,
                () -> Manifests.patchFlannelNetwork(noNetwork, "10.32.0.0/12"));
        assertTrue(e.getMessage().contains("no \"Network\""), e.getMessage());
    }

    @Test
    void flannelSeesOnlyTheConfigMapsNetConf() {
        // a "Network" string elsewhere (another document, a comment) is not touched
        String extra = "# \"Network\": \"1.2.3.0/24\"\n" + FLANNEL
                + "---\nkind: ConfigMap\napiVersion: v1\nmetadata:\n  name: other\ndata:\n  x.json: '{\"Network\": \"9.9.0.0/16\"}'\n";
        String out = Manifests.patchFlannelNetwork(extra, "10.32.0.0/12");
        assertTrue(out.startsWith("# \"Network\": \"1.2.3.0/24\"\n"));
        assertTrue(out.endsWith("'{\"Network\": \"9.9.0.0/16\"}'\n"));
        assertTrue(out.contains("\"Network\": \"10.32.0.0/12\""));
    }

    @ParameterizedTest
    @ValueSource(strings = {"10.244.0.0", "not-a-cidr", "10.244.0.0/33", "fd00:10:244::/56"})
    void flannelRefusesBadOrIpv6Cidr(String cidr) {
        assertThrows(HostConfException.class, () -> Manifests.patchFlannelNetwork(FLANNEL, cidr));
    }

    @Test
    void calicoPoolCidrIsSetAndOnlyThatValueChanges() {
        String out = Manifests.patchCalicoCidr(CALICO, "10.244.0.0/16");
        assertEquals(CALICO.replace("      cidr: 192.168.0.0/16\n", "      cidr: 10.244.0.0/16\n"), out);
        Map<String, Object> inst = docs(out).get(0);
        assertEquals("10.244.0.0/16", at(inst, "spec", "calicoNetwork", "ipPools", "0", "cidr"));
        assertEquals(26, at(inst, "spec", "calicoNetwork", "ipPools", "0", "blockSize"));
        assertEquals(docs(CALICO).size(), docs(out).size());
        assertTrue(out.startsWith("# This section includes base Calico installation configuration."));
    }

    @Test
    void calicoIdempotent() {
        String once = Manifests.patchCalicoCidr(CALICO, "10.244.0.0/16");
        assertEquals(once, Manifests.patchCalicoCidr(once, "10.244.0.0/16"));
        assertEquals(CALICO, Manifests.patchCalicoCidr(CALICO, "192.168.0.0/16"));
    }

    @Test
    void calicoKeepsQuotingAndPatchesEveryPoolOfTheFamilyOnly() {
        String yaml = """
                apiVersion: operator.tigera.io/v1
                kind: Installation
                metadata:
                  name: default
                spec:
                  calicoNetwork:
                    ipPools:
                      - name: a
                        cidr: "192.168.0.0/17"
                      - name: v6
                        cidr: fd00:10:244::/56
                      - cidr: '192.168.128.0/17'
                        name: b
                """;
        String out = Manifests.patchCalicoCidr(yaml, "10.244.0.0/16");
        assertEquals(yaml.replace("\"192.168.0.0/17\"", "\"10.244.0.0/16\"")
                .replace("'192.168.128.0/17'", "'10.244.0.0/16'"), out);
        String v6 = Manifests.patchCalicoCidr(yaml, "fd00:99::/56");
        assertEquals(yaml.replace("fd00:10:244::/56", "fd00:99::/56"), v6);
    }

    @Test
    void calicoWithoutInstallationSaysSo() {
        HostConfException e = assertThrows(HostConfException.class,
                () -> Manifests.patchCalicoCidr(FLANNEL, "10.244.0.0/16"));
        assertTrue(e.getMessage().contains("no kind: Installation"), e.getMessage());
    }

    @Test
    void calicoWithoutIpPoolsSaysSo() {
        String yaml = "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata:\n  name: default\nspec: {}\n";
        HostConfException e = assertThrows(HostConfException.class, () -> Manifests.patchCalicoCidr(yaml, "10.244.0.0/16"));
        assertTrue(e.getMessage().contains("spec.calicoNetwork.ipPools"), e.getMessage());
    }

    @Test
    void calicoWithoutPoolOfTheFamilySaysSo() {
        HostConfException e = assertThrows(HostConfException.class,
                () -> Manifests.patchCalicoCidr(CALICO, "fd00:10:244::/56"));
        assertTrue(e.getMessage().contains("no IPv6 pool"), e.getMessage());
    }

    @Test
    void calicoRefusesBadCidrAndBadYaml() {
        assertThrows(HostConfException.class, () -> Manifests.patchCalicoCidr(CALICO, "192.168.0.0"));
        assertThrows(HostConfException.class, () -> Manifests.patchCalicoCidr("a: [b\n", "10.244.0.0/16"));
    }

    @Test
    void nonAsciiBeforeTheValueKeepsOffsetsRight() {
        String yaml = "# 팀 클러스터 🚀\napiVersion: operator.tigera.io/v1\nkind: Installation\nspec:\n  calicoNetwork:\n"
                + "    ipPools:\n    - cidr: 192.168.0.0/16\n";
        assertEquals(yaml.replace("192.168.0.0/16", "10.244.0.0/16"), Manifests.patchCalicoCidr(yaml, "10.244.0.0/16"));
    }
}
