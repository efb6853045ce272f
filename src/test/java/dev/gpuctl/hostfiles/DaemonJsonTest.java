package dev.gpuctl.hostfiles;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.text.JsonText;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DaemonJsonTest {

    private static JsonNode json(String text) {
        return JsonText.parse(text, "test", null);
    }

    private static List<String> keys(JsonNode node) {
        List<String> keys = new ArrayList<>();
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) keys.add(it.next());
        return keys;
    }

    @Test
    void emptyFileOnGpuNodeGivesTheGuidesSettingsPrettyPrinted() {
        String expected = """
                {
                  "exec-opts": [
                    "native.cgroupdriver=systemd"
                  ],
                  "log-driver": "json-file",
                  "log-opts": {
                    "max-size": "100m"
                  },
                  "storage-driver": "overlay2",
                  "default-runtime": "nvidia",
                  "runtimes": {
                    "nvidia": {
                      "path": "nvidia-container-runtime",
                      "args": []
                    }
                  }
                }
                """;
        assertEquals(expected, DaemonJson.merge("", true));
        assertEquals(expected, DaemonJson.merge("  \n", true));
        assertEquals(expected, DaemonJson.merge("{}", true));
    }

    @Test
    void emptyFileOnNonGpuNodeHasNoNvidia() {
        String out = DaemonJson.merge("", false);
        assertEquals(List.of("exec-opts", "log-driver", "log-opts", "storage-driver"), keys(json(out)));
        assertFalse(out.contains("nvidia"));
        assertTrue(out.endsWith("}\n"));
    }

    @Test
    void siteKeysSurviveWithValuesAndOrder() {
        String site = """
                {
                  "registry-mirrors": ["https://mirror.example.internal"],
                  "insecure-registries": ["10.0.0.5:5000"],
                  "data-root": "/data/docker",
                  "bip": "172.31.0.1/16",
                  "default-address-pools": [{"base": "172.80.0.0/16", "size": 24}],
                  "max-concurrent-downloads": 10,
                  "live-restore": true,
                  "features": {"buildkit": true},
                  "nested": {"deep": [1, 2.50, null, "x"]}
                }""";
        JsonNode out = json(DaemonJson.merge(site, true));
        JsonNode in = json(site);
        for (String key : keys(in)) assertEquals(in.get(key), out.get(key), key);
        assertEquals(List.of("registry-mirrors", "insecure-registries", "data-root", "bip", "default-address-pools",
                        "max-concurrent-downloads", "live-restore", "features", "nested",
                        "exec-opts", "log-driver", "log-opts", "storage-driver", "default-runtime", "runtimes"),
                keys(out));
        assertTrue(DaemonJson.merge(site, true).contains("2.50"), "numbers are kept as written");
    }

    @Test
    void existingKeysKeepTheirPositionWhenChanged() {
        String site = "{\"storage-driver\": \"devicemapper\", \"registry-mirrors\": [], \"log-driver\": \"journald\"}";
        JsonNode out = json(DaemonJson.merge(site, false));
        assertEquals(List.of("storage-driver", "registry-mirrors", "log-driver", "exec-opts", "log-opts"), keys(out));
        assertEquals("overlay2", out.get("storage-driver").asText());
        assertEquals("json-file", out.get("log-driver").asText());
    }

    @Test
    void otherCgroupDriverIsReplacedInPlaceOtherExecOptsKept() {
        String site = "{\"exec-opts\": [\"native.umask=normal\", \"native.cgroupdriver=cgroupfs\", \"isolation=default\","
                + " \" Native.CgroupDriver = systemd\"]}";
        JsonNode opts = json(DaemonJson.merge(site, false)).get("exec-opts");
        assertEquals(json("[\"native.umask=normal\", \"native.cgroupdriver=systemd\", \"isolation=default\"]"), opts);
    }

    @Test
    void cgroupDriverAppendedWhenOnlyOtherExecOpts() {
        JsonNode opts = json(DaemonJson.merge("{\"exec-opts\": [\"native.umask=normal\"]}", false)).get("exec-opts");
        assertEquals(json("[\"native.umask=normal\", \"native.cgroupdriver=systemd\"]"), opts);
    }

    @Test
    void otherLogOptsKeptMaxSizeSet() {
        JsonNode opts = json(DaemonJson.merge("{\"log-opts\": {\"max-file\": \"3\", \"max-size\": \"10m\"}}", false))
                .get("log-opts");
        assertEquals(json("{\"max-file\": \"3\", \"max-size\": \"100m\"}"), opts);
        assertEquals(List.of("max-file", "max-size"), keys(opts));
    }

    @Test
    void otherRuntimesKeptAndNvidiaAdded() {
        String site = "{\"runtimes\": {\"kata\": {\"path\": \"/usr/bin/kata-runtime\"}}, \"default-runtime\": \"runc\"}";
        JsonNode out = json(DaemonJson.merge(site, true));
        assertEquals("/usr/bin/kata-runtime", out.at("/runtimes/kata/path").asText());
        assertEquals("nvidia-container-runtime", out.at("/runtimes/nvidia/path").asText());
        assertTrue(out.at("/runtimes/nvidia/args").isArray());
        assertEquals("nvidia", out.get("default-runtime").asText());
        assertEquals("default-runtime", keys(out).get(1), "changed in place");
    }

    @Test
    void nvidiaCtkEntryWithAbsolutePathIsKeptAsIs() {
        String site = "{\"runtimes\": {\"nvidia\": {\"args\": [\"--debug\"], \"path\": \"/usr/bin/nvidia-container-runtime\"}}}";
        JsonNode out = json(DaemonJson.merge(site, true));
        assertEquals(json("{\"args\": [\"--debug\"], \"path\": \"/usr/bin/nvidia-container-runtime\"}"),
                out.at("/runtimes/nvidia"));
    }

    @Test
    void wrongNvidiaEntryIsReplaced() {
        JsonNode out = json(DaemonJson.merge("{\"runtimes\": {\"nvidia\": {\"path\": \"runc\"}}}", true));
        assertEquals(json("{\"path\": \"nvidia-container-runtime\", \"args\": []}"), out.at("/runtimes/nvidia"));
    }

    @Test
    void nonGpuNodeLosesANvidiaDefaultRuntimeButKeepsTheRuntimeEntry() {
        String site = "{\"default-runtime\": \"nvidia\", \"runtimes\": {\"nvidia\": {\"path\": \"nvidia-container-runtime\", \"args\": []}}}";
        JsonNode out = json(DaemonJson.merge(site, false));
        assertFalse(out.has("default-runtime"));
        assertEquals("nvidia-container-runtime", out.at("/runtimes/nvidia/path").asText());
    }

    @Test
    void nonGpuNodeKeepsAnotherDefaultRuntime() {
        JsonNode out = json(DaemonJson.merge("{\"default-runtime\": \"crun\"}", false));
        assertEquals("crun", out.get("default-runtime").asText());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "{}", "{\"exec-opts\":[\"native.cgroupdriver=cgroupfs\"],\"default-runtime\":\"nvidia\"}",
            "{\"registry-mirrors\":[\"https://m\"],\"log-opts\":{\"max-file\":\"5\"},\"runtimes\":{\"x\":{\"path\":\"y\"}}}"})
    void idempotentAndProblemFreeAfterMerge(String site) {
        for (boolean gpu : new boolean[]{true, false}) {
            String once = DaemonJson.merge(site, gpu);
            assertEquals(once, DaemonJson.merge(once, gpu));
            assertEquals(List.of(), DaemonJson.problems(once, gpu), once);
        }
    }

    @Test
    void problemsNameEachDifference() {
        String site = "{\"exec-opts\": [\"native.cgroupdriver=cgroupfs\"], \"log-driver\": \"journald\","
                + " \"log-opts\": {\"max-size\": \"10m\"}}";
        List<String> p = DaemonJson.problems(site, true);
        assertEquals(6, p.size(), p.toString());
        assertTrue(p.get(0).contains("native.cgroupdriver=cgroupfs"), p.get(0));
        assertTrue(p.get(1).contains("\"journald\"") && p.get(1).contains("\"json-file\""), p.get(1));
        assertTrue(p.get(2).contains("\"10m\""), p.get(2));
        assertTrue(p.get(3).startsWith("storage-driver is not set"), p.get(3));
        assertTrue(p.get(4).startsWith("default-runtime"), p.get(4));
        assertTrue(p.get(5).startsWith("runtimes.nvidia"), p.get(5));
    }

    @Test
    void problemsOnNonGpuNodeWithNvidiaDefault() {
        String ok = DaemonJson.merge("", false);
        assertEquals(List.of(), DaemonJson.problems(ok, false));
        String bad = ok.replace("\"storage-driver\"", "\"default-runtime\": \"nvidia\",\n  \"storage-driver\"");
        List<String> p = DaemonJson.problems(bad, false);
        assertEquals(1, p.size(), p.toString());
        assertTrue(p.get(0).contains("without GPUs"), p.get(0));
    }

    @Test
    void problemsSeeTwoCgroupDrivers() {
        String site = DaemonJson.merge("", false).replace("\"native.cgroupdriver=systemd\"",
                "\"native.cgroupdriver=systemd\", \"native.cgroupdriver=cgroupfs\"");
        assertEquals(1, DaemonJson.problems(site, false).size());
        assertEquals(List.of(), DaemonJson.problems(DaemonJson.merge(site, false), false));
    }

    @Test
    void invalidJsonNamesLineAndColumnAndDoesNotReplace() {
        String broken = "{\n  \"registry-mirrors\": [\"https://m\"],\n    oops\n}";
        HostConfException e = assertThrows(HostConfException.class, () -> DaemonJson.merge(broken, true));
        assertTrue(e.getMessage().startsWith("daemon.json is not valid JSON at line 3 column "), e.getMessage());
        assertTrue(e.getMessage().endsWith("fix or move it, gpuctl does not replace it"), e.getMessage());
        assertThrows(HostConfException.class, () -> DaemonJson.problems(broken, true));
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"a\": 1,}", "{\"a\": 1} {\"b\": 2}", "{\"a\": 1, \"a\": 2}", "// c\n{}", "{\"a\": 1"})
    void notStrictJsonIsRefused(String text) {
        assertThrows(HostConfException.class, () -> DaemonJson.merge(text, false));
    }

    @ParameterizedTest
    @ValueSource(strings = {"[]", "\"text\"", "42", "null", "true"})
    void nonObjectIsRefused(String text) {
        HostConfException e = assertThrows(HostConfException.class, () -> DaemonJson.merge(text, false));
        assertTrue(e.getMessage().contains("expects an object"), e.getMessage());
    }

    @Test
    void wrongTypesOfKeysGpuctlEditsAreRefused() {
        assertTrue(assertThrows(HostConfException.class,
                () -> DaemonJson.merge("{\"exec-opts\": \"native.cgroupdriver=systemd\"}", false))
                .getMessage().contains("\"exec-opts\" is a string"));
        assertThrows(HostConfException.class, () -> DaemonJson.merge("{\"log-opts\": []}", false));
        assertThrows(HostConfException.class, () -> DaemonJson.merge("{\"runtimes\": \"nvidia\"}", true));
        assertThrows(HostConfException.class, () -> DaemonJson.problems("{\"log-opts\": 1}", false));
    }

    @Test
    void nullValuesCountAsAbsent() {
        String out = DaemonJson.merge("{\"exec-opts\": null, \"log-opts\": null, \"runtimes\": null}", true);
        assertEquals(List.of(), DaemonJson.problems(out, true));
        assertTrue(json(out).get("exec-opts").isArray());
    }

    @Test
    void unicodeAndEscapesSurvive() {
        String out = DaemonJson.merge("{\"label\": \"연구실 \\\"gpu\\\" \\u00e9\"}", false);
        assertEquals("연구실 \"gpu\" é", json(out).get("label").asText());
    }
}
