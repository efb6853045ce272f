package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.backup.BackupArchive;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * One meaning per exit code, everywhere: every command that touches a host, run against a host nothing answers and
 * against a broken inventory, ends with the code the README's table gives (the table is {@link ExitCode}, and so is
 * every --help's exit-code section); the log file each failure names holds the connection error.
 */
class ExitCodesCliTest {
    /** Every command that connects to a host, with the arguments it needs besides the inventory. */
    static List<String[]> hostCommands(Path dir) throws IOException {
        Path archive = dir.resolve("lab.tar.gz");
        try (InputStream in = ExitCodesCliTest.class.getResourceAsStream("/backup/complete.tar.gz")) {
            Files.copy(in, archive);
        }
        Files.setPosixFilePermissions(archive, PosixFilePermissions.fromString("rw-------"));
        Files.writeString(dir.resolve("lab.tar.gz.sha256"),
            BackupArchive.sha256Line(BackupArchive.sha256(Files.readAllBytes(archive)), "lab.tar.gz"));
        Path job = dir.resolve("job.yaml");
        Files.writeString(job, "{name: a, image: b, gpus: 1}\n");
        return List.of(new String[] {"bootstrap"}, new String[] {"bootstrap", "--dry-run"}, new String[] {"verify"},
            new String[] {"upgrade"}, new String[] {"drain", "w"}, new String[] {"drain", "--dry-run", "w"},
            new String[] {"uncordon", "w"}, new String[] {"repair", "w"}, new String[] {"repair", "--dry-run", "w"}, new String[] {"remove-node", "w"}, new String[] {"reset", "--yes"},
            new String[] {"backup"}, new String[] {"restore", archive.toString()}, new String[] {"certs", "check"},
            new String[] {"certs", "renew"}, new String[] {"join-token", "--refresh"},
            new String[] {"kubeconfig", "--merge", "--kubeconfig", dir.resolve("kc").toString()}, new String[] {"gpus"},
            new String[] {"job", "list"}, new String[] {"job", "logs", "a"}, new String[] {"job", "delete", "a"},
            new String[] {"job", "submit", job.toString()}, new String[] {"upgrade", "--dry-run"});
    }

    static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static Path key(Path dir) throws IOException {
        Path key = dir.resolve("id");
        return Files.exists(key) ? key : GpusJobCliTest.key(dir);
    }

    static String[] with(String[] cmd, Path inv) {
        String[] args = java.util.Arrays.copyOf(cmd, cmd.length + 2);
        args[cmd.length] = "-i";
        args[cmd.length + 1] = inv.toString();
        return args;
    }

    static final Pattern LOG = Pattern.compile("log: (\\S+\\.log)");

    @Test void everyHostCommandAgainstAnUnreachableHostIsExit6AndItsLogHoldsTheConnectionError(@TempDir Path dir) throws IOException {
        int port = closedPort();
        Path inv = dir.resolve("inventory.yaml");
        Files.writeString(inv, """
            cluster: { name: lab, kubernetesVersion: "1.35" }
            ssh: { port: %d, identityFile: %s, knownHosts: %s }
            nodes:
              - { name: m, address: 127.0.0.1, role: master }
              - { name: w, address: 127.0.0.1, role: worker, ssh: { port: %d } }
            """.formatted(port, key(dir), dir.resolve("known_hosts"), closedPort()).replace("127.0.0.1, role: worker", "127.0.0.2, role: worker"));
        for (String[] cmd : hostCommands(dir)) {
            String[] args = with(cmd, inv);
            CliTest.Run r = CliTest.run(args);
            String shown = String.join(" ", args) + "\n" + r;
            assertEquals(ExitCode.UNREACHABLE.code(), r.code(), shown);
            assertTrue((r.out() + r.err()).contains("m: cannot connect to 127.0.0.1:" + port), shown);
            assertFalse(r.err().contains("Exception") || r.err().contains("at dev.gpuctl"), shown);
            assertTrue(ExitCode.of(qualified(cmd)).contains(ExitCode.UNREACHABLE), () -> qualified(cmd) + "'s --help lacks exit 6");
            Matcher m = LOG.matcher(r.err());
            while (m.find()) {
                Path log = Path.of(m.group(1));
                assertTrue(Files.exists(log), () -> "the log named does not exist: " + log + "\n" + shown);
                String text = Files.readString(log);
                assertTrue(text.contains("cannot connect to 127.0."), () -> log + " lacks the connection error:\n" + text + "\n" + shown);
            }
            if (cmd[0].equals("drain") && List.of(cmd).contains("--dry-run")) {
                assertFalse(r.err().contains("--force") || r.out().contains("--force"), "a dry run advises no --force:\n" + shown);
                assertFalse(r.err().contains("stay cordoned"), "a dry run cordoned nothing:\n" + shown);
            }
        }
    }

