package dev.gpuctl.remote;

import dev.gpuctl.inventory.SshSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.userauth.method.AuthMethod;
import net.schmizz.sshj.userauth.method.AuthPublickey;
import net.schmizz.sshj.userauth.keyprovider.KeyProvider;
import net.schmizz.sshj.userauth.password.PasswordFinder;
import net.schmizz.sshj.userauth.password.Resource;

/**
 * The decrypted identities of one run, by file, so that a passphrase is asked once per run, not once per host; and
 * the keys of the user's ssh-agent, listed once per run. Each {@link SshOptions} has its own: nothing is kept from
 * one run (or one test) to the next.
 *
 * <p>The keys a node logs in with, in order ({@link #logins}): the key file the inventory or ~/.ssh/config names
 * (through the agent when the agent holds it, as ssh does with FILE.pub, so no passphrase is asked), then the agent's
 * other keys, then, when no file was named, ~/.ssh/id_ed25519, id_ecdsa and id_rsa.
 */
public final class SshKeys {
    private final Map<Path, KeyPair> cache = new ConcurrentHashMap<>();
    private volatile List<SshAgent.Key> agentKeys;

    /**
     * One way to log in: a key the agent holds, or a key file read (and decrypted) when first needed.
     *
     * @param source what the plan and messages show: "agent (ssh-ed25519 key 'me@laptop')" or the file
     */
    record Login(String source, Optional<SshAgent.Key> agentKey, Optional<Supplier<KeyPair>> file) {
        AuthMethod method(SSHClient c) {
            if (agentKey.isPresent()) return new AgentAuth(agentKey.get());
            return new AuthPublickey(c.loadKeys(file.orElseThrow().get()));
        }
    }

    /** The agent's keys, asked once per run; none when there is no socket or nothing answers on it. */
    List<SshAgent.Key> agentKeys(Optional<Path> socket) {
        List<SshAgent.Key> k = agentKeys;
        if (k != null) return k;
        synchronized (this) {
            if (agentKeys == null) agentKeys = socket.map(SshAgent::keys).orElse(List.of());
            return agentKeys;
        }
    }

    /**
     * The keys {@code ssh} logs in with, in order; a named key file is read now (its problems are the admin's to fix,
     * before anything connects), default key files only when they are reached.
     *
     * @throws RemoteException AUTH_FAILED when a named key file is unusable, or there is no key at all
     */
    List<Login> logins(String host, SshSettings ssh, PasswordFinder passphrase, Optional<Path> agentSocket) {
        List<SshAgent.Key> agent = agentKeys(agentSocket);
        List<Login> logins = new ArrayList<>();
        Set<SshAgent.Key> used = new HashSet<>();
        if (ssh.keyOrigin() != SshSettings.KeyOrigin.DEFAULT) {
            Path file = ssh.identityFile();
            Optional<SshAgent.Key> twin = twin(file, agent);
            if (twin.isPresent()) {
                used.add(twin.get());
                logins.add(new Login("agent (" + file + ")", twin, Optional.empty()));
            } else {
                KeyPair pair = load(host, file, passphrase, !agent.isEmpty());
                logins.add(new Login(file.toString(), Optional.empty(), Optional.of(() -> pair)));
            }
        }
        for (SshAgent.Key k : agent) {
            if (used.add(k)) logins.add(new Login("agent (" + k.describe() + ")", Optional.of(k), Optional.empty()));
        }
        if (ssh.keyOrigin() == SshSettings.KeyOrigin.DEFAULT) {
            List<Path> files = ssh.keyFiles().stream().filter(Files::exists)
                .filter(f -> twin(f, agent).isEmpty()).toList();
            if (logins.isEmpty() && !files.isEmpty()) {
                // nothing else to try: the first default key is needed, and its problems are the admin's to fix now
                KeyPair pair = load(host, files.get(0), passphrase, false);
                logins.add(new Login(files.get(0).toString(), Optional.empty(), Optional.of(() -> pair)));
                files = files.subList(1, files.size());
            }
            for (Path f : files) {
                logins.add(new Login(f.toString(), Optional.empty(), Optional.of(() -> load(host, f, passphrase, !agent.isEmpty()))));
            }
        }
        if (logins.isEmpty()) {
            Path dir = ssh.identityFile().getParent();
            throw RemoteException.noKey(host, agentSocket.isEmpty() ? "SSH_AUTH_SOCK is not set, so there is no ssh-agent"
                : "the ssh-agent at " + agentSocket.get() + " holds no keys (or does not answer)",
                dir == null ? "" : dir.toString());
        }
        return logins;
    }

