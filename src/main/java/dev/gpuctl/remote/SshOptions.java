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
 * @param connectTimeout     TCP connect timeout (also bounds the SSH handshake)
 * @param keepAlive          interval of keepalive@openssh.com requests; a dead connection is noticed after 5 misses
 * @param acceptNewHostKeys  add unknown host keys to known_hosts (OpenSSH's accept-new); changed keys are always refused
 * @param passphrase         asks for an identity file's passphrase; null: never ask (an encrypted key then fails
 *                           with AUTH_FAILED)
 * @param keys               the run's decrypted identities (a new, empty store with the four-argument constructor)
 * @param agentSocket        the ssh-agent's socket (SSH_AUTH_SOCK); empty: no agent (the shorter constructors read
 *                           SSH_AUTH_SOCK from the environment)
 */
public record SshOptions(Duration connectTimeout, Duration keepAlive, boolean acceptNewHostKeys,
                         PasswordFinder passphrase, SshKeys keys, Optional<Path> agentSocket) {
    public SshOptions {
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(agentSocket, "agentSocket");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(keepAlive, "keepAlive");
        if (connectTimeout.isNegative() || connectTimeout.isZero()) throw new IllegalArgumentException("connectTimeout must be > 0");
        if (keepAlive.isNegative() || keepAlive.toSeconds() < 1) throw new IllegalArgumentException("keepAlive must be >= 1s");
    }

    public SshOptions(Duration connectTimeout, Duration keepAlive, boolean acceptNewHostKeys, PasswordFinder passphrase) {
        this(connectTimeout, keepAlive, acceptNewHostKeys, passphrase, new SshKeys(), agentFromEnvironment());
    }

    public SshOptions(Duration connectTimeout, Duration keepAlive, boolean acceptNewHostKeys, PasswordFinder passphrase,
                      SshKeys keys) {
        this(connectTimeout, keepAlive, acceptNewHostKeys, passphrase, keys, agentFromEnvironment());
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

    /** 10 s connect timeout, 15 s keepalive, passphrases asked on the terminal when there is one. */
    public static SshOptions defaults(boolean acceptNewHostKeys) {
        return new SshOptions(Duration.ofSeconds(10), Duration.ofSeconds(15), acceptNewHostKeys, consolePassphrase());
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
