package dev.gpuctl.remote;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.userauth.keyprovider.KeyProvider;
import net.schmizz.sshj.userauth.password.PasswordFinder;
import net.schmizz.sshj.userauth.password.Resource;

/**
 * The decrypted identities of one run, by file, so that a passphrase is asked once per run, not once per host.
 * Each {@link SshOptions} has its own: nothing is kept from one run (or one test) to the next.
 */
public final class SshKeys {
    private final Map<Path, KeyPair> cache = new ConcurrentHashMap<>();

    /** Reads (and decrypts, asking for the passphrase if there is a way to) an OpenSSH identity file, once per run. */
    KeyPair load(String host, Path identityFile, PasswordFinder passphrase) {
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
                        + " no terminal to ask for it. Run gpuctl from a terminal, or use a key without a passphrase"
                        + " for this cluster", e);
                }
                if (asked[0]) throw RemoteException.keyUnusable(host, identityFile, "wrong passphrase", e);
                throw RemoteException.keyUnusable(host, identityFile, "not an OpenSSH private key gpuctl can read"
                    + " (ed25519, ecdsa or rsa expected): " + RemoteException.reason(e), e);
            }
        }
    }
}
