package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ~/.ssh/config read as ssh_config(5) says: patterns, negation, first value wins; the inventory wins over it. */
class SshConfigTest {
    static final String CONFIG = """
        # a user's config
        Host gpu1 gpu2
            HostName 10.0.0.%h
            User ops
            IdentityFile ~/.ssh/lab_ed25519
            ProxyJump jump
        Host gpu*  !gpu9
            Port 2222
            User ignored-first-user-wins
        Host jump
            HostName bastion.lab.example
            User hop
            Port 2200
        Match host gpu3
            User matched
        Host *
            IdentityFile ~/.ssh/id_rsa
        """;

    @Test void patternsNegationAndTheFirstValueOfEachKeyword() {
        SshConfig c = SshConfig.parse(CONFIG);
        SshConfig.Host gpu1 = c.lookup("GPU1");
        assertEquals(Optional.of("ops"), gpu1.user(), "names compared without case; the first User wins");
        assertEquals(Optional.of(2222), gpu1.port());
        assertEquals(Optional.of("~/.ssh/lab_ed25519"), gpu1.identityFile(), "the first IdentityFile wins over Host *'s");
        assertEquals(Optional.of("jump"), gpu1.proxyJump());
        assertEquals(Optional.of("10.0.0.GPU1"), gpu1.hostName(), "%h is the name asked for");
        SshConfig.Host gpu9 = c.lookup("gpu9");
        assertEquals(Optional.empty(), gpu9.port(), "a negated pattern that matches excludes the block");
        assertEquals(Optional.of("~/.ssh/id_rsa"), gpu9.identityFile());
        assertEquals(Optional.of("ignored-first-user-wins"), c.lookup("gpu3").user(), "Host gpu* came first");
        assertTrue(SshConfig.EMPTY.lookup("x").isEmpty());
    }

    /** Files in memory, for Include. */
    static SshConfig.Files files(Map<String, String> byPath) {
        return new SshConfig.Files() {
            @Override public List<String> list(Path dir) {
                return byPath.keySet().stream().map(Path::of).filter(p -> dir.equals(p.getParent()))
                    .map(p -> p.getFileName().toString()).toList();
            }

            @Override public Optional<String> read(Path file) {
                return Optional.ofNullable(byPath.get(file.toString()));
            }
        };
    }

    static final Path SSH = Path.of("/home/ops/.ssh");

    static SshConfig parse(String text, Map<String, String> others) {
        return SshConfig.parse(text, SSH.resolve("config"), SSH, files(others));
    }

    /** OpenSSH's own regression test of Include (regress/cfginclude.sh), answered as `ssh -G` answers it. */
    @Test void includeAsOpenSshsRegressionTestHasIt() {
        String i = "/o/ssh_config.i";
        SshConfig c = SshConfig.parse("""
            Match host a
            	Hostname aa

            Match host b
            	Hostname bb
            	Include /o/ssh_config.i.*

            Match host c
            	Include /o/ssh_config.i.*
            	Hostname cc

            Match host m
            	Include /o/ssh_config.i.*

            Host d
            	Hostname dd

            Host e
            	Hostname ee
            	Include /o/ssh_config.i.*

            Host f
            	Include /o/ssh_config.i.*
            	Hostname ff

            Host n
            	Include /o/ssh_config.i.*
            """, Path.of(i), SSH, files(Map.of(
            i + ".0", "Match host xxxxxx\n",
            i + ".1", "Match host a\n\tHostname aaa\nMatch host b\n\tHostname bbb\nMatch host c\n\tHostname ccc\n"
                + "Host d\n\tHostname ddd\nHost e\n\tHostname eee\nHost f\n\tHostname fff\n",
            i + ".2", "Match host a\n\tHostname aaaa\nMatch host b\n\tHostname bbbb\nMatch host c\n\tHostname cccc\n"
                + "Host d\n\tHostname dddd\nHost e\n\tHostname eeee\nHost f\n\tHostname ffff\nMatch all\n\tHostname xxxx\n")));
        assertEquals(List.of(), c.problems());
        Map<String, String> expected = new java.util.LinkedHashMap<>();
        for (String[] t : new String[][] {{"a", "aa"}, {"b", "bb"}, {"c", "ccc"}, {"d", "dd"}, {"e", "ee"}, {"f", "fff"},
            {"m", "xxxx"}, {"n", "xxxx"}, {"x", "x"}}) expected.put(t[0], t[1]);
        expected.forEach((host, want) -> assertEquals(want, c.lookup(host).hostName().orElse(host), "host " + host));
    }