    @Test void everyHostCommandAgainstABadInventoryIsExit2WithFileLineColumn(@TempDir Path dir) throws IOException {
        Path inv = dir.resolve("inventory.yaml");
        Files.writeString(inv, """
            cluster: { name: lab, kubernetesVersion: "1.35", podCidr: 10.1.0.0/16 }
            nodes:
              - { name: m, address: 127.0.0.1, role: master }
              - { name: w, address: 10.1.2.3, role: worker }
            """);
        List<String[]> all = new ArrayList<>(hostCommands(dir));
        all.add(new String[] {"plan"});
        for (String[] cmd : all) {
            String[] args = with(cmd, inv);
            CliTest.Run r = CliTest.run(args);
            String shown = String.join(" ", args) + "\n" + r;
            assertEquals(ExitCode.USAGE.code(), r.code(), shown);
            // the clash is an inventory error at the pod network's place
            assertTrue(r.err().contains(inv + ":1:59: podCidr 10.1.0.0/16 (cluster.podCidr) overlaps 10.1.2.3/32 (node w address)"), shown);
        }
    }

    @Test void aServiceCidrInsideThePodCidrIsAnErrorAtTheServiceCidrsPlace(@TempDir Path dir) throws IOException {
        Path inv = dir.resolve("inventory.yaml");
        Files.writeString(inv, """
            cluster:
              name: lab
              kubernetesVersion: "1.35"
              podCidr: 10.244.0.0/16
              serviceCidr: 10.244.128.0/20
            nodes:
              - { name: m, address: 192.0.2.10, role: master }
            """);
        CliTest.Run r = CliTest.run("plan", inv.toString());
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().matches("(?s)gpuctl: " + Pattern.quote(inv.toString()) + ":[45]:\\d+: .*10\\.244\\.128\\.0/20.*"), r::toString);
        assertEquals("", r.out(), "nothing is planned for an inventory with errors");
    }

    @Test void aMissingIdentityFileIsAPlanWarningAtItsPlaceAndRefusedAtItsPlaceByACommandThatConnects(@TempDir Path dir) throws IOException {
        Path inv = dir.resolve("inventory.yaml");
        Files.writeString(inv, """
            cluster: { name: lab, kubernetesVersion: "1.35" }
            ssh:
              identityFile: %s
            nodes:
              - { name: m, address: 192.0.2.10, role: master }
              - { name: w, address: 192.0.2.11, role: worker, ssh: { identityFile: %s } }
            """.formatted(key(dir), dir.resolve("gone")));
        String place = inv + ":6:" + (Files.readAllLines(inv).get(5).indexOf(dir.resolve("gone").toString()) + 1);
        CliTest.Run r = CliTest.run("plan", inv.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("\nWarnings:\n  warning: " + place + ": ssh.identityFile: " + dir.resolve("gone")
            + " does not exist (node w"), r::toString);
        assertFalse(r.out().contains("node m;"), "m's key exists:\n" + r);
        // the connecting commands refuse it, at the same place, before any connection
        for (String[] cmd : List.of(new String[] {"verify"}, new String[] {"bootstrap"})) {
            CliTest.Run c = CliTest.run(with(cmd, inv));
            assertEquals(2, c.code(), c::toString);
            assertTrue(c.err().startsWith("gpuctl: " + place + ": ssh.identityFile: w: cannot use the identity file " + dir.resolve("gone")),
                c::toString);
            assertTrue(c.err().contains("Nothing was connected to."), c::toString);
        }
    }

    @Test void aLocalNodeIsRefusedByEveryCommandThatChangesHostsWithoutAllowLocal(@TempDir Path dir) throws IOException {
        Path inv = dir.resolve("inventory.yaml");
        Files.writeString(inv, """
            cluster: { name: lab, kubernetesVersion: "1.35" }
            ssh: { identityFile: %s, knownHosts: %s }
            nodes:
              - { name: here, address: 127.0.0.1, role: master, connection: local }
            """.formatted(key(dir), dir.resolve("known_hosts")));
        List<String[]> changing = List.of(new String[] {"bootstrap"}, new String[] {"bootstrap", "--dry-run"}, new String[] {"upgrade"},
            new String[] {"drain", "here"}, new String[] {"uncordon", "here"}, new String[] {"repair", "here"}, new String[] {"remove-node", "here"},
            new String[] {"reset", "--yes"}, new String[] {"backup"}, new String[] {"certs", "renew"},
            new String[] {"join-token", "--refresh"}, hostCommands(dir).get(12), new String[] {"upgrade", "--dry-run"});
        for (String[] cmd : changing) {
            String[] args = with(cmd, inv);
            CliTest.Run r = CliTest.run(args);
            String shown = String.join(" ", args) + "\n" + r;
            assertEquals(2, r.code(), shown);
            assertTrue(r.err().contains("node here has connection: local") && r.err().contains("THIS machine")
                && r.err().contains("--allow-local"), shown);
            assertTrue(r.err().contains("Nothing was changed."), shown);
            assertFalse(Files.exists(dir.resolve(".gpuctl/logs")), "no run was started:\n" + shown);
        }
        // with --allow-local the command goes on (here: to bootstrap's argument checks, which refuse an unknown step)
        CliTest.Run allowed = CliTest.run("bootstrap", "--allow-local", "--only", "no-such-step", "-i", inv.toString());
        assertEquals(2, allowed.code(), allowed::toString);
        assertFalse(allowed.err().contains("connection: local"), allowed::toString);
        // plan says it first, in capitals
        CliTest.Run plan = CliTest.run("plan", inv.toString());
        assertEquals(0, plan.code(), plan::toString);
        assertTrue(plan.out().startsWith("WARNING: CONNECTION: LOCAL"), plan::toString);
    }

    /** Every --help's "Exit codes:" section lists exactly ExitCode.of(command), each with the table's meaning. */
    @Test void everyHelpsExitCodesAreTheTables() {
        CommandLine root = Main.commandLine(Map.of(), new String[] {"--help"});
        List<CommandLine> all = new ArrayList<>();
        collect(root, all);
        for (CommandLine cl : all) {
            String name = cl.getCommandSpec().qualifiedName();
            Map<String, String> listed = cl.getCommandSpec().usageMessage().exitCodeList();
            List<String> expected = ExitCode.of(name).stream().map(c -> String.format("%3d", c.code())).toList();
            assertEquals(expected, List.copyOf(listed.keySet()), name);
            for (ExitCode c : ExitCode.of(name)) assertEquals(c.meaning(), listed.get(String.format("%3d", c.code())), name);
            // no code a command's own description gives that contradicts the table
            String description = String.join(" ", cl.getCommandSpec().usageMessage().description());
            Matcher m = Pattern.compile("exit (\\d+)").matcher(description);
            while (m.find()) {
                int code = Integer.parseInt(m.group(1));
                assertTrue(ExitCode.of(name).stream().anyMatch(c -> c.code() == code), name + " says exit " + code + ": " + description);
            }
        }
    }

    /** gpuctl --help shows each command's first description line: a whole sentence, and no description is broken by hand. */
    @Test void everyCommandsSummaryIsACompleteSentence() {
        List<CommandLine> all = new ArrayList<>();
        collect(Main.commandLine(Map.of(), new String[] {"--help"}), all);
        for (CommandLine cl : all) {
            String[] d = cl.getCommandSpec().usageMessage().description();
            String name = cl.getCommandSpec().qualifiedName();
            assertTrue(d.length > 0, name);
            assertTrue(Character.isUpperCase(d[0].charAt(0)), name + ": " + d[0]);
            for (String line : d) {
                assertTrue(line.strip().endsWith("."), name + ": a description line that is not a whole sentence: " + line);
            }
        }
    }

    static void collect(CommandLine cl, List<CommandLine> into) {
        into.add(cl);
        for (CommandLine sub : cl.getSubcommands().values()) collect(sub, into);
    }

    static String qualified(String[] cmd) {
        String name = "gpuctl " + cmd[0];
        if (cmd.length > 1 && (cmd[0].equals("certs") || cmd[0].equals("job"))) name += " " + cmd[1];
        return name;
    }
}
