package dev.gpuctl.hostfiles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gpuctl.text.HostConfException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The records preflight's network probes are read into, once, by their pure parsers. */
class TypedFactsParsersTest {
    static final String ADDR = "[{\"ifname\":\"eth0\",\"addr_info\":[{\"family\":\"inet\",\"local\":\"10.0.0.2\",\"prefixlen\":24}]}]";
    static final String ROUTE = "[{\"dst\":\"10.9.0.0/16\",\"gateway\":\"10.0.0.1\",\"dev\":\"eth0\"}]";

    @Test void hostNetworkIsBothListsOfTheProbesAnswer() {
        IpJson.HostNetwork net = IpJson.HostNetwork.parse(ADDR + "\n\n" + ROUTE + "\n");
        assertEquals(IpJson.addresses(ADDR), net.addresses());
        assertEquals(IpJson.routes(ROUTE), net.routes());
        assertEquals(List.of("eth0 10.0.0.2/24"), net.addresses().stream().map(NetworkRange::source).toList());
        assertEquals(List.of("route 10.9.0.0/16 via 10.0.0.1 dev eth0"), net.routes().stream().map(NetworkRange::source).toList());
    }

    /** JSON is read as JSON, not cut at a "]" and a newline: a pretty-printed list (ip -j -p) reads the same. */
    @Test void prettyPrintedListsReadTheSame() {
        String prettyAddr = "[ {\n  \"ifname\": \"eth0\",\n  \"addr_info\": [ {\n    \"family\": \"inet\",\n"
            + "    \"local\": \"10.0.0.2\",\n    \"prefixlen\": 24\n  }\n]\n} ]\n";
        IpJson.HostNetwork net = IpJson.HostNetwork.parse(prettyAddr + "\n" + ROUTE);
        assertEquals(IpJson.addresses(ADDR), net.addresses());
        assertEquals(IpJson.routes(ROUTE), net.routes());
    }

    @Test void aFailedCommandsListIsEmptyAndJunkIsRefused() {
        assertEquals(new IpJson.HostNetwork(List.of(), List.of()), IpJson.HostNetwork.parse(""));
        assertEquals(new IpJson.HostNetwork(IpJson.addresses(ADDR), List.of()), IpJson.HostNetwork.parse(ADDR + "\n"));
        assertThrows(HostConfException.class, () -> IpJson.HostNetwork.parse("{\"not\":\"a list\"}\n" + ROUTE));
        assertThrows(HostConfException.class, () -> IpJson.HostNetwork.parse("[{\"ifname\":"));
    }

    @Test void dockerNetworksAreDaemonJsonThenTheBridge() {
        String daemon = "{\n  \"bip\": \"10.200.0.1/24\",\n  \"default-address-pools\":\n[ {\"base\": \"10.201.0.0/16\", \"size\": 24} ]\n}";
        String inspect = "[{\"Name\":\"bridge\",\"IPAM\":{\"Config\":[{\"Subnet\":\"172.17.0.0/16\"}]}}]";
        DockerInfo.Networks d = DockerInfo.Networks.parse(daemon + "\n" + inspect + "\n");
        assertEquals(DockerInfo.daemonJsonRanges(daemon), d.reserved());
        assertEquals(DockerInfo.bridgeSubnets(inspect), d.bridge());
        assertEquals(2, d.reserved().size(), d::toString);
        DockerInfo.Networks noFile = DockerInfo.Networks.parse("\n" + inspect);
        assertEquals(List.of(), noFile.reserved());
        assertEquals(DockerInfo.bridgeSubnets(inspect), noFile.bridge());
        assertEquals(new DockerInfo.Networks(List.of(), List.of()), DockerInfo.Networks.parse(""));
        assertThrows(HostConfException.class, () -> DockerInfo.Networks.parse("{ not json\n" + inspect));
    }
}
