package dev.gpuctl.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The test bed's emulated Kueue (testbed/emulators/lib/kueue.py) against its own tests (kueue_test.py: admission by
 * quota, borrowing, reclaim preemption that requeues the borrower, Kueue's reasons and messages, the Job webhook),
 * run with the machine's python3 as part of the unit suite, so that the E2E tests rest on a controller already checked.
 */
class KueueEmulatorTest {
    @Test void theEmulatedKueueControllerPassesItsTests() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("python3", Path.of("testbed/emulators/lib/kueue_test.py").toString())
            .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("OK"), out);
    }
}
