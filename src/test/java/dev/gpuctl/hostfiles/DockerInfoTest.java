package dev.gpuctl.hostfiles;

import dev.gpuctl.text.HostConfException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DockerInfoTest {

    /** Trimmed from `docker info --format '{{json .}}'` of docker 27 on a GPU node. */
    private static final String INFO = """
            {"ID":"3c1f0b5e-8a5d-4c5e-9d4b-6f1a2b3c4d5e","Containers":0,"ContainersRunning":0,"Images":2,\
            "Driver":"overlay2","DriverStatus":[["Backing Filesystem","extfs"],["Supports d_type","true"]],\
            "Plugins":{"Volume":["local"],"Network":["bridge","host"],"Log":["json-file","local"]},\
            "MemoryLimit":true,"SwapLimit":true,"CgroupDriver":"systemd","CgroupVersion":"2",\
            "NEventsListener":0,"KernelVersion":"6.8.0-49-generic","OperatingSystem":"Ubuntu 24.04.1 LTS",\
            "OSType":"linux","Architecture":"x86_64","NCPU":64,"MemTotal":540000000000,\
            "LoggingDriver":"json-file","ServerVersion":"27.3.1",\
            "Runtimes":{"io.containerd.runc.v2":{"path":"runc","status":{"org.opencontainers.runtime-spec.features":"{}"}},\
            "nvidia":{"path":"nvidia-container-runtime"},"runc":{"path":"runc"}},"DefaultRuntime":"nvidia",\
            "Warnings":["WARNING: bridge-nf-call-iptables is disabled"]}
            """;

    @Test
    void readsTheFieldsGpuctlVerifies() {
        DockerInfo.Info info = DockerInfo.parseInfo(INFO);
        assertEquals("27.3.1", info.serverVersion());
        assertEquals("systemd", info.cgroupDriver());
        assertEquals("2", info.cgroupVersion());
        assertEquals("nvidia", info.defaultRuntime());
        assertEquals("overlay2", info.driver());
        assertEquals("json-file", info.loggingDriver());
        assertEquals(Map.of("io.containerd.runc.v2", "runc", "nvidia", "nvidia-container-runtime", "runc", "runc"),
                info.runtimes());
        assertEquals(List.of("io.containerd.runc.v2", "nvidia", "runc"), List.copyOf(info.runtimes().keySet()));
        assertEquals(List.of("WARNING: bridge-nf-call-iptables is disabled"), info.warnings());
    }

    @Test
    void missingFieldsAreNull() {
        DockerInfo.Info info = DockerInfo.parseInfo("{\"ServerVersion\":\"20.10.24\",\"CgroupDriver\":\"cgroupfs\"}");
        assertEquals("cgroupfs", info.cgroupDriver());
        assertNull(info.defaultRuntime());
        assertNull(info.cgroupVersion());
        assertEquals(Map.of(), info.runtimes());
    }

    @Test
    void notJsonIsAClearError() {
        HostConfException e = assertThrows(HostConfException.class, () -> DockerInfo.parseInfo(
                "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"));
        assertTrue(e.getMessage().startsWith("docker info output is not valid JSON at line 1"), e.getMessage());
        assertThrows(HostConfException.class, () -> DockerInfo.parseInfo("[]"));
    }

    @Test
    void bridgeSubnetsFromNetworkInspect() {
        String inspect = """
                [
                    {
                        "Name": "bridge",
                        "Id": "f2de39df4171b0dc801e8002d1d999b77256983dfc63041c0f34030aa3977566",
                        "Scope": "local",
                        "Driver": "bridge",
                        "EnableIPv6": true,
                        "IPAM": {
                            "Driver": "default",
                            "Options": null,
                            "Config": [
                                {
                                    "Subnet": "172.17.0.0/16",
                                    "Gateway": "172.17.0.1"
                                },
                                {
                                    "Subnet": "fd00:dead:beef::/48"
                                }
                            ]
                        },
                        "Options": {
                            "com.docker.network.bridge.default_bridge": "true",
                            "com.docker.network.bridge.name": "docker0"
                        }
                    }
                ]
                """;
        assertEquals(List.of(
                new NetworkRange("docker bridge", "172.17.0.0/16", "172.17.0.0/16", "docker network bridge subnet 172.17.0.0/16"),
                new NetworkRange("docker bridge", "fd00:dead:beef::/48", "fd00:dead:beef::/48",
                        "docker network bridge subnet fd00:dead:beef::/48")), DockerInfo.bridgeSubnets(inspect));
    }

    @Test
    void bridgeWithoutIpamConfigHasNoSubnets() {
        assertEquals(List.of(), DockerInfo.bridgeSubnets("[{\"Name\":\"bridge\",\"IPAM\":{\"Config\":null}}]"));
        assertEquals(List.of(), DockerInfo.bridgeSubnets("[]"));
    }

    @Test
    void daemonJsonRanges() {
        String daemon = """
                {
                  "bip": "192.168.200.1/24",
                  "fixed-cidr": "192.168.200.0/25",
                  "default-address-pools": [
                    {"base": "172.80.0.0/16", "size": 24},
                    {"base": "10.201.0.0/16", "size": 24}
                  ],
                  "registry-mirrors": ["https://m"]
                }""";
        assertEquals(List.of(
                new NetworkRange("docker bip", "192.168.200.0/24", "192.168.200.1/24", "daemon.json bip 192.168.200.1/24"),
                new NetworkRange("docker fixed-cidr", "192.168.200.0/25", "192.168.200.0/25",
                        "daemon.json fixed-cidr 192.168.200.0/25"),
                new NetworkRange("docker address pool", "172.80.0.0/16", "172.80.0.0/16",
                        "daemon.json default-address-pools[0].base 172.80.0.0/16"),
                new NetworkRange("docker address pool", "10.201.0.0/16", "10.201.0.0/16",
                        "daemon.json default-address-pools[1].base 10.201.0.0/16")), DockerInfo.daemonJsonRanges(daemon));
    }

    @Test
    void daemonJsonWithoutRangesOrAbsent() {
        assertEquals(List.of(), DockerInfo.daemonJsonRanges(""));
        assertEquals(List.of(), DockerInfo.daemonJsonRanges("{\"log-driver\":\"json-file\"}"));
    }

    @Test
    void unreadableCidrIsReturnedAsWritten() {
        assertEquals(List.of(new NetworkRange("docker bip", "not-a-cidr", "not-a-cidr", "daemon.json bip not-a-cidr")),
                DockerInfo.daemonJsonRanges("{\"bip\":\"not-a-cidr\"}"));
    }
}