    /** The agent's copy of a key file, found by FILE.pub's public key, as ssh(1) does; empty when there is none. */
    static Optional<SshAgent.Key> twin(Path file, List<SshAgent.Key> agent) {
        if (agent.isEmpty()) return Optional.empty();
        Path pub = file.resolveSibling(file.getFileName() + ".pub");
        try {
            if (!Files.isRegularFile(pub) || Files.size(pub) > 64 * 1024) return Optional.empty();
            Optional<byte[]> blob = SshAgent.publicBlob(Files.readString(pub, StandardCharsets.UTF_8));
            return blob.flatMap(b -> agent.stream().filter(k -> Arrays.equals(k.blob(), b)).findFirst());
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Reads (and decrypts, asking for the passphrase if there is a way to) an OpenSSH identity file, once per run. */
    KeyPair load(String host, Path identityFile, PasswordFinder passphrase) {
        return load(host, identityFile, passphrase, false);
    }

    private KeyPair load(String host, Path identityFile, PasswordFinder passphrase, boolean agentRunning) {
        Path file = identityFile.toAbsolutePath().normalize();
        KeyPair cached = cache.get(file);
        if (cached != null) return cached;
        synchronized (cache) {
            cached = cache.get(file);
            if (cached != null) return cached;
            if (Files.isDirectory(file)) {
                throw RemoteException.keyUnusable(host, identityFile, "it is a directory, not a private key file", null);
            }
            if (!Files.isReadable(file)) {
                throw RemoteException.keyUnusable(host, identityFile, Files.exists(file) ? "it is not readable"
                    : "no such file (set ssh.identityFile in the inventory)", null);
            }
            boolean[] asked = {false};
            boolean[] answered = {false};
            PasswordFinder finder = new PasswordFinder() {
                @Override
                public char[] reqPassword(Resource<?> resource) {
                    asked[0] = true;
                    char[] p = passphrase == null ? null : passphrase.reqPassword(resource);
                    if (p != null) answered[0] = true;
                    return p;
                }

                @Override
                public boolean shouldRetry(Resource<?> resource) {
                    return passphrase != null && answered[0] && passphrase.shouldRetry(resource);
                }
            };
            try (SSHClient loader = new SSHClient(SshRemote.config())) {
                KeyProvider kp = loader.loadKeys(file.toString(), finder);
                KeyPair pair = new KeyPair(kp.getPublic(), kp.getPrivate());
                cache.put(file, pair);
                return pair;
            } catch (IOException | RuntimeException e) {
                if (asked[0] && !answered[0]) {
                    throw RemoteException.keyUnusable(host, identityFile, "it is protected by a passphrase and there is"
                        + " no terminal to ask for it. Add it to your ssh-agent (ssh-add " + identityFile + ") and run"
                        + " gpuctl where SSH_AUTH_SOCK is set" + (agentRunning ? " (the running agent does not hold it)"
                        : "") + ", or run gpuctl from a terminal", e);
                }
                if (asked[0]) throw RemoteException.keyUnusable(host, identityFile, "wrong passphrase", e);
                throw RemoteException.keyUnusable(host, identityFile, "not an OpenSSH private key gpuctl can read"
                    + " (ed25519, ecdsa or rsa expected): " + RemoteException.reason(e), e);
            }
        }
    }
}
