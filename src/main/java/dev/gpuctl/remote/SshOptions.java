package dev.gpuctl.remote;

import java.io.Console;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import net.schmizz.sshj.userauth.password.PasswordFinder;
import net.schmizz.sshj.userauth.password.Resource;

/**
 * How gpuctl connects, for all hosts of a run.
 *
 * @param connectTimeout     the --connect-timeout given on the command line, over every node's {@code ssh.connectTimeout};
 *                           empty: each node's own (15 s by default). It bounds the TCP connect, the server's SSH banner
 *                           and the key exchange together
 * @param keepAlive          interval of keepalive@openssh.com requests; a dead connection is noticed after 5 misses
 * @param acceptNewHostKeys  add unknown host keys to known_hosts (OpenSSH's accept-new); changed keys are always refused
 * @param passphrase         asks for an identity file's passphrase; null: never ask (an encrypted key then fails
 *                           with AUTH_FAILED)
 * @param keys               the run's decrypted identities (a new, empty store with the four-argument constructor)
 * @param agentSocket        the ssh-agent's socket (SSH_AUTH_SOCK); empty: no agent (the shorter constructors read
 *                           SSH_AUTH_SOCK from the environment)
 */
public record SshOptions(Optional<Duration> connectTimeout, Duration keepAlive, boolean acceptNewHostKeys,
                         PasswordFinder passphrase, SshKeys keys, Optional<Path> agentSocket) {
    public SshOptions {
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(agentSocket, "agentSocket");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(keepAlive, "keepAlive");
        if (connectTimeout.filter(t -> t.isNegative() || t.isZero()).isPresent()) {
            throw new IllegalArgumentException("connectTimeout must be > 0");
        }
        if (keepAlive.isNegative() || keepAlive.toSeconds() < 1) throw new IllegalArgumentException("keepAlive must be >= 1s");
    }

    /** Options whose connect timeout, given here, is used for every node (what --connect-timeout does). */
    public SshOptions(Duration connectTimeout, Duration keepAlive, boolean acceptNewHostKeys, PasswordFinder passphrase) {
        this(Optional.of(connectTimeout), keepAlive, acceptNewHostKeys, passphrase, new SshKeys(), agentFromEnvironment());
    }

    public SshOptions(Duration connectTimeout, Duration keepAlive, boolean acceptNewHostKeys, PasswordFinder passphrase,
                      SshKeys keys) {
        this(Optional.of(connectTimeout), keepAlive, acceptNewHostKeys, passphrase, keys, agentFromEnvironment());
    }

    /** These options with the command line's --connect-timeout (empty: each node's ssh.connectTimeout). */
    public SshOptions withConnectTimeout(Optional<Duration> timeout) {
        return new SshOptions(timeout, keepAlive, acceptNewHostKeys, passphrase, keys, agentSocket);
    }

    /** How long connecting to a node with these settings may take: --connect-timeout, else its ssh.connectTimeout. */
    public Duration connectTimeoutFor(dev.gpuctl.inventory.SshSettings ssh) {
        return connectTimeout.orElse(ssh.connectTimeout());
    }

    /** These options with another ssh-agent socket (or none). */
    public SshOptions withAgent(Optional<Path> socket) {
        return new SshOptions(connectTimeout, keepAlive, acceptNewHostKeys, passphrase, keys, socket);
    }

    /** SSH_AUTH_SOCK, as ssh(1) reads it; empty when unset or blank. */
    public static Optional<Path> agentFromEnvironment() {
        String sock = System.getenv("SSH_AUTH_SOCK");
        if (sock == null || sock.isBlank()) return Optional.empty();
        try {
            return Optional.of(Path.of(sock));
        } catch (InvalidPathException e) {
            return Optional.empty();
        }
    }

    /** Each node's own connect timeout, 15 s keepalive, passphrases asked on the terminal when there is one. */
    public static SshOptions defaults(boolean acceptNewHostKeys) {
        return new SshOptions(Optional.empty(), Duration.ofSeconds(15), acceptNewHostKeys, consolePassphrase(), new SshKeys(),
            agentFromEnvironment());
    }

    /**
     * Asks for a passphrase on {@link System#console()} (three tries); answers nothing when there is no
     * terminal, so that an encrypted key fails fast instead of waiting for input that never comes.
     */
    public static PasswordFinder consolePassphrase() {
        return new PasswordFinder() {
            private int asked;

            @Override
            public synchronized char[] reqPassword(Resource<?> resource) {
                Console console = System.console();
                if (console == null) return null;
                asked++;
                return console.readPassword("Passphrase for %s: ", resource.getDetail());
            }

            @Override
            public synchronized boolean shouldRetry(Resource<?> resource) {
                return System.console() != null && asked < 3;
            }
        };
    }
}
