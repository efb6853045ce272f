package dev.gpuctl.hostfiles;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.text.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The kubelet's device-manager checkpoint ({@value #PATH}): which devices the kubelet gave which container. It is
 * the kubelet's own JSON ({@code pkg/kubelet/cm/devicemanager/checkpoint}):
 * {@code {"Data": {"PodDeviceEntries": [{"PodUID", "ContainerName", "ResourceName", "DeviceIDs", "AllocResp"}],
 * "RegisteredDevices": {...}}, "Checksum": N}}. {@code DeviceIDs} maps a NUMA node to device IDs in current kubelets
 * ({@code {"0": ["GPU-..."]}}) and was a plain list before (checkpoint v1); both are read. The NVIDIA device plugin's
 * IDs are GPU UUIDs, with time-slicing or MPS {@code UUID::N} (replica N of that GPU). Pure.
 */
public final class DeviceCheckpoint {
    public static final String PATH = "/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint";
    private static final ObjectMapper JSON = Json.MAPPER;

    private DeviceCheckpoint() {}

    /** One container's devices of one resource; {@code deviceIds} as the kubelet wrote them, NUMA nodes merged. */
    public record Entry(String podUid, String container, String resource, List<String> deviceIds) {
        public Entry {
            deviceIds = List.copyOf(deviceIds);
        }

        /** The physical devices: a shared replica's ID "GPU-x::3" is GPU "GPU-x"; each named once, in order. */
        public List<String> devices() {
            Set<String> out = new LinkedHashSet<>();
            for (String id : deviceIds) out.add(physical(id));
            return List.copyOf(out);
        }
    }

    /** "GPU-x::3" (a time-slicing or MPS replica) is "GPU-x"; any other ID is itself. */
    public static String physical(String deviceId) {
        int at = deviceId.indexOf("::");
        return at < 0 ? deviceId : deviceId.substring(0, at);
    }

    /**
     * The entries of a checkpoint's text; none for an empty text (no checkpoint yet: no device was ever given out).
     *
     * @throws HostConfException when the text is no device-manager checkpoint
     */
    public static List<Entry> parse(String text) {
        if (text.isBlank()) return List.of();
        JsonNode doc;
        try {
            doc = JSON.readTree(text);
        } catch (IOException e) {
            throw new HostConfException("the kubelet's device checkpoint " + PATH + " is not JSON: " + firstLine(text));
        }
        if (doc == null || !doc.path("Data").isObject()) {
            throw new HostConfException("the kubelet's device checkpoint " + PATH + " has no Data object: " + firstLine(text));
        }
        List<Entry> out = new ArrayList<>();
        for (JsonNode e : doc.path("Data").path("PodDeviceEntries")) {
            List<String> ids = new ArrayList<>();
            JsonNode d = e.path("DeviceIDs");
            if (d.isArray()) {
                d.forEach(id -> ids.add(id.asText()));
            } else if (d.isObject()) {
                d.elements().forEachRemaining(numa -> numa.forEach(id -> ids.add(id.asText())));
            }
            out.add(new Entry(e.path("PodUID").asText(), e.path("ContainerName").asText(), e.path("ResourceName").asText(), ids));
        }
        return out;
    }

    private static String firstLine(String s) {
        String t = s.strip();
        int nl = t.indexOf('\n');
        t = nl < 0 ? t : t.substring(0, nl) + " ...";
        return t.length() > 160 ? t.substring(0, 157) + "..." : t;
    }
}
