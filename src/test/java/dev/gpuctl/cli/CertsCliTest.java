package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** certs check and renew refuse wrong input with exit 2 before any connection. */
class CertsCliTest {
    static void usage(CliTest.Run r, String expected) {
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains(expected), r::toString);
        assertFalse(r.err().contains("Exception") || r.err().contains("at dev.gpuctl"), r::toString);
    }

    @Test void wrongInputIsExit2WithWhereAndWhat(@TempDir Path dir) throws Exception {
        Path bad = dir.resolve("inv.yaml");
        Files.writeString(bad, "cluster: { name: c, kubernetesVersion: \"1.35\", gpuSharing: { mode: mig } }\nnodes: []\n");
        usage(CliTest.run("certs", "renew", bad.toString()), bad + ":1:68: cluster.gpuSharing.mode: unknown sharing mode 'mig'");
        usage(CliTest.run("certs", "check", bad.toString()), bad + ":1:68:");
        usage(CliTest.run("certs", "renew", "--command-timeout", "0", CliTest.EXAMPLE.toString()), "--command-timeout");
        assertEquals(2, CliTest.run("certs", "rotate", CliTest.EXAMPLE.toString()).code());
    }
}
