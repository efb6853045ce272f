package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import java.io.IOException;
import java.io.StringWriter;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/** Two hosts (m, w1) that are this machine's sh, each working in its own directory; every command recorded. */
abstract class ShHosts {
    @TempDir Path dir;
    final Map<String, List<String>> commands = new ConcurrentHashMap<>();
    final Set<String> losesConnection = ConcurrentHashMap.newKeySet();
    /** Host h loses its connection while the batch runs its probe number N (counted from 0), after the ones before it answered. */
    final Map<String, Integer> diesDuringProbe = new ConcurrentHashMap<>();
    final StringWriter progress = new StringWriter();
    Inventory inv;

    @BeforeEach void inventory() throws IOException {
        inv = inventory(dir, "w1");
        Files.createDirectories(dir.resolve("m"));
        Files.createDirectories(dir.resolve("w1"));
    }

    /** Host h: every command runs in dir/h with sh; a host in losesConnection drops the connection at its next command. */
    Remote host(String h) {
        List<String> mine = commands.computeIfAbsent(h, k -> Collections.synchronizedList(new ArrayList<>()));
        return (Remote) Proxy.newProxyInstance(Remote.class.getClassLoader(), new Class<?>[] {Remote.class}, (proxy, m, args) -> {
            switch (m.getName()) {
                case "exec":
                    if (losesConnection.contains(h)) throw new RemoteException(RemoteException.Kind.CONNECTION_LOST, h, h + ": connection lost");
                    mine.add((String) args[0]);
                    ExecResult r = ShRemote.run("cd " + dir.resolve(h) + " && { " + args[0] + "\n}");
                    Integer dies = diesDuringProbe.get(h);
                    java.util.regex.Matcher upTo = java.util.regex.Pattern.compile("(?s)^(.*? b " + dies + "\n)").matcher(r.stdout());
                    if (dies != null && upTo.find()) {
                        throw new RemoteException(RemoteException.Kind.CONNECTION_LOST, h, h + ": connection lost")
                            .withPartialStdout(upTo.group(1).getBytes(java.nio.charset.StandardCharsets.UTF_8));
                    }
                    return r;
                case "name": return h;
                case "connected": return true;
                case "close": return null;
                case "toString": return h;
                case "hashCode": return System.identityHashCode(proxy);
                case "equals": return proxy == args[0];
                default: throw new UnsupportedOperationException(m.getName());
            }
        });
    }


    /** An inventory in dir: master m (10.0.0.1) and the workers named (10.0.0.2, ...). */
    static Inventory inventory(Path dir, String... workers) throws IOException {
        StringBuilder yaml = new StringBuilder("cluster: { name: t, kubernetesVersion: \"1.35\" }\nnodes:\n"
            + "  - { name: m, address: 10.0.0.1, role: master }\n");
        for (int i = 0; i < workers.length; i++) {
            yaml.append("  - { name: ").append(workers[i]).append(", address: 10.0.0.").append(i + 2).append(", role: worker }\n");
        }
        Path f = dir.resolve("inventory.yaml");
        Files.writeString(f, yaml.toString());
        return InventoryLoader.load(f);
    }
}
