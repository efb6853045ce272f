package dev.gpuctl.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.gpu.DevicePluginSharing.Config;
import dev.gpuctl.text.HostConfException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** The device plugin's sharing setup, on upstream's static manifest (the file the test bed serves). */
class DevicePluginSharingTest {
    static final Config TS4 = new Config("time-slicing-4", "time-slicing", 4);
    static final Config MPS2 = new Config("mps-2", "mps", 2);

    static String upstream() throws IOException {
        return Files.readString(Path.of("testbed/manifests/nvidia-device-plugin-v0.20.0.yml"));
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> docs(String yaml) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object d : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(yaml)) if (d != null) out.add((Map<String, Object>) d);
        return out;
    }

    static Map<String, Object> kind(List<Map<String, Object>> docs, String kind) {
        return docs.stream().filter(d -> kind.equals(d.get("kind"))).findFirst().orElseThrow(() -> new AssertionError("no " + kind));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> at(Map<String, Object> m, String... keys) {
        Map<String, Object> cur = m;
        for (String k : keys) cur = (Map<String, Object>) cur.get(k);
        return cur;
    }

    @Test void withoutSharingTheUpstreamManifestIsLeftByteForByte() throws IOException {
        assertEquals(upstream(), DevicePluginSharing.patch(upstream(), List.of()));
    }

    @Test @SuppressWarnings("unchecked") void timeSlicingAddsTheConfigManagerTheConfigMapAndItsAccess() throws IOException {
        String patched = DevicePluginSharing.patch(upstream(), List.of(TS4));
        List<Map<String, Object>> docs = docs(patched);
        Map<String, Object> pod = at(kind(docs, "DaemonSet"), "spec", "template", "spec");
        assertEquals("nvidia-device-plugin", pod.get("serviceAccountName"));
        assertEquals(true, pod.get("shareProcessNamespace"));
        List<Map<String, Object>> init = (List<Map<String, Object>>) pod.get("initContainers");
        assertEquals("nvidia-device-plugin-init", init.get(0).get("name"));
        assertEquals(List.of("config-manager"), init.get(0).get("command"));
        assertTrue(init.get(0).get("env").toString().contains("{name=NODE_LABEL, value=nvidia.com/device-plugin.config}"), init::toString);
        assertTrue(init.get(0).get("env").toString().contains("{name=DEFAULT_CONFIG, value=none}"), init::toString);
        List<Map<String, Object>> containers = (List<Map<String, Object>>) pod.get("containers");
        assertEquals(List.of("nvidia-device-plugin-sidecar", "nvidia-device-plugin-ctr"), containers.stream().map(c -> c.get("name")).toList());
        assertEquals("nvcr.io/nvidia/k8s-device-plugin:v0.20.0", containers.get(0).get("image"), "the config manager is the plugin's own image");
        assertTrue(containers.get(1).get("env").toString().contains("{name=CONFIG_FILE, value=/config/config.yaml}"));
        assertTrue(pod.get("volumes").toString().contains("{name=available-configs, configMap={name=nvidia-device-plugin-configs}}"));
        Map<String, Object> cm = kind(docs, "ConfigMap");
        assertEquals("kube-system", at(cm, "metadata").get("namespace"));
        Map<String, Object> data = at(cm, "data");
        assertEquals(List.of("none", "time-slicing-4"), List.copyOf(data.keySet()));
        Map<String, Object> ts = (Map<String, Object>) new Yaml().load((String) data.get("time-slicing-4"));
        assertEquals("v1", ts.get("version"));
        assertEquals("[{name=nvidia.com/gpu, replicas=4}]", at(ts, "sharing", "timeSlicing").get("resources").toString());
        assertEquals(false, at(ts, "sharing", "timeSlicing").get("renameByDefault"), "shares stay nvidia.com/gpu, so job specs need no change");
        assertFalse(((String) data.get("none")).contains("sharing"));
        Map<String, Object> role = kind(docs, "ClusterRole");
        assertEquals("[{apiGroups=[], resources=[nodes], verbs=[get, list, watch]}]", role.get("rules").toString(), "reads node labels, nothing else");
        assertEquals("nvidia-device-plugin", ((List<Map<String, Object>>) kind(docs, "ClusterRoleBinding").get("subjects")).get(0).get("name"));
        assertFalse(patched.contains("mps-control-daemon"), "no MPS daemon without MPS");
    }

    @Test void patchingTwiceGivesTheSameTextAndDroppingSharingUndoesIt() throws IOException {
        String once = DevicePluginSharing.patch(upstream(), List.of(TS4, MPS2));
        assertEquals(once, DevicePluginSharing.patch(once, List.of(TS4, MPS2)));
        String changed = DevicePluginSharing.patch(once, List.of(new Config("time-slicing-8", "time-slicing", 8)));
        assertNotEquals(once, changed);
        assertFalse(changed.contains("mps-2") || changed.contains("time-slicing-4"), changed);
        assertEquals(docs(upstream()), docs(DevicePluginSharing.patch(changed, List.of())), "back to upstream's objects");
    }

    @Test @SuppressWarnings("unchecked") void mpsAddsTheControlDaemonOnNodesLabelledForIt() throws IOException {
        List<Map<String, Object>> docs = docs(DevicePluginSharing.patch(upstream(), List.of(MPS2)));
        Map<String, Object> daemon = docs.stream().filter(d -> "DaemonSet".equals(d.get("kind"))
            && "nvidia-device-plugin-mps-control-daemon".equals(at(d, "metadata").get("name"))).findFirst().orElseThrow();
        Map<String, Object> pod = at(daemon, "spec", "template", "spec");
        assertEquals(Map.of("nvidia.com/mps.capable", "true"), pod.get("nodeSelector"));
        assertTrue(pod.get("containers").toString().contains("command=[mps-control-daemon]"), pod::toString);
        Map<String, Object> mps = (Map<String, Object>) new Yaml().load((String) at(kind(docs, "ConfigMap"), "data").get("mps-2"));
        assertEquals("[{name=nvidia.com/gpu, replicas=2}]", at(mps, "sharing", "mps").get("resources").toString());
    }

    @Test void aManifestWithoutThePluginDaemonSetIsRefusedWithWhatToDo() {
        String other = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n";
        HostConfException e = assertThrows(HostConfException.class, () -> DevicePluginSharing.patch(other, List.of(TS4)));
        assertTrue(e.getMessage().contains("no DaemonSet running the k8s-device-plugin image"), e::getMessage);
        assertTrue(e.getMessage().contains("leave gpuSharing out"), e::getMessage);
        assertEquals(other, DevicePluginSharing.patch(other, List.of()), "without sharing any manifest is left as it is");
    }
}
