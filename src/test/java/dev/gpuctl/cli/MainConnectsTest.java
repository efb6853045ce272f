package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Which command lines make sshj's configuration ahead ({@link Main#connects}): those of a command that connects. */
class MainConnectsTest {
    private static boolean connects(String... args) { return Main.connects(args); }

    @Test void everyCommandThatConnectsToHosts() {
        for (String c : GpuctlCommand.SUBCOMMANDS.keySet()) {
            if (c.equals("plan") || c.equals("completion")) continue;
            assertTrue(connects(c, "inventory.yaml"), c);
        }
        assertTrue(connects("--verbose", "verify", "inv.yaml"));
        assertTrue(connects("bootstrap", "--dry-run", "--only", "time", "inv.yaml"));
        assertTrue(connects("certs", "check", "inv.yaml"));
    }

    @Test void neverOfflineCommandsHelpVersionOrAnUnknownWord() {
        assertFalse(connects("plan", "inventory.example.yaml"));
        assertFalse(connects("completion"));
        assertFalse(connects("--version"));
        assertFalse(connects("-V"));
        assertFalse(connects());
        assertFalse(connects("bootstrap", "--help"));
        assertFalse(connects("verify", "-h"));
        assertFalse(connects("bootstrp", "inv.yaml"));
        assertFalse(connects("--verbose"));
    }
}
