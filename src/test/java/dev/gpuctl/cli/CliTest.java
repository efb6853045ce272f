package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line: exit codes, and results on stdout with diagnostics on stderr. */
class CliTest {
    record Run(int code, String out, String err) {
        @Override public String toString() { return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err; }
    }

    static Run run(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(args, new PrintWriter(out), new PrintWriter(err), env);
        return new Run(code, out.toString(), err.toString());
    }

    /**
     * With HOME an empty directory of the test's own (no ~/.ssh/config, no keys), so no test depends on the home of
     * whoever runs it: inventory.example.yaml's ~/.ssh/id_ed25519 is missing there, which plan only warns about.
     */
    static Run run(String... args) { return run(Map.of("HOME", TEST_HOME.toString()), args); }

    static final Path TEST_HOME = testHome();

    private static Path testHome() {
        try {
            Path home = Files.createTempDirectory("gpuctl-test-home");
            home.toFile().deleteOnExit();
            return home;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static final Path EXAMPLE = Path.of("inventory.example.yaml");

    @Test void planOfTheExampleGoesToStdout() {
        Run r = run("plan", "--details", EXAMPLE.toString());
        assertEquals(0, r.code, r::toString);
        assertTrue(r.out.contains("[worker-3 172.16.10.102 worker]"), r::toString);
        assertTrue(r.out.contains("step join"), r::toString);
        assertEquals("", r.err, r::toString);
    }

    @Test void aUrlsCredentialsAreInNeitherThePlanNorItsJson(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        String sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        Path f = dir.resolve("inv.yaml");
        Files.writeString(f, Files.readString(EXAMPLE).replaceFirst("(?m)^cluster:\n",
            "cluster:\n  cniManifest: { url: \"https://ci:s3cret@mirror.lab/flannel.yml\", sha256: " + sha + " }\n"));
        for (String[] args : new String[][] {{"plan", "--details", f.toString()}, {"plan", "--json", f.toString()}}) {
            Run r = run(args);
            assertEquals(0, r.code, r::toString);
            assertTrue(r.out.contains("https://ci:***@mirror.lab/flannel.yml"), r::toString);
            assertFalse(r.out.contains("s3cret"), "the password is never printed");
            // the fetch reads the URL from curl's root-only configuration file, never from its command line
            assertTrue(r.out.contains("-K \\\"$d/curl.conf\\\"") || r.out.contains("-K \"$d/curl.conf\""), r::toString);
            assertTrue(r.out.contains("flannel-d82d217d.yaml.curl"), r::toString);
        }
    }

    @Test void textThatWouldActOnTheTerminalReachesItEscaped() {
        // whatever a message quotes (here an argument; on a real run a host's PRETTY_NAME or output) goes out escaped
        Run r = run("plan", "--os=Evil\u001b]0;title\u0007\u001b[2J", EXAMPLE.toString());
        assertEquals(2, r.code, r::toString);
        assertTrue(r.err.contains("Evil\\x1b]0;title\\x07\\x1b[2J"), r::toString);
        assertTrue(r.err.chars().noneMatch(c -> c == 0x1b || c == 0x07), r::toString);
    }

    @Test void aBadConnectTimeoutIsExit2BeforeAnyConnection() {
        Run r = run("verify", "--connect-timeout", "soon", EXAMPLE.toString());
        assertEquals(2, r.code, r::toString);
        assertTrue(r.err.contains("'soon' is not a timeout"), r::toString);
        assertFalse(r.err.contains("Exception") || r.err.contains("at dev.gpuctl"), r::toString);
    }

    @Test void aKubeconfigContextThatIsNoNameIsExit2BeforeAnyConnection() {
        Run r = run("kubeconfig", "--merge", "--context", "my lab;rm", EXAMPLE.toString());
        assertEquals(2, r.code, r::toString);
        assertTrue(r.err.contains("--context 'my lab;rm' is not a valid context name"), r::toString);
        assertFalse(r.err.contains("Exception") || r.err.contains("at dev.gpuctl"), r::toString);
    }

    @Test void planJsonIsJson() throws IOException {
        Run r = run("plan", "--json", EXAMPLE.toString());
        assertEquals(0, r.code, r::toString);
        var tree = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out);
        assertEquals("gpu-lab", tree.get("cluster").asText());
        assertEquals("preflight", tree.get("phases").get(0).get("id").asText());
    }

    @Test void inventoryFromEnvironmentAndOption(@TempDir Path dir) throws IOException {
        Path copy = dir.resolve("my inventory.yaml");
        Files.copy(EXAMPLE, copy);
        assertEquals(0, run(Map.of("GPUCTL_INVENTORY", copy.toString(), "HOME", TEST_HOME.toString()), "plan").code);
        assertEquals(0, run("plan", "-i", copy.toString()).code);
    }

    @Test void missingInventoryIsAUsageError(@TempDir Path dir) {
        Run r = run("plan", dir.resolve("nope.yaml").toString());
        assertEquals(2, r.code, r::toString);
        assertEquals("", r.out);
        assertTrue(r.err.contains("nope.yaml"), r::toString);
        assertFalse(r.err.contains("Exception"), r::toString);
    }

    @Test void directoryInsteadOfInventory(@TempDir Path dir) {
        Run r = run("plan", dir.toString());
        assertEquals(2, r.code, r::toString);
        assertFalse(r.err.contains("at dev.gpuctl"), r::toString);
    }

    @Test void brokenInventoryListsEveryErrorWithPosition(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("inv.yaml");
        Files.writeString(f, Files.readString(EXAMPLE).replace("runtime: docker", "runtime: podman")
            .replace("podCidr: 10.244.0.0/16", "podCidr: 10.244.0.0/33"));
        Run r = run("plan", f.toString());
        assertEquals(2, r.code, r::toString);
        assertEquals("", r.out, r::toString);
        assertTrue(r.err.contains(f + ":10:12: cluster.runtime: unknown runtime 'podman'"), r::toString);
        assertTrue(r.err.contains(f + ":12:12: cluster.podCidr:"), r::toString);
        assertTrue(r.err.startsWith("gpuctl: " + f + " has 2 problems:"), r::toString);
        assertFalse(r.err.contains("Exception"), r::toString);
    }

    /** The inventory that once printed 258 MB: exit 2, one line, a bounded stderr; and a deeply nested one likewise. */
    @Test void hostileYamlIsExit2WithOneShortLine(@TempDir Path dir) throws IOException {
        Path bomb = dir.resolve("bomb.yaml");
        Files.writeString(bomb, "cluster: { name: gpu-lab, kubernetesVersion: \"1.35\" }\n"
            + "nodes: [ { name: m, address: 10.0.0.1, role: master, labels: { big: &v " + "x".repeat(5000) + " } } ]\n"
            + "storage: { nfs: { server: m, exports: [" + "*v , ".repeat(50_000) + "*v] } }\n");
        Path deep = dir.resolve("deep.yaml");
        Files.writeString(deep, "cluster: " + "[".repeat(100_000) + "]".repeat(100_000) + "\n");
        for (Path f : List.of(bomb, deep)) {
            long start = System.nanoTime();
            Run r = run("plan", f.toString());
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(2, r.code, r::toString);
            assertEquals("", r.out, r::toString);
            assertEquals(1, r.err.lines().count(), r::toString);
            assertTrue(r.err.length() < 500 && r.err.matches("gpuctl: " + java.util.regex.Pattern.quote(f.toString()) + ":\\d+:\\d+: .*\\n"), r::toString);
            System.out.println(f.getFileName() + ": exit 2 in " + ms + " ms: " + r.err.strip());
        }
    }

    @Test void overlappingPodCidrIsAnInventoryErrorAtItsPlaceNamingBothRanges(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("inv.yaml");
        Files.writeString(f, Files.readString(EXAMPLE).replace("podCidr: 10.244.0.0/16", "podCidr: 172.16.0.0/16"));
        Run r = run("plan", f.toString());
        assertEquals(2, r.code, r::toString);
        var lines = Files.readString(f).lines().toList();
        int line = lines.indexOf(lines.stream().filter(l -> l.startsWith("  podCidr: 172.16.0.0/16")).findFirst().orElseThrow()) + 1;
        assertTrue(r.err.contains(f + ":" + line + ":12: podCidr 172.16.0.0/16"), r::toString);
        assertTrue(r.err.contains("podCidr 172.16.0.0/16 (cluster.podCidr) overlaps 172.16.10.90/32 (node master address)"), r::toString);
    }

    @Test void unknownFlagAndCommandAreUsageErrors() {
        Run r = run("plan", "--frobnicate");
        assertEquals(2, r.code, r::toString);
        assertTrue(r.err.contains("--frobnicate"), r::toString);
        assertEquals(2, run("bootstrapp").code);
        assertEquals(2, run().code);
    }

    @Test void versionAndHelpGoToStdout() {
        Run v = run("--version");
        assertEquals(0, v.code);
        assertTrue(v.out.startsWith("gpuctl "), v::toString);
        Run h = run("--help");
        assertEquals(0, h.code);
        assertTrue(h.out.contains("Exit codes:"), h::toString);
    }

    @Test void completionScriptForBashAndZsh() {
        Run b = run("completion", "bash");
        assertEquals(0, b.code);
        assertTrue(b.out.contains("complete -F") && b.out.contains("plan"), "bash script mentions commands");
        assertEquals(0, run("completion", "zsh").code);
        assertEquals(2, run("completion", "fish").code);
    }

    /** An inventory on loopback addresses (nothing may connect anyway) whose nodes log in with {@code key}. */
    static Path loopbackInventory(Path dir, Path key) throws IOException {
        Path f = dir.resolve("inventory.yaml");
        Files.writeString(f, "cluster: { name: t, kubernetesVersion: \"1.35\" }\n"
            + "ssh: { identityFile: \"" + key + "\", knownHosts: \"" + dir.resolve("known_hosts") + "\" }\n"
            + "nodes:\n"
            + "  - { name: m, address: 127.0.0.1, role: master }\n"
            + "  - { name: w1, address: 127.0.0.2, role: worker }\n");
        return f;
    }

    @Test void aMissingADirectoryOrAGarbageIdentityFileIsAUsageErrorBeforeAnyConnection(@TempDir Path dir) throws IOException {
        Path garbage = dir.resolve("garbage_key");
        Files.writeString(garbage, "this is not a private key\n");
        Map<Path, String> cases = Map.of(
            dir.resolve("no_such_key"), "no such file",
            dir, "it is a directory",
            garbage, "not an OpenSSH private key");
        for (var c : cases.entrySet()) {
            Path inv = loopbackInventory(dir, c.getKey());
            for (String[] args : new String[][] {{"bootstrap", inv.toString()}, {"verify", inv.toString()}, {"join-token", inv.toString()},
                    {"kubeconfig", "--merge", "--kubeconfig", dir.resolve("kc").toString(), inv.toString()}}) {
                Run r = run(args);
                assertEquals(2, r.code, () -> String.join(" ", args) + " with " + c.getKey() + ": " + r);
                assertTrue(r.err.contains("cannot use the identity file " + c.getKey()), r::toString);
                assertTrue(r.err.contains(c.getValue()), r::toString);
                assertTrue(r.err.contains("Nothing was connected to."), r::toString);
                assertFalse(r.err.contains("at dev.gpuctl") || r.err.contains("Exception"), r::toString);
            }
        }
    }

    @Test void aMissingKeyOfTheInventorysSshDefaultsIsRefusedAtItsPlaceByEveryConnectingCommand(@TempDir Path dir) throws IOException {
        Path key = dir.resolve("no_such_key");
        Path inv = loopbackInventory(dir, key);
        String place = inv + ":2:" + (Files.readAllLines(inv).get(1).indexOf("\"" + key) + 1); // the quoted scalar starts at its quote
        for (String[] args : new String[][] {{"verify", inv.toString()}, {"join-token", inv.toString()}, {"gpus", inv.toString()}}) {
            Run r = run(args);
            assertEquals(2, r.code, () -> String.join(" ", args) + ": " + r);
            assertTrue(r.err.startsWith("gpuctl: " + place + ": ssh.identityFile: m: cannot use the identity file " + key), r::toString);
        }
        Run plan = run("plan", inv.toString());
        assertEquals(0, plan.code, plan::toString);
        assertTrue(plan.out.contains("  warning: " + place + ": ssh.identityFile: " + key + " does not exist"), plan::toString);
    }

    @Test void everySubcommandHasHelp() {
        for (String[] cmd : new String[][] {{"plan"}, {"bootstrap"}, {"join-token"}, {"verify"}, {"gpus"}, {"job"}, {"job", "render"},
                {"job", "submit"}, {"kubeconfig"}, {"completion"}}) {
            String[] args = java.util.Arrays.copyOf(cmd, cmd.length + 1);
            args[cmd.length] = "--help";
            Run r = run(args);
            assertEquals(0, r.code, () -> String.join(" ", args) + ": " + r);
            assertTrue(r.out.startsWith("Usage: gpuctl " + String.join(" ", cmd)), r::toString);
            String name = "gpuctl " + String.join(" ", cmd);
            String tail = r.out.substring(r.out.lastIndexOf("Exit codes:"));
            assertEquals(ExitCode.of(name).size() + 1, tail.lines().filter(l -> l.matches("Exit codes:|\\s*\\d+\\s+\\S.*")).count(), tail);
            for (ExitCode c : ExitCode.of(name)) {
                assertTrue(tail.matches("(?s).*\\n\\s*" + c.code() + "\\s+" + java.util.regex.Pattern.quote(c.meaning().substring(0, Math.min(20, c.meaning().length()))) + ".*"),
                    () -> name + " lacks exit " + c.code() + ":\n" + tail);
            }
        }
        assertEquals(java.util.List.of(ExitCode.OK, ExitCode.USAGE), ExitCode.of("gpuctl plan"));
        assertEquals(java.util.List.of(ExitCode.OK, ExitCode.STEP_FAILED, ExitCode.USAGE, ExitCode.UNREACHABLE), ExitCode.of("gpuctl gpus"));
    }

    /** The README's table is this one: every code once, in order. */
    @Test void theExitCodeTable() throws IOException {
        String table = """
            | code | meaning |
            |---|---|
            | 0 | ok |
            | 1 | a host failed: a step or a command on it failed (the master's kubectl included), its connection was lost, or its host key or login was refused outside a preflight |
            | 2 | usage or input error, nothing was changed: a bad option or value, an inventory or job spec problem (FILE:LINE:COLUMN: a CIDR overlap found offline, a missing identity file included), `connection: local` without --allow-local, an unsafe .gpuctl directory (a link, another user's), or no cluster yet (no kubeconfig on the master, no cached join command), no such job |
            | 3 | preflight refused, nothing was changed: e.g. a host's own networks overlap the cluster's, a host key or login was refused, another run holds the lock, the lock's place on the master is unsafe, or a restore would overwrite a healthy cluster |
            | 4 | verify found a problem |
            | 5 | verify found no problem but warned: a certificate expires within 30 days (`gpuctl certs renew`) |
            | 6 | a host could not be reached (connection refused or timed out, address not resolved): nothing was done on it; the message names it and its log file holds the connection error. Other hosts' problems are listed too; this code wins over 1, 3 and 4 |
            | 130 | interrupted (Ctrl-C); a re-run resumes |
            """;
        assertEquals(table, ExitCode.markdownTable());
        assertTrue(Files.readString(Path.of("README.md")).contains(table), "README.md's \"Exit codes\" table is ExitCode's");
    }

    @Test void onlyTheNamedSubcommandIsBuiltAndAllOfThemForHelpCompletionAndTypos() {
        var all = java.util.List.copyOf(GpuctlCommand.SUBCOMMANDS.keySet());
        assertEquals(java.util.Set.of("plan"), Main.commandLine(Map.of(), new String[] {"-v", "plan", "x.yaml"}).getSubcommands().keySet());
        assertEquals(java.util.Set.of(), Main.commandLine(Map.of(), new String[] {"--version"}).getSubcommands().keySet());
        for (String[] args : new String[][] {{}, {"--help"}, {"completion", "bash"}, {"bootstrp"}}) {
            assertEquals(all, java.util.List.copyOf(Main.commandLine(Map.of(), args).getSubcommands().keySet()), String.join(" ", args));
        }
    }
}
