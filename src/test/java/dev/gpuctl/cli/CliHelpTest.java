package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Every command's --help: its Examples (each one parses), then its exit codes last; duration flags say their unit. */
class CliHelpTest {
    static List<CommandLine> all(CommandLine cl) {
        List<CommandLine> out = new ArrayList<>(List.of(cl));
        for (CommandLine sub : cl.getSubcommands().values()) out.addAll(all(sub));
        return out;
    }

    static List<CommandLine> commands() { return all(Main.commandLine(Map.of())); }

    @Test void everyCommandsHelpHasExamplesBeforeItsExitCodesWhichComeLast() {
        for (CommandLine cl : commands()) {
            String name = cl.getCommandSpec().qualifiedName();
            String[] args = (name.replaceFirst("^gpuctl ?", "") + " --help").trim().split(" ");
            CliTest.Run r = CliTest.run(args);
            assertEquals(0, r.code(), r::toString);
            int examples = r.out().indexOf("\nExamples:\n");
            int codes = r.out().indexOf("\nExit codes:\n");
            assertTrue(examples > 0 && codes > examples, name + ": Examples, then Exit codes\n" + r.out());
            String tail = r.out().substring(codes);
            assertTrue(tail.strip().lines().skip(1).allMatch(l -> l.matches("\\s+\\d+\\s+.*") || l.startsWith("          ")),
                name + ": nothing after the exit codes\n" + tail);
            for (String example : Examples.of(name)) {
                assertTrue(r.out().contains("  " + example + "\n"), name + " shows unwrapped: " + example + "\n" + r.out());
            }
            assertFalse(Examples.of(name).isEmpty(), name + " has examples");
        }
    }

    @Test void everyExampleIsACommandLineThisVersionParses() {
        for (var e : Examples.BY_COMMAND.entrySet()) {
            for (String example : e.getValue()) {
                String line = example.replaceFirst("^source <\\((gpuctl [^)]*)\\).*", "$1").replaceFirst("^echo '.*", "");
                if (line.isEmpty()) continue;
                line = line.replaceFirst("\\s*#.*$", "").replaceFirst("\\s*>.*$", "");
                String[] words = line.split("\\s+");
                assertEquals("gpuctl", words[0], example);
                CommandLine cl = Main.commandLine(Map.of());
                CommandLine.ParseResult parsed = cl.parseArgs(Arrays.copyOfRange(words, 1, words.length));
                CommandLine.ParseResult leaf = parsed;
                while (leaf.hasSubcommand()) leaf = leaf.subcommand();
                String leafName = leaf.commandSpec().qualifiedName();
                assertTrue(leafName.equals(e.getKey()) || leafName.startsWith(e.getKey() + " "),
                    example + " is an example of " + e.getKey() + " (or one of its subcommands), not " + leafName);
            }
        }
    }

    @Test void everyDurationFlagSaysItsUnit() {
        int seen = 0;
        for (CommandLine cl : commands()) {
            for (var option : cl.getCommandSpec().options()) {
                if (option.type() != Duration.class) continue;
                if (!option.longestName().equals("--connect-timeout")) seen++;
                String description = String.join(" ", option.description());
                assertEquals("DURATION", option.paramLabel(), option.longestName());
                assertTrue(description.contains("a bare number is seconds") && description.matches(".*\\b\\d+[smh]\\b.*"),
                    cl.getCommandSpec().qualifiedName() + " " + option.longestName() + ": " + description);
            }
        }
        assertEquals(12, seen, "bootstrap --command-timeout and --wait-timeout, verify --wait-timeout, join-token --ttl, drain,"
            + " repair and remove-node --drain-timeout, certs renew --command-timeout, upgrade --drain-timeout and --command-timeout, gpus --sample,"
            + " usage --since");
    }

    @Test void everyCommandThatConnectsTakesAConnectTimeout() {
        int seen = 0;
        for (CommandLine cl : commands()) {
            var spec = cl.getCommandSpec();
            if (spec.findOption("--accept-new-host-keys") == null) continue;
            seen++;
            assertTrue(spec.findOption("--connect-timeout") != null, spec.qualifiedName() + " connects but has no --connect-timeout");
        }
        assertTrue(seen >= 15, "commands that connect: " + seen);
    }

    @Test void zshGetsAZshScriptThatLoadsBashcompinitBeforePicoclisFunction() {
        CliTest.Run z = CliTest.run("completion", "zsh");
        assertEquals(0, z.code(), z::toString);
        List<String> lines = z.out().lines().toList();
        assertEquals("#compdef gpuctl", lines.get(0));
        int bashcompinit = z.out().indexOf("bashcompinit");
        int complete = z.out().indexOf("complete -F _complete_gpuctl");
        assertTrue(bashcompinit > 0 && complete > bashcompinit, z.out());
        CliTest.Run b = CliTest.run("completion", "bash");
        assertFalse(b.out().contains("#compdef"), "the bash script stays bash's");
    }

    /** Where zsh is installed: the script loads in a plain zsh and registers gpuctl's completion. */
    @Test void zshLoadsTheScript(@TempDir Path dir) throws IOException, InterruptedException {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/zsh")) || Files.isExecutable(Path.of("/bin/zsh")), "zsh not installed");
        Path script = dir.resolve("gpuctl.zsh");
        Files.writeString(script, CliTest.run("completion", "zsh").out());
        Process p = new ProcessBuilder("zsh", "-f", "-c", "source " + script + " && print -r -- \"${_comps[gpuctl]}\"")
            .directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        assertTrue(out.contains("_bash_complete -F _complete_gpuctl"), out);
    }
}
