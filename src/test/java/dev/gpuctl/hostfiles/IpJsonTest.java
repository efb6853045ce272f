package dev.gpuctl.hostfiles;

import dev.gpuctl.net.Cidr;
import dev.gpuctl.text.HostConfException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class IpJsonTest {

    /** `ip -j addr` of iproute2 6.1 (lo, a down interface, eth0 with v4/v6/link-local, docker0). */
    private static final String ADDR = """
            [{"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP","LOWER_UP"],"mtu":65536,"qdisc":"noqueue",\
            "operstate":"UNKNOWN","group":"default","txqlen":1000,"link_type":"loopback","address":"00:00:00:00:00:00",\
            "broadcast":"00:00:00:00:00:00","addr_info":[{"family":"inet","local":"127.0.0.1","prefixlen":8,\
            "scope":"host","label":"lo","valid_life_time":4294967295,"preferred_life_time":4294967295},\
            {"family":"inet6","local":"::1","prefixlen":128,"scope":"host","valid_life_time":4294967295,\
            "preferred_life_time":4294967295}]},\
            {"ifindex":2,"ifname":"ifb0","flags":["BROADCAST","NOARP"],"mtu":1500,"qdisc":"noop","operstate":"DOWN",\
            "group":"default","txqlen":32,"link_type":"ether","address":"7a:c5:24:b9:d1:d5",\
            "broadcast":"ff:ff:ff:ff:ff:ff","addr_info":[]},\
            {"ifindex":4,"ifname":"eth0","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"mtu":1400,\
            "qdisc":"pfifo_fast","operstate":"UP","group":"default","txqlen":1000,"link_type":"ether",\
            "address":"02:fc:00:00:00:01","broadcast":"ff:ff:ff:ff:ff:ff","addr_info":[{"family":"inet",\
            "local":"172.16.10.90","prefixlen":24,"broadcast":"172.16.10.255","scope":"global","label":"eth0",\
            "valid_life_time":4294967295,"preferred_life_time":4294967295},{"family":"inet6","local":"fd00::2",\
            "prefixlen":64,"scope":"global","nodad":true,"valid_life_time":4294967295,"preferred_life_time":4294967295},\
            {"family":"inet6","local":"fe80::fc:ff:fe00:1","prefixlen":64,"scope":"link","valid_life_time":4294967295,\
            "preferred_life_time":4294967295}]},\
            {"ifindex":5,"ifname":"eth1","addr_info":[{"family":"inet","local":"169.254.3.4","prefixlen":16}]},\
            {"ifindex":6,"ifname":"docker0","addr_info":[{"family":"inet","local":"172.17.0.1","prefixlen":16}]}]
            """;

    @Test
    void interfaceAddressesAsNetworksWithTheirSource() {
        assertEquals(List.of(
                new NetworkRange("interface address", "172.16.10.0/24", "172.16.10.90/24", "eth0 172.16.10.90/24"),
                new NetworkRange("interface address", "fd00::/64", "fd00::2/64", "eth0 fd00::2/64"),
                new NetworkRange("interface address", "172.17.0.0/16", "172.17.0.1/16", "docker0 172.17.0.1/16")),
                IpJson.addresses(ADDR));
    }

    @Test
    void loopbackAddressOnAnotherInterfaceIsStillSkipped() {
        String addr = "[{\"ifname\":\"dummy0\",\"addr_info\":[{\"family\":\"inet\",\"local\":\"127.0.0.53\",\"prefixlen\":8}]}]";
        assertEquals(List.of(), IpJson.addresses(addr));
    }

    @Test
    void emptyObjectsOfFilteredOutputAreSkipped() {
        String addr = "[{},{},{\"ifindex\":3,\"ifname\":\"wg0\",\"addr_info\":[{},{\"family\":\"inet\",\"local\":\"10.8.0.2\","
                + "\"address\":\"10.8.0.1\",\"prefixlen\":32}]}]";
        assertEquals(List.of(new NetworkRange("interface address", "10.8.0.2/32", "10.8.0.2/32", "wg0 10.8.0.2/32")),
                IpJson.addresses(addr));
    }

    @Test
    void routesWithoutDefaultLinkLocalMulticastOrLocal() {
        String route = """
                [{"dst":"default","gateway":"192.0.2.1","dev":"eth0","flags":[]},\
                {"dst":"192.0.2.0/24","dev":"eth0","protocol":"kernel","scope":"link","prefsrc":"192.0.2.2","flags":[]},\
                {"dst":"10.0.0.0/8","gateway":"192.0.2.254","dev":"eth0","flags":[]},\
                {"dst":"10.1.2.3","gateway":"192.0.2.254","dev":"eth0","flags":[]},\
                {"type":"blackhole","dst":"10.244.1.0/24","flags":[]},\
                {"type":"blackhole","dst":"10.244.7.0/26","protocol":"bird","flags":[]},\
                {"dst":"169.254.0.0/16","dev":"eth0","scope":"link","metric":1000,"flags":[]},\
                {"dst":"224.0.0.0/4","dev":"eth0","flags":[]},\
                {"type":"local","dst":"192.0.2.2","dev":"eth0","table":"local","flags":[]},\
                {"type":"broadcast","dst":"192.0.2.255","dev":"eth0","table":"local","flags":[]},\
                {"dst":"0.0.0.0/0","dev":"tun0","flags":[]},\
                {"dst":"127.0.0.0/8","dev":"lo","flags":[]}]
                """;
        assertEquals(List.of(
                new NetworkRange("route", "192.0.2.0/24", "192.0.2.0/24", "route 192.0.2.0/24 dev eth0"),
                new NetworkRange("route", "10.0.0.0/8", "10.0.0.0/8", "route 10.0.0.0/8 via 192.0.2.254 dev eth0"),
                new NetworkRange("route", "10.1.2.3/32", "10.1.2.3", "route 10.1.2.3 via 192.0.2.254 dev eth0"),
                new NetworkRange("route", "10.244.1.0/24", "10.244.1.0/24", "route blackhole 10.244.1.0/24"),
                new NetworkRange("route", "10.244.7.0/26", "10.244.7.0/26", "route blackhole 10.244.7.0/26 proto bird")),
                IpJson.routes(route));
    }

    @Test
    void ipv6Routes() {
        String route = "[{\"dst\":\"fd00::/64\",\"dev\":\"eth0\",\"protocol\":\"kernel\",\"metric\":256,\"flags\":[],\"pref\":\"medium\"},"
                + "{\"dst\":\"fe80::/64\",\"dev\":\"eth0\",\"protocol\":\"kernel\",\"metric\":256,\"flags\":[],\"pref\":\"medium\"},"
                + "{\"dst\":\"ff00::/8\",\"dev\":\"eth0\",\"flags\":[]},{\"dst\":\"::1\",\"dev\":\"lo\",\"flags\":[]},"
                + "{\"dst\":\"default\",\"gateway\":\"fd00::1\",\"dev\":\"eth0\",\"metric\":1024,\"flags\":[],\"pref\":\"medium\"},"
                + "{\"dst\":\"::/0\",\"dev\":\"wg0\",\"flags\":[]}]";
        assertEquals(List.of(new NetworkRange("route", "fd00::/64", "fd00::/64", "route fd00::/64 dev eth0")),
                IpJson.routes(route));
    }

    @Test
    void emptyOutputIsNothingAndNonListIsAnError() {
        assertEquals(List.of(), IpJson.routes(""));
        assertEquals(List.of(), IpJson.addresses("[]"));
        assertThrows(HostConfException.class, () -> IpJson.routes("{\"dst\":\"default\"}"));
        assertThrows(HostConfException.class, () -> IpJson.addresses("Object \"addr\" is unknown"));
    }

    @ParameterizedTest
    @CsvSource({
            "10.1.2.3/24, 10.1.2.0/24",
            "fd00::/64, fd00::/64",
            "2001:db8:0:0:1:0:0:1/128, 2001:db8::1:0:0:1/128",
            "2001:db8:0:1:1:1:1:1/128, 2001:db8:0:1:1:1:1:1/128",
            "::/0, ::/0",
            "fe80::1/10, fe80::/10",
            "2001:0:0:1::/64, 2001:0:0:1::/64",
            "1:0:0:0:0:0:0:0/128, 1::/128",
            "0:0:0:0:0:0:0:1/128, ::1/128",
    })
    void formatsNetworksShortly(String in, String expected) {
        assertEquals(expected, IpJson.format(Cidr.parse(in).orElseThrow()));
    }
}
