package dev.gpuctl.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class CidrTest {
    private static Cidr c(String text) { return Cidr.parse(text).orElseThrow(); }

    @Test void parsesAndClearsHostBits() {
        assertEquals("10.244.0.0/16", c("10.244.0.0/16").toString());
        assertEquals("10.244.0.0/16", c("10.244.1.7/16").toString());
        assertTrue(Cidr.hasHostBits("10.244.1.7/16"));
        assertFalse(Cidr.hasHostBits("10.244.0.0/16"));
        assertEquals("10.0.0.7/32", c("10.0.0.7").toString());
        assertEquals("0.0.0.0/0", c("0.0.0.0/0").toString());
    }

    @Test void rejectsMalformedIpv4() {
        for (String bad : new String[] {"256.0.0.0/8", "10.0.0/8", "010.0.0.1", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "a.b.c.d", ""}) {
            assertEquals(Optional.empty(), Cidr.parse(bad), bad);
        }
    }

    @Test void ipv6IsParsedWithoutAnyLookupAndWrittenInRfc5952Form() {
        assertEquals("fd00::/8", c("fd00::/8").toString());
        assertEquals("fd00::/8", c("FD00:0000::/8").toString());
        assertEquals("::1/128", c("::1").toString());
        assertEquals("::/0", c("::/0").toString());
        assertEquals("2001:db8::1:0:0:1/128", c("2001:db8:0:0:1:0:0:1").toString());
        assertEquals("2001:0:0:1::1/128", c("2001:0:0:1:0:0:0:1").toString());
        assertEquals("1::/128", c("1::").toString());
        assertEquals("::ffff:a00:1/128", c("::ffff:10.0.0.1").toString());
        assertEquals("1:2:3:4:5:6:7:8/128", c("1:2:3:4:5:6:7:8").toString());
        for (String bad : new String[] {"1:::2", ":::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "12345::", "::g",
                ".1:2", "1.2.3.4::", "fe80::1%eth0", "[::1]", "fd00::/129", ":1::2", "1::2:"}) {
            assertEquals(Optional.empty(), Cidr.parse(bad), bad);
        }
    }

    @Test void overlapsAndContains() {
        assertTrue(c("10.0.0.0/8").overlaps(c("10.1.0.0/16")));
        assertTrue(c("10.1.0.0/16").overlaps(c("10.0.0.0/8")));
        assertTrue(c("10.0.0.0/8").contains(c("10.1.0.0/16")));
        assertFalse(c("10.1.0.0/16").contains(c("10.0.0.0/8")));
        assertFalse(c("10.0.0.0/16").overlaps(c("10.1.0.0/16")));
        assertTrue(c("0.0.0.0/0").overlaps(c("192.168.1.1")));
        assertFalse(c("::/0").overlaps(c("10.0.0.0/8")));
        assertFalse(c("::/0").contains(c("10.0.0.0/8")));
        assertTrue(c("fd00::/8").contains(c("fd00::10")));
    }

    @Test void equalityIsByValue() {
        assertEquals(c("10.244.0.0/16"), c("10.244.9.9/16"));
        assertEquals(c("10.244.0.0/16").hashCode(), c("10.244.9.9/16").hashCode());
        assertThrows(IllegalArgumentException.class, () -> new Cidr(new byte[5], 8));
        assertThrows(IllegalArgumentException.class, () -> new Cidr(new byte[4], 33));
    }
}
