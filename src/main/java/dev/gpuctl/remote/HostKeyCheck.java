package dev.gpuctl.remote;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import net.schmizz.sshj.common.KeyType;
import net.schmizz.sshj.transport.verification.HostKeyVerifier;
import net.schmizz.sshj.transport.verification.OpenSSHKnownHosts;

/**
 * Strict host key checking for one host. A pinned fingerprint, when given, is the only truth; else the
 * known_hosts file, read with OpenSSH's semantics ({@link KnownHosts}: negated and wildcard patterns, hashed
 * names, [host]:port, case-insensitive names, @revoked; a missing file is empty). Unknown keys are
 * refused unless accept-new was asked (then appended like OpenSSH's accept-new); changed keys are always
 * refused. What went wrong is kept for {@link #problem()}, as sshj only reports "not verifiable".
 */
final class HostKeyCheck implements HostKeyVerifier {
    /** One JVM may connect to many hosts at once: appends to a known_hosts file go one at a time. */
    private static final Object APPEND_LOCK = new Object();

    private final String host;
    private final String address;
    private final int port;
    private final Path knownHosts;
    private final Optional<String> pinned;
    private final boolean acceptNew;
    private volatile RemoteException problem;

    HostKeyCheck(String host, String address, int port, Path knownHosts, Optional<String> pinned, boolean acceptNew) {
        this.host = host;
        this.address = address;
        this.port = port;
        this.knownHosts = knownHosts;
        this.pinned = pinned;
        this.acceptNew = acceptNew;
    }

    /** Why the last key was refused, or null. */
    RemoteException problem() { return problem; }

    @Override
    public boolean verify(String hostname, int p, PublicKey key) {
        String offered = Fingerprints.sha256(key);
        String label = Fingerprints.typeLabel(KeyType.fromKey(key).toString());
        if (pinned.isPresent()) {
            if (Fingerprints.samePin(pinned.get(), offered)) return true;
            problem = RemoteException.pinnedKeyMismatch(host, address, port, label, pinned.get(), offered);
            return false;
        }
        String name = KnownHosts.name(address, port);
        List<String> otherKeys = new ArrayList<>();
        try {
            List<KnownHosts.Line> lines = KnownHosts.parse(text());
            byte[] blob = Fingerprints.blob(key).blob();
            // A revoked key is refused for every host, whatever the line's host patterns say, and even when listed.
            var revoked = KnownHosts.revoked(lines, blob);
            if (revoked.isPresent()) {
                problem = RemoteException.hostKeyChanged(host, address, port, label,
                    "the offered key marked @revoked (line " + revoked.get().number() + ")", knownHosts.toString(), offered, knownHosts);
                return false;
            }
            List<KnownHosts.Line> mine = KnownHosts.forHost(lines, name);
            for (KnownHosts.Line l : mine) {
                if (Arrays.equals(l.key().blob(), blob)) return true;
            }
            for (KnownHosts.Line l : lines) {
                if (l.marker() == KnownHosts.Marker.REVOKED && KnownHosts.matches(l.hosts(), name)) {
                    otherKeys.add("revoked " + l.key().label() + " key " + l.key().fingerprint() + " (line " + l.number() + ")");
                } else if (mine.contains(l)) {
                    otherKeys.add(l.key().label() + " key " + l.key().fingerprint() + " (line " + l.number() + ")");
                }
            }
        } catch (IOException e) {
            problem = RemoteException.io(host, "cannot read " + knownHosts, RemoteException.reason(e), e);
            return false;
        }
        if (!otherKeys.isEmpty()) {
            // Another key (or a revoked one) is on record for this host: OpenSSH refuses, and so do we.
            problem = RemoteException.hostKeyChanged(host, address, port, label, String.join(", ", otherKeys),
                knownHosts.toString(), offered, knownHosts);
            return false;
        }
        if (!acceptNew) {
            problem = RemoteException.hostKeyUnknown(host, address, port, label, offered, knownHosts);
            return false;
        }
        try {
            append(knownHosts, Fingerprints.knownHostsLine(address, port, key));
            return true;
        } catch (IOException | UncheckedIOException e) {
            problem = RemoteException.io(host, "cannot add the host key to " + knownHosts, RemoteException.reason(e), e);
            return false;
        }
    }

    /**
     * The key types on record for this host (by {@link KnownHosts}' matching), so that the host is asked for a key of
     * a type that can be checked; sshj reads them from lines rewritten to name the host plainly.
     */
    @Override
    public List<String> findExistingAlgorithms(String hostname, int p) {
        if (pinned.isPresent()) return List.of();
        try {
            String name = KnownHosts.name(address, port);
            StringBuilder plain = new StringBuilder();
            for (KnownHosts.Line l : KnownHosts.forHost(KnownHosts.parse(text()), name)) {
                plain.append(name).append(' ').append(l.key().type()).append(' ')
                    .append(Base64.getEncoder().encodeToString(l.key().blob())).append('\n');
            }
            return new OpenSSHKnownHosts(new StringReader(plain.toString())).findExistingAlgorithms(address, port);
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }

    private String text() throws IOException {
        return Files.exists(knownHosts) ? Files.readString(knownHosts, StandardCharsets.UTF_8) : "";
    }

    /** Appends one line, creating the directory (0700) and the file (0600) when needed. */
    static void append(Path file, String line) throws IOException {
        synchronized (APPEND_LOCK) {
            Path dir = file.toAbsolutePath().getParent();
            if (dir != null && !Files.isDirectory(dir)) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            if (!Files.exists(file)) {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            }
            byte[] old = Files.readAllBytes(file);
            String prefix = old.length > 0 && old[old.length - 1] != '\n' ? "\n" : "";
            Files.writeString(file, prefix + line + "\n", StandardCharsets.UTF_8, StandardOpenOption.APPEND);
        }
    }
}
