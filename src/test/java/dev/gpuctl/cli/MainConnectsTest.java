package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which parsed command lines make sshj's configuration ahead ({@link Main#connects}): those of a command that connects,
 * parsed exactly as gpuctl parses them (so --verbose has set the log levels first).
 */
class MainConnectsTest {
    private static boolean connects(String... args) {
        return Main.connects(Main.commandLine(Map.of(), args).parseArgs(args));
    }

    @Test void everyCommandThatConnectsToHosts() {
        assertTrue(connects("bootstrap", "inventory.yaml"));
        assertTrue(connects("verify", "inventory.yaml"));
        assertTrue(connects("bootstrap", "--dry-run", "--only", "time", "inv.yaml"));
        assertTrue(connects("certs", "check", "inv.yaml"));
        assertTrue(connects("join-token", "inv.yaml"));
        assertTrue(connects("gpus", "inv.yaml"));
    }

    @Test void neverOfflineCommandsHelpOrVersion() {
        assertFalse(connects("plan", "inventory.example.yaml"));
        assertFalse(connects("completion", "bash"));
        assertFalse(connects("--version"));
        assertFalse(connects("--help"));
        assertFalse(connects("bootstrap", "--help"));
        assertFalse(connects("verify", "-h"));
        assertFalse(connects("certs", "check", "--help"));
    }
}
