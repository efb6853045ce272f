package dev.gpuctl.remote;

import dev.gpuctl.inventory.Node;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Collection;

/** Opens the right {@link Remote} for a node. */
public final class Remotes {
    private Remotes() {}

    /** How long a streamed file transfer may take (an etcd snapshot may be 2 GiB, a site link slow). */
    static final Duration TRANSFER_TIMEOUT = Duration.ofHours(1);

    /** Why {@link Remote#download(String)} refused a file: more than it keeps in memory. */
    static String tooBigForMemory() {
        return "larger than " + (StreamPump.CAP >> 20) + " MiB, more than gpuctl reads into memory";
    }

    /**
     * The local file a download writes: created 0600 when absent, else emptied (its mode kept). A link or anything
     * but a regular file there is refused, never followed.
     */
    static OutputStream localTarget(Path to) throws IOException {
        if (Files.exists(to, LinkOption.NOFOLLOW_LINKS) && !Files.isRegularFile(to, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException(to + " is not a regular file (a link or a directory): not written");
        }
        if (!Files.exists(to, LinkOption.NOFOLLOW_LINKS)) {
            Files.createFile(to, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        }
        return Files.newOutputStream(to, LinkOption.NOFOLLOW_LINKS, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING);
    }

    /**
     * Reads every identity file these nodes log in with, once each, and lists the ssh-agent's keys, before anything
     * connects: a missing, unreadable or unusable key (or none at all) is the admin's input to fix, not a host's failure.
     *
     * @throws RemoteException AUTH_FAILED naming the file and what is wrong with it
     */
    public static void checkIdentityFiles(Collection<Node> nodes, SshOptions opts) {
        for (Node n : nodes) {
            if (!n.isLocal()) opts.keys().logins(n.name(), n.ssh(), opts.passphrase(), opts.agentSocket());
        }
    }

    /**
     * Starts making what every SSH key read and connection needs (sshj's configuration, BouncyCastle registered) on a
     * daemon thread, for a command that will connect: it is made while the command reads its inventory instead of
     * after. Called once the arguments are parsed (the log levels set), since building it makes sshj's first loggers. Changes nothing else: the first use waits for it, a failure is thrown there as before.
     */
    public static void prepareSsh() { SshConnect.prepareInBackground(); }

    /** {@link LocalRemote} for {@code connection: local}, else a connected {@link SshRemote}. */
    public static Remote open(Node node, SshOptions opts) {
        return node.isLocal() ? LocalRemote.open(node) : SshRemote.connect(node, opts);
    }
}
