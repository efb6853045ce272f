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
import java.util.List;
import java.util.Optional;
import net.schmizz.sshj.common.KeyType;
import net.schmizz.sshj.transport.verification.HostKeyVerifier;
import net.schmizz.sshj.transport.verification.OpenSSHKnownHosts;
import net.schmizz.sshj.transport.verification.OpenSSHKnownHosts.KnownHostEntry;

/**
 * Strict host key checking for one host. A pinned fingerprint, when given, is the only truth; else the
 * known_hosts file (OpenSSH format, hashed names included; a missing file is empty). Unknown keys are
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
            if (pinned.get().equals(offered)) return true;
            problem = RemoteException.pinnedKeyMismatch(host, address, port, label, pinned.get(), offered);
            return false;
        }
        String name = Fingerprints.knownHostsName(address, port);
        KeyType type = KeyType.fromKey(key);
        List<String> otherKeys = new ArrayList<>();
        try {
            List<KnownHostEntry> entries = entries();
            byte[] blob = Fingerprints.blob(key).blob();
            int at = 0;
            for (KnownHostEntry e : entries) {
                at++;
                // A revoked key is refused for every host, whatever the line's host patterns say.
                String line = e.getLine().strip();
                if (line.startsWith("@revoked") && Fingerprints.keyOfLine(line)
                        .map(k -> java.util.Arrays.equals(k.blob(), blob)).orElse(false)) {
                    problem = RemoteException.hostKeyChanged(host, address, port, label,
                        "the offered key marked @revoked (line " + at + ")", knownHosts.toString(), offered, knownHosts);
                    return false;
                }
            }
            for (KnownHostEntry e : entries) {
                if (!e.appliesTo(name) || e.getLine().strip().startsWith("@")) continue;
                if (e.getType() == type && e.verify(key)) return true;
            }
            int lineNo = 0;
            for (KnownHostEntry e : entries) {
                lineNo++;
                if (!e.appliesTo(name)) continue;
                final int n = lineNo;
                String line = e.getLine().strip();
                if (line.startsWith("@cert-authority")) continue;
                String revoked = line.startsWith("@revoked") ? "revoked " : "";
                Fingerprints.keyOfLine(line).ifPresent(k ->
                    otherKeys.add(revoked + k.label() + " key " + k.fingerprint() + " (line " + n + ")"));
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

    @Override
    public List<String> findExistingAlgorithms(String hostname, int p) {
        if (pinned.isPresent()) return List.of();
        try {
            return known().findExistingAlgorithms(address, port);
        } catch (IOException e) {
            return List.of();
        }
    }

    private OpenSSHKnownHosts known() throws IOException {
        String text = Files.exists(knownHosts) ? Files.readString(knownHosts, StandardCharsets.UTF_8) : "";
        return new OpenSSHKnownHosts(new StringReader(text));
    }

    /** The file's entries in file order, one per line (comments and blank lines included, so that numbers match). */
    private List<KnownHostEntry> entries() throws IOException {
        List<KnownHostEntry> out = new ArrayList<>();
        if (!Files.exists(knownHosts)) return out;
        for (String line : Files.readAllLines(knownHosts, StandardCharsets.UTF_8)) {
            List<KnownHostEntry> one = new OpenSSHKnownHosts(new StringReader(line + "\n")).entries();
            out.add(one.isEmpty() ? new Skipped(line) : one.get(0));
        }
        return out;
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

    /** A line sshj keeps no entry for (a comment or a blank line): it applies to no host. */
    private record Skipped(String line) implements KnownHostEntry {
        @Override public KeyType getType() { return KeyType.UNKNOWN; }
        @Override public String getFingerprint() { return ""; }
        @Override public boolean appliesTo(String hostname) { return false; }
        @Override public boolean appliesTo(KeyType type, String hostname) { return false; }
        @Override public boolean verify(PublicKey key) { return false; }
        @Override public String getLine() { return line; }
    }
}