    @Test void includeIsRelativeToDotSshGlobbedInLexicalOrderAndAtItsPlace() {
        SshConfig c = parse("""
            Include conf.d/*.conf ~/extra/lab
            Host *
              User fallback
            """, Map.of(
            "/home/ops/.ssh/conf.d/20-gpu.conf", "Host gpu*\n  User second\n  Port 2200\n",
            "/home/ops/.ssh/conf.d/10-gpu.conf", "Host gpu*\n  User first\n",
            "/home/ops/.ssh/conf.d/.hidden.conf", "Host *\n  User hidden\n",
            "/home/ops/.ssh/conf.d/notes.txt", "Host *\n  User txt\n",
            "/home/ops/extra/lab", "Host gpu1\n  HostName 10.0.0.1\n"));
        SshConfig.Host gpu1 = c.lookup("gpu1");
        assertEquals(Optional.of("first"), gpu1.user(), "10-gpu.conf before 20-gpu.conf; the first value wins");
        assertEquals(Optional.of(2200), gpu1.port());
        assertEquals(Optional.of("10.0.0.1"), gpu1.hostName(), "~/ in Include is HOME");
        assertEquals(Optional.of("fallback"), c.lookup("cpu1").user(), "no hidden file, no non-matching name");
        assertEquals(List.of(), parse("Include nothing/*.conf missing\n", Map.of()).problems(), "a glob with no match is no error, as in ssh");
    }

    @Test void includeLoopsStopAtOpenSshsDepth() {
        SshConfig c = parse("Include loop\n", Map.of("/home/ops/.ssh/loop", "Host *\n  User u\nInclude loop\n"));
        assertEquals(1, c.problems().size(), c.problems()::toString);
        assertTrue(c.problems().get(0).startsWith("/home/ops/.ssh/loop:3: Include nested more than 16 deep"), c.problems()::toString);
        assertEquals(Optional.of("u"), c.lookup("x").user());
    }

    @Test void matchHostSeesTheHostNameObtainedSoFarAndOriginalhostTheName() {
        SshConfig c = SshConfig.parse("""
            Host lab-*
              HostName %h.lab.example
            Match host *.lab.example !originalhost lab-9
              User labuser
            Match originalhost lab-1,lab-2
              Port 2201
            Match !host *.lab.example
              User outsider
            Match all
              IdentityFile ~/.ssh/all
            """);
        assertEquals(List.of(), c.problems());
        assertEquals(Optional.of("labuser"), c.lookup("lab-1").user(), "host is matched against HostName lab-1.lab.example");
        assertEquals(Optional.of(2201), c.lookup("lab-2").port());
        assertEquals(Optional.empty(), c.lookup("lab-3").port());
        assertEquals(Optional.empty(), c.lookup("lab-9").user(), "!originalhost excluded it, and !host does not hold for its HostName");
        assertEquals(Optional.of("outsider"), c.lookup("10.0.0.5").user());
        assertEquals(Optional.of("~/.ssh/all"), c.lookup("anything").identityFile());
    }

