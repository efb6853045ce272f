package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;

/** The options every command that changes hosts shares, declared once: one mixin, one wording, one opening. */
class ChangeOptionsTest {
    static final List<String> CHANGING = List.of("gpuctl bootstrap", "gpuctl upgrade", "gpuctl drain", "gpuctl uncordon",
        "gpuctl repair", "gpuctl remove-node", "gpuctl reset", "gpuctl certs renew", "gpuctl backup");

    @Test void everyCommandThatChangesHostsTakesTheSharedOptionsFromTheOneMixin() {
        Map<String, String> wording = new java.util.HashMap<>();
        int seen = 0;
        for (CommandLine cl : CliHelpTest.commands()) {
            CommandSpec spec = cl.getCommandSpec();
            if (!CHANGING.contains(spec.qualifiedName())) continue;
            seen++;
            assertTrue(spec.mixins().values().stream().anyMatch(m -> m.userObject() instanceof ChangeOptions),
                spec.qualifiedName() + " declares its shared options through ChangeOptions");
            // -i is worded by form: beside an INVENTORY argument (bootstrap, backup, upgrade, reset, certs renew), or alone (the node commands)
            assertTrue(spec.findOption("--inventory") != null, spec.qualifiedName() + " has -i");
            for (String name : List.of("--dry-run", "--allow-local", "--accept-new-host-keys", "--connect-timeout")) {
                var option = spec.findOption(name);
                assertTrue(option != null, spec.qualifiedName() + " has " + name);
                String text = String.join(" ", option.description());
                String first = wording.putIfAbsent(name, text);
                assertTrue(first == null || first.equals(text), spec.qualifiedName() + " " + name + " says it as every other: " + text);
            }
        }
        assertEquals(CHANGING.size(), seen);
    }

    @Command(name = "t") static final class OnNodesCommand {
        @Mixin ChangeOptions.OnNodes options;
    }

    @Command(name = "t") static final class OnInventoryCommand {
        @Mixin ChangeOptions.OnInventory options;
    }

    @Test void onNodesReadsDashIThenTheEnvironmentAndRefusesANodeTheInventoryLacks(@TempDir Path dir) throws IOException {
        Path inv = CliTest.loopbackInventory(dir, ExitCodesCliTest.key(dir));
        OnNodesCommand fromEnv = new OnNodesCommand();
        new CommandLine(fromEnv).parseArgs();
        Map<String, String> env = Map.of("GPUCTL_INVENTORY", inv.toString());
        assertEquals(inv, fromEnv.options.file(env));
        assertEquals(Path.of("inventory.yaml"), fromEnv.options.file(Map.of()));

        OnNodesCommand c = new OnNodesCommand();
        new CommandLine(c).parseArgs("-i", inv.toString(), "--dry-run");
        assertTrue(c.options.dryRun());
        ChangeOptions.Opened opened = c.options.open(Map.of(), "drain", List.of("w1"));
        assertEquals(inv, opened.file());
        assertEquals(List.of("m", "w1"), opened.inv().nodes().stream().map(n -> n.name()).toList());
        assertEquals(ChangeOptions.DRY_RUN_COMPLETE, c.options.completed("drained: w1"));

        GpuctlException e = assertThrows(GpuctlException.class, () -> c.options.open(Map.of(), "drain", List.of("w9")));
        assertEquals(ExitCode.USAGE, e.exitCode());
        assertTrue(e.getMessage().contains("unknown host 'w9' for drain"), e.getMessage());
    }

    @Test void onInventoryTakesTheFirstArgumentAndRefusesTwoInventories(@TempDir Path dir) throws IOException {
        Path inv = CliTest.loopbackInventory(dir, ExitCodesCliTest.key(dir));
        OnInventoryCommand c = new OnInventoryCommand();
        new CommandLine(c).parseArgs(inv.toString());
        assertEquals(inv, c.options.open(Map.of(), "reset").file());
        assertEquals("reset complete", c.options.completed("reset complete"));

        OnInventoryCommand two = new OnInventoryCommand();
        new CommandLine(two).parseArgs(inv.toString(), "-i", dir.resolve("other.yaml").toString());
        GpuctlException e = assertThrows(GpuctlException.class, () -> two.options.open(Map.of(), "reset"));
        assertEquals(ExitCode.USAGE, e.exitCode());
        assertTrue(e.getMessage().contains("two inventories given"), e.getMessage());
    }
}
