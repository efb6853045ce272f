package dev.gpuctl.engine;

import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A host that is this machine's {@code sh}, as the test's user: runs each command like a remote host would, and
 * counts them. Only exec is answered (a proxy, so that it keeps up with {@link Remote}'s other methods).
 */
final class ShRemote {
    final List<String> commands = Collections.synchronizedList(new ArrayList<>());

    Remote remote() {
        return (Remote) Proxy.newProxyInstance(Remote.class.getClassLoader(), new Class<?>[] {Remote.class}, (proxy, m, args) -> {
            switch (m.getName()) {
                case "exec": commands.add((String) args[0]); return run((String) args[0]);
                case "name": return "sh";
                case "connected": return true;
                case "close": return null;
                case "toString": return "ShRemote";
                case "hashCode": return System.identityHashCode(proxy);
                case "equals": return proxy == args[0];
                default: throw new UnsupportedOperationException(m.getName());
            }
        });
    }

    /** Runs {@code sh -c command} with stdin from /dev/null; output decoded as UTF-8, as the real remotes do. */
    static ExecResult run(String command) {
        try {
            Path out = Files.createTempFile("shremote", ".out");
            Path err = Files.createTempFile("shremote", ".err");
            try {
                Process p = new ProcessBuilder("sh", "-c", dev.gpuctl.hostfiles.TestJournals.redirect(command)).redirectInput(new File("/dev/null"))
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
                int exit = p.waitFor();
                return new ExecResult(exit, new String(Files.readAllBytes(out), StandardCharsets.UTF_8),
                    new String(Files.readAllBytes(err), StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
