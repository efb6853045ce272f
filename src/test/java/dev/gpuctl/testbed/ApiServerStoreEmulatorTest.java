package dev.gpuctl.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The store of the test bed's emulated kube-apiserver (testbed/emulators/lib/apiserver_store.py) against its own tests
 * (apiserver_store_test.py: label and field selectors, JSON merge patch, put/dry-run/delete, the state file), run with
 * the machine's python3 as part of the unit suite.
 */
class ApiServerStoreEmulatorTest {
    @Test void theEmulatedApiServerStorePassesItsTests() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("python3", Path.of("testbed/emulators/lib/apiserver_store_test.py").toString())
            .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("OK"), out);
    }
}
