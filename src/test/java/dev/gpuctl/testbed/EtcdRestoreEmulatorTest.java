package dev.gpuctl.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The test bed's emulated {@code etcdutl snapshot restore} (testbed/emulators/lib/etcdsnap.py) against its own tests
 * (etcdsnap_test.py: every member restored with one --initial-cluster agrees on exactly those members and holds the
 * snapshot's data; etcd's refusals of a data dir that is not empty, a local name not in the cluster, advertised peer URLs
 * that are not the member's, a URL twice), run with the machine's python3 as part of the unit suite.
 */
class EtcdRestoreEmulatorTest {
    @Test void theEmulatedEtcdutlRestorePassesItsTests() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("python3", Path.of("testbed/emulators/lib/etcdsnap_test.py").toString())
            .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("OK"), out);
    }
}