    @Test void otherMatchCriteriaSkipTheBlockWithANoteNeverACrash() {
        SshConfig c = parse("""
            Match exec "test -f /tmp/x" host gpu*
              User fromexec
            Match user ops
              Port 2222
            Match canonical all
              User canon
            Host *
              User plain
            """, Map.of());
        assertEquals(List.of(), c.problems());
        assertEquals(Optional.of("plain"), c.lookup("gpu1").user());
        assertEquals(Optional.empty(), c.lookup("gpu1").port());
        assertEquals(List.of(
            "/home/ops/.ssh/config:1: Match exec test -f /tmp/x is not read by gpuctl: the block is skipped (give what it sets in the inventory's ssh: settings)",
            "/home/ops/.ssh/config:3: Match user ops is not read by gpuctl: the block is skipped (give what it sets in the inventory's ssh: settings)",
            "/home/ops/.ssh/config:5: Match canonical is not read by gpuctl: the block is skipped (give what it sets in the inventory's ssh: settings)"),
            c.notes("gpu1"));
        assertEquals(2, c.notes("cpu1").size(), "the exec block's host gpu* does not hold for cpu1: nothing was skipped for it");
    }

    @Test void matchLinesSshRefusesAreInputErrors() {
        assertEquals(List.of("/home/ops/.ssh/config:1: Match all cannot be combined with other criteria (ssh refuses this file too; write 'Match all' alone)"),
            parse("Match all host x\n  User u\n", Map.of()).problems());
        assertTrue(parse("Match host\n", Map.of()).problems().get(0).contains("Match host needs an argument"));
        assertTrue(parse("Match\n", Map.of()).problems().get(0).contains("Match needs criteria"));
        assertTrue(parse("Match hots x\n", Map.of()).problems().get(0).contains("Match criterion 'hots' is not one ssh knows"));
    }

    @Test void quotesCommentsAndEquals() {
        SshConfig c = SshConfig.parse("Host=\"gpu 1\" gpu2 # two hosts\n  IdentityFile \"~/.ssh/my key\"\n  User = ops # me\n");
        assertEquals(Optional.of("~/.ssh/my key"), c.lookup("gpu2").identityFile());
        assertEquals(Optional.of("ops"), c.lookup("gpu2").user());
    }

    @Test void theInventoryShowsSkippedBlocksAsWarnings(@TempDir Path home) throws IOException {
        Files.createDirectories(home.resolve(".ssh/conf.d"));
        Files.writeString(home.resolve(".ssh/config"), "Include conf.d/*\n");
        Files.writeString(home.resolve(".ssh/conf.d/lab"), "Match localnetwork 10.0.0.0/8\n  User inside\nHost gpu*\n  User ops\n");
        Inventory inv = load(home, "nodes: [{ name: m, address: gpu1, role: master }]\n");
        assertEquals("ops", inv.master().ssh().user(), "read through Include");
        assertEquals(List.of(home.resolve(".ssh/conf.d/lab") + ":1: Match localnetwork 10.0.0.0/8 is not read by gpuctl: the"
            + " block is skipped (give what it sets in the inventory's ssh: settings)"), inv.warnings());
    }

    @Test void proxyJumpsFirstHop() {
        assertEquals(Optional.of(new SshConfig.Jump(Optional.of("me"), "hop.lab", Optional.of(2200))), SshConfig.Jump.parse("me@hop.lab:2200,other"));
        assertEquals(Optional.of(new SshConfig.Jump(Optional.empty(), "fe80::1", Optional.of(22))), SshConfig.Jump.parse("[fe80::1]:22"));
        assertEquals(Optional.of(new SshConfig.Jump(Optional.empty(), "hop", Optional.empty())), SshConfig.Jump.parse("ssh://hop"));
        assertEquals(List.of("3: Port 'ssh' is not a port number (expected 1 to 65535)"), SshConfig.parse("Host a\n  User x\n  Port ssh\n").problems());
    }

    static Inventory load(Path home, String nodes) throws IOException {
        Path inv = home.resolve("inventory.yaml");
        Files.writeString(inv, "cluster: { name: gpu-lab, kubernetesVersion: \"1.35\" }\n" + nodes);
        return InventoryLoader.load(inv, Map.of("HOME", home.toString()));
    }

