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
        assertEquals(Optional.of("ignored-first-user-wins"), c.lookup("gpu3").user(), "the Match block's User is not read");
        assertTrue(SshConfig.EMPTY.lookup("x").isEmpty());
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
