package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Held;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.step.Facts;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A host's connection that died (a reboot) is made again on its next use: bounded, announced, the same connector. */
class HostRunReconnectTest {
    @TempDir Path dir;

    Inventory inventory() {
        String y = "cluster:\n  name: c\n  kubernetesVersion: \"1.35\"\n  runtime: docker\n  cni: flannel\n"
            + "  podCidr: 10.244.0.0/16\n  serviceCidr: 10.96.0.0/12\nssh:\n  user: root\n  identityFile: " + dir.resolve("key")
            + "\n  knownHosts: " + dir.resolve("known_hosts") + "\nnodes:\n"
            + "  - { name: m, address: 10.1.0.10, role: master }\n  - { name: w1, address: 10.1.1.1, role: worker }\n";
        return InventoryLoader.parse("inventory.yaml", y, dir, Map.of());
    }

    /** A connection that answers with the number of the connection it is, and dies when told to. */
    static final class Numbered implements Remote {
        final String name;
        final int number;
        volatile boolean alive = true;
        volatile boolean closed;

        Numbered(String name, int number) {
            this.name = name;
            this.number = number;
        }

        @Override public String name() { return name; }
        @Override public ExecResult exec(String command, Duration timeout) { return new ExecResult(0, String.valueOf(number), ""); }
        @Override public Held hold(String command, Duration timeout) { return Held.ended("", 0); }
        @Override public void upload(byte[] content, String path, String mode, String owner) {}
        @Override public void upload(Path from, String path, String mode, String owner) {}
        @Override public byte[] download(String path) { return new byte[0]; }
        @Override public void download(String path, Path to) {}
        @Override public boolean connected() { return alive; }
        @Override public void close() { closed = true; }
    }

    /** Connects by the script: a RemoteException kind fails that try, null makes a connection. */
    static final class Scripted implements Function<Node, Remote> {
        final Deque<RemoteException.Kind> script;
        final List<Numbered> made = new ArrayList<>();
        int tries;

        Scripted(List<RemoteException.Kind> script) { this.script = new ArrayDeque<>(script); }

        @Override public synchronized Remote apply(Node n) {
            tries++;
            RemoteException.Kind k = script.isEmpty() ? null : script.poll();
            if (k != null && k != RemoteException.Kind.INTERRUPTED) throw new RemoteException(k, n.name(), n.name() + ": " + k);
            Numbered r = new Numbered(n.name(), made.size() + 1);
            made.add(r);
            return r;
        }
    }

    @Test void aDeadConnectionIsMadeAgainAfterTheHostAnswersAgainAndSaidSo() {
        Inventory inv = inventory();
        Node w1 = inv.node("w1").orElseThrow();
        // first connect; then, after the death, two tries while the host is still down, then it answers
        Scripted connector = new Scripted(List.of(RemoteException.Kind.INTERRUPTED, RemoteException.Kind.UNREACHABLE,
            RemoteException.Kind.CONNECTION_LOST));
        List<String> said = new ArrayList<>();
        try (HostRun run = new HostRun(inv, connector, new Facts(), "", 2, said::add, 2, Duration.ofMinutes(1), Duration.ofMillis(1))) {
            assertEquals("1", run.remote(w1).exec("x", Duration.ofSeconds(1)).stdout());
            assertEquals("1", run.remote(w1).exec("x", Duration.ofSeconds(1)).stdout(), "a live connection is kept");
            connector.made.get(0).alive = false;
            assertEquals("2", run.remote(w1).exec("x", Duration.ofSeconds(1)).stdout(), "a new connection after the old one died");
            assertTrue(connector.made.get(0).closed, "the dead connection was closed");
            assertEquals(4, connector.tries, "one first connect, then three tries: two while the host was down, one that answered");
            assertTrue(said.stream().anyMatch(l -> l.startsWith("w1: the connection to w1 was lost") && l.contains("connecting again, up to 60s")), said::toString);
            assertTrue(said.contains("w1: connected again"), said::toString);
            assertTrue(run.log(w1).file().toFile().exists());
        }
    }

    @Test void aChangedHostKeyIsNeverTriedAgain() {
        Inventory inv = inventory();
        Node w1 = inv.node("w1").orElseThrow();
        Scripted connector = new Scripted(List.of(RemoteException.Kind.INTERRUPTED, RemoteException.Kind.HOST_KEY_CHANGED));
        try (HostRun run = new HostRun(inv, connector, new Facts(), "", 2, line -> { }, 2, Duration.ofMinutes(1), Duration.ofMillis(1))) {
            run.remote(w1);
            connector.made.get(0).alive = false;
            RemoteException e = assertThrows(RemoteException.class, () -> run.remote(w1));
            assertSame(RemoteException.Kind.HOST_KEY_CHANGED, e.kind());
            assertEquals(2, connector.tries, "the refused key ends the reconnect at once");
        }
    }

    @Test void aHostThatStaysDownEndsTheReconnectWithItsLastError() {
        Inventory inv = inventory();
        Node w1 = inv.node("w1").orElseThrow();
        List<RemoteException.Kind> script = new ArrayList<>(List.of(RemoteException.Kind.INTERRUPTED));
        for (int i = 0; i < 1000; i++) script.add(RemoteException.Kind.UNREACHABLE);
        Scripted connector = new Scripted(script);
        // a bound shorter than one pause: one try, then the host's error
        try (HostRun run = new HostRun(inv, connector, new Facts(), "", 2, line -> { }, 2, Duration.ZERO, Duration.ofSeconds(1))) {
            run.remote(w1);
            connector.made.get(0).alive = false;
            RemoteException e = assertThrows(RemoteException.class, () -> run.remote(w1));
            assertSame(RemoteException.Kind.UNREACHABLE, e.kind());
            assertEquals(2, connector.tries);
        }
    }
}