    @Test void theInventoryWinsAndTheConfigFillsInTheRestAsSshWould(@TempDir Path home) throws IOException {
        Files.createDirectories(home.resolve(".ssh"));
        Files.writeString(home.resolve(".ssh/config"), CONFIG);
        Inventory inv = load(home, """
            ssh: { port: 22 }
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
              - { name: w1, address: gpu1, role: worker }
              - { name: w2, address: gpu2, role: worker, ssh: { user: root } }
            """);
        Node w1 = inv.node("w1").orElseThrow();
        assertEquals("10.0.0.gpu1", w1.address(), "HostName replaces the alias, as ssh connects to it");
        assertEquals("ops", w1.ssh().user());
        assertEquals(22, w1.ssh().port(), "the inventory's ssh.port wins over the config's Port");
        assertEquals(home.resolve(".ssh/lab_ed25519"), w1.ssh().identityFile());
        assertEquals(Optional.of(new Bastion("bastion.lab.example", "hop", 2200)), w1.ssh().bastion(), "ProxyJump's host looked up too");
        assertEquals("root", inv.node("w2").orElseThrow().ssh().user(), "the node's own ssh: wins");
        Node m = inv.node("m").orElseThrow();
        assertEquals(home.resolve(".ssh/id_rsa"), m.ssh().identityFile(), "Host * applies to a plain address too");
        assertEquals(Optional.empty(), m.ssh().bastion());
    }

    @Test void theKeysOriginIsTheInventoryThenTheConfigThenNobody(@TempDir Path home) throws IOException {
        Files.createDirectories(home.resolve(".ssh"));
        Files.writeString(home.resolve(".ssh/config"), "Host gpu*\n  IdentityFile ~/.ssh/lab_ed25519\n");
        Inventory inv = load(home, """
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
              - { name: w1, address: gpu1, role: worker }
              - { name: w2, address: gpu2, role: worker, ssh: { identityFile: /keys/w2 } }
            """);
        assertEquals(SshSettings.KeyOrigin.DEFAULT, inv.master().ssh().keyOrigin(), "nobody names a key: agent, then defaults");
        assertEquals(List.of(home.resolve(".ssh/id_ed25519"), home.resolve(".ssh/id_ecdsa"), home.resolve(".ssh/id_rsa")),
            inv.master().ssh().keyFiles());
        assertEquals(SshSettings.KeyOrigin.SSH_CONFIG, inv.node("w1").orElseThrow().ssh().keyOrigin());
        assertEquals(List.of(home.resolve(".ssh/lab_ed25519")), inv.node("w1").orElseThrow().ssh().keyFiles());
        assertEquals(SshSettings.KeyOrigin.INVENTORY, inv.node("w2").orElseThrow().ssh().keyOrigin());
        Inventory withDefault = load(home, "ssh: { identityFile: ~/.ssh/lab }\nnodes: [{ name: m, address: gpu1, role: master }]\n");
        assertEquals(SshSettings.KeyOrigin.INVENTORY, withDefault.master().ssh().keyOrigin(), "the inventory's ssh: defaults win over the config");
        assertEquals(home.resolve(".ssh/lab"), withDefault.master().ssh().identityFile());
    }

    @Test void withoutAConfigNothingChangesAndABadOneIsAnInputError(@TempDir Path home) throws IOException {
        Inventory plain = load(home, "nodes: [{ name: m, address: gpu1, role: master }]\n");
        assertEquals("gpu1", plain.master().address());
        assertEquals("root", plain.master().ssh().user());
        assertFalse(plain.master().ssh().bastion().isPresent());
        Files.createDirectories(home.resolve(".ssh"));
        Files.writeString(home.resolve(".ssh/config"), "Host *\n  Port 99999\n");
        InventoryException e = assertThrows(InventoryException.class, () -> load(home, "nodes: [{ name: m, address: gpu1, role: master }]\n"));
        assertTrue(e.errors().stream().map(InventoryError::format).anyMatch(s -> s.contains(".ssh/config:2: Port '99999' is not a port number")),
            e.errors()::toString);
    }
}
