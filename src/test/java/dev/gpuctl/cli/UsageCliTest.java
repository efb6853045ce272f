package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** usage's wrong input is exit 2 with what was wrong, before any connection and never a stack trace. */
class UsageCliTest {
    static void refused(CliTest.Run r, String says) {
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains(says), r::toString);
        assertFalse(r.err().contains("\tat "), r::toString);
    }

    @Test void wrongOptionsAndAnInventoryWithoutTeamsAreRefused(@TempDir Path dir) throws IOException {
        Path teams = Files.writeString(dir.resolve("inventory.yaml"), TeamsPlanCliTest.INVENTORY.formatted("2"));
        refused(CliTest.run("usage", "--json", "--csv", teams.toString()), "--json and --csv: choose one");
        refused(CliTest.run("usage", "--since", "0", teams.toString()), "'0' is zero (expected a positive duration");
        refused(CliTest.run("usage", "--by", "group", teams.toString()), "'group' is not team or person");

        Path none = Files.writeString(dir.resolve("plain.yaml"), TeamsPlanCliTest.INVENTORY.formatted("2")
            .substring(0, TeamsPlanCliTest.INVENTORY.indexOf("teams:")));
        refused(CliTest.run("usage", none.toString()), "plain.yaml has no teams");

        Path bad = Files.writeString(dir.resolve("bad.yaml"), TeamsPlanCliTest.INVENTORY.formatted("two"));
        CliTest.Run r = CliTest.run("usage", bad.toString());
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("bad.yaml:"), "FILE:LINE:COLUMN: " + r);
        assertFalse(r.err().contains("\tat "), r::toString);
    }
}
