package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A real OpenSSH ssh-agent for a test, in the foreground (-D) on a socket in a temp folder; stopped by its own PID
 * (the one this class started), never by name.
 */
final class TestAgent implements AutoCloseable {
    final Path socket;
    private final Process process;

    private TestAgent(Path socket, Process process) {
        this.socket = socket;
        this.process = process;
    }

    static TestAgent start(Path dir) throws Exception {
        if (!Files.isExecutable(Path.of("/usr/bin/ssh-agent"))) fail("/usr/bin/ssh-agent is missing: apt-get install -y openssh-client");
        Path socket = dir.resolve("agent.sock");
        Process p = new ProcessBuilder("/usr/bin/ssh-agent", "-D", "-a", socket.toString())
            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!Files.exists(socket)) {
            if (!p.isAlive() || System.nanoTime() > until) fail("ssh-agent did not start (pid " + p.pid() + ")");
            Thread.sleep(20);
        }
        return new TestAgent(socket, p);
    }

    /** ssh-add FILE, with SSH_AUTH_SOCK pointing at this agent. */
    void add(Path keyFile) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("/usr/bin/ssh-add", keyFile.toString()).redirectErrorStream(true);
        pb.environment().put("SSH_AUTH_SOCK", socket.toString());
        Process add = pb.start();
        String said = new String(add.getInputStream().readAllBytes());
        assertEquals(0, add.waitFor(), "ssh-add " + keyFile + ": " + said);
    }

    long pid() { return process.pid(); }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) process.destroyForcibly();
    }
}
