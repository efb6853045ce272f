package dev.gpuctl.hostfiles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.text.HostConfException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The kubelet's device checkpoint (src/test/resources/kubelet, in kubernetes' format) read into who got which device. */
class DeviceCheckpointTest {
    static final String H200 = "GPU-01bc1429-cdbb-796f-97d8-790afa7693b9";

    static String file(String name) throws IOException {
        return Files.readString(Path.of("src/test/resources/kubelet", name));
    }

    @Test void eachContainersDevicesWithTheNumaNodesMerged() throws IOException {
        List<DeviceCheckpoint.Entry> e = DeviceCheckpoint.parse(file("kubelet_internal_checkpoint-two-pods.json"));
        assertEquals(3, e.size());
        assertEquals(new DeviceCheckpoint.Entry("5e0b4b1e-7a4c-4d52-9d7e-1f3c2a9b8c01", "train", "nvidia.com/gpu", List.of(H200)), e.get(0));
        assertEquals(List.of("GPU-6a9be583-bca6-6845-f4a2-cdbab9617051"), e.get(1).devices(), "NUMA node -1: a device without topology");
    }

    @Test void timeSlicingReplicasAreTheirGpu() throws IOException {
        List<DeviceCheckpoint.Entry> e = DeviceCheckpoint.parse(file("kubelet_internal_checkpoint-timeslicing.json"));
        assertEquals(List.of(H200 + "::3", H200 + "::1"), e.get(1).deviceIds());
        assertEquals(List.of(H200), e.get(1).devices(), "two replicas of one GPU are that GPU, once");
        assertEquals(H200, DeviceCheckpoint.physical(H200 + "::0"));
        assertEquals(H200, DeviceCheckpoint.physical(H200));
    }

    @Test void theOlderCheckpointWithAListOfIdsIsReadToo() throws IOException {
        assertEquals(List.of(H200), DeviceCheckpoint.parse(file("kubelet_internal_checkpoint-v1.json")).get(0).devices());
    }

    @Test void noCheckpointIsNoEntryAndAnythingElseIsAnError() {
        assertEquals(List.of(), DeviceCheckpoint.parse(""));
        assertEquals(List.of(), DeviceCheckpoint.parse("{\"Data\":{\"PodDeviceEntries\":[],\"RegisteredDevices\":{}},\"Checksum\":1}"));
        var e = assertThrows(HostConfException.class, () -> DeviceCheckpoint.parse("cat: permission denied"));
        assertTrue(e.getMessage().contains("/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint is not JSON: cat: permission denied"), e.getMessage());
        e = assertThrows(HostConfException.class, () -> DeviceCheckpoint.parse("{\"policyName\":\"none\"}"));
        assertTrue(e.getMessage().contains("has no Data object"), e.getMessage());
    }
}
