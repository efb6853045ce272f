package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Held;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.step.Facts;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Hosts connect side by side: no host's handshake waits for another's (64 hosts, more than a map's first bins). */
class HostRunConnectTest {
    static final int HOSTS = 64;

    @TempDir Path dir;

    @Test void everyHostsHandshakeRunsAtTheSameTime() {
        StringBuilder y = new StringBuilder("cluster:\n  name: c\n  kubernetesVersion: \"1.35\"\n  runtime: docker\n  cni: flannel\n"
            + "  podCidr: 10.244.0.0/16\n  serviceCidr: 10.96.0.0/12\nssh:\n  user: root\n  identityFile: " + dir.resolve("key") + "\n  knownHosts: " + dir.resolve("known_hosts") + "\nnodes:\n"
            + "  - { name: m, address: 10.1.0.10, role: master }\n");
        for (int i = 1; i < HOSTS; i++) y.append("  - { name: w").append(i).append(", address: 10.1.1.").append(i).append(", role: worker }\n");
        Inventory inv = InventoryLoader.parse("inventory.yaml", y.toString(), dir, Map.of());
        CountDownLatch all = new CountDownLatch(HOSTS);
        AtomicInteger together = new AtomicInteger();
        try (HostRun run = new HostRun(inv, n -> {
            all.countDown();
            try {
                // a deadlock guard, not a timing: with handshakes one after another not every host gets here
                if (all.await(20, TimeUnit.SECONDS)) together.incrementAndGet();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new Idle(n);
        }, new Facts(), "", HOSTS)) {
            run.eachHost(inv.nodes(), node -> run.remote(node).exec("true", Duration.ofSeconds(1)));
        }
        assertEquals(HOSTS, together.get(), "hosts whose handshake ran while every other host's did");
    }

    /** A connection that answers every command with exit 0. */
    record Idle(Node node) implements Remote {
        @Override public String name() { return node.name(); }
        @Override public ExecResult exec(String command, Duration timeout) { return new ExecResult(0, "", ""); }
        @Override public Held hold(String command, Duration timeout) { return Held.ended("", 0); }
        @Override public void upload(byte[] content, String path, String mode, String owner) {}
        @Override public void upload(Path from, String path, String mode, String owner) {}
        @Override public byte[] download(String path) { return new byte[0]; }
        @Override public void download(String path, Path to) {}
        @Override public void close() {}
    }
}
