package dev.gpuctl.remote;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * A host could not be reached or talked to. The message is for a person: it names the host and says what
 * to do next. {@link #kind()} lets callers decide (e.g. preflight reports every unreachable host).
 */
public final class RemoteException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public enum Kind {
        UNREACHABLE, HOST_KEY_UNKNOWN, HOST_KEY_CHANGED, AUTH_FAILED, SUDO_NEEDS_PASSWORD, TIMEOUT,
        CONNECTION_LOST, IO,
        /** gpuctl was asked to stop (SIGINT) before this command started. */
        INTERRUPTED
    }

    private final Kind kind;
    private final String host;

    public RemoteException(Kind kind, String host, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.host = host;
    }

    public RemoteException(Kind kind, String host, String message) {
        this(kind, host, message, null);
    }

    public Kind kind() { return kind; }

    private String partialStdout = "";

    /** What a command that timed out, or whose connection was lost, had printed on stdout until then (else empty). */
    public String partialStdout() { return partialStdout; }

    /** This exception, carrying what the command had printed on stdout before it timed out. */
    public RemoteException withPartialStdout(byte[] stdout) {
        this.partialStdout = StreamPump.text(stdout);
        return this;
    }

    /** The node name. */
    public String host() { return host; }

    // ---- the messages, one per situation (pure: unit tests call them) ----

    static RemoteException unreachable(String host, String address, int port, String reason, Throwable cause) {
        return new RemoteException(Kind.UNREACHABLE, host, host + ": cannot connect to " + Fingerprints.hostPort(address, port)
            + ": " + reason + ". Check that the host is up, that sshd listens on port " + port
            + " and that nothing blocks it from here.", cause);
    }

    /** The handshake outlived the connect timeout: the host accepted TCP but sent no SSH banner, or stalled after it. */
    static RemoteException handshakeTimeout(String host, String address, int port, Duration timeout, boolean bannerSeen,
                                            Throwable cause) {
        String what = bannerSeen ? "SSH handshake did not finish within " + human(timeout)
            : "no SSH banner within " + human(timeout);
        return new RemoteException(Kind.UNREACHABLE, host, host + ": " + what + " from " + Fingerprints.hostPort(address, port)
            + (bannerSeen ? "" : " (it accepted the connection but never spoke SSH)") + ". Check that sshd, not something else,"
            + " listens on port " + port + " and is not overloaded; a slow host may be given longer with ssh.connectTimeout in"
            + " the inventory or --connect-timeout.", cause);
    }

    static RemoteException hostKeyUnknown(String host, String address, int port, String keyType, String fingerprint,
                                          Path knownHosts) {
        return new RemoteException(Kind.HOST_KEY_UNKNOWN, host, host + ": the host key of "
            + Fingerprints.hostPort(address, port) + " is not known: " + keyType + " key " + fingerprint
            + ". Verify it (on the host: ssh-keygen -lf /etc/ssh/ssh_host_" + keyType.toLowerCase(Locale.ROOT)
            + "_key.pub), then re-run with --accept-new-host-keys or add it to " + knownHosts
            + " (or pin it with hostKey: \"" + fingerprint + "\" in the node's ssh: block).");
    }

    static RemoteException hostKeyChanged(String host, String address, int port, String keyType, String known,
                                          String knownWhere, String offered, Path knownHosts) {
        return new RemoteException(Kind.HOST_KEY_CHANGED, host, host + ": HOST KEY CHANGED for "
            + Fingerprints.hostPort(address, port) + ": " + knownWhere + " has " + known + ", the host offers "
            + keyType + " key " + offered + ". Refusing to connect: someone may be intercepting the connection."
            + " If the host was reinstalled, remove the old key with ssh-keygen -R '"
            + Fingerprints.knownHostsName(address, port) + "' -f " + knownHosts + " and verify the new one.");
    }

    static RemoteException pinnedKeyMismatch(String host, String address, int port, String keyType, String pinned,
                                             String offered) {
        return new RemoteException(Kind.HOST_KEY_CHANGED, host, host + ": HOST KEY CHANGED for "
            + Fingerprints.hostPort(address, port) + ": the inventory pins hostKey " + pinned + ", the host offers "
            + keyType + " key " + offered + ". Refusing to connect: someone may be intercepting the connection."
            + " If the host was reinstalled, verify the new key and update hostKey for " + host + " in the inventory.");
    }

    static RemoteException authFailed(String host, String user, Path identityFile, String reason, Throwable cause) {
        return new RemoteException(Kind.AUTH_FAILED, host, host + ": user " + user + " was not let in with the key "
            + identityFile + " (" + reason + "). Add its public key to ~" + user + "/.ssh/authorized_keys on the host,"
            + " or set ssh.user / ssh.identityFile in the inventory.", cause);
    }

    static RemoteException authFailedWithAll(String host, String user, List<String> tried, String reason, Throwable cause) {
        return new RemoteException(Kind.AUTH_FAILED, host, host + ": user " + user + " was not let in with "
            + (tried.size() == 1 ? "the key " + tried.get(0) : "any of the keys " + String.join(", ", tried)) + " ("
            + reason + "). Add one's public key to ~" + user + "/.ssh/authorized_keys on the host, or set ssh.user /"
            + " ssh.identityFile in the inventory.", cause);
    }

    static RemoteException noKey(String host, String agentState, String sshDir) {
        String dir = sshDir.isEmpty() ? "~/.ssh" : sshDir;
        return new RemoteException(Kind.AUTH_FAILED, host, host + ": no key to log in with: the inventory sets no"
            + " ssh.identityFile, ~/.ssh/config gives no IdentityFile for it, " + agentState + ", and there is no "
            + dir + "/id_ed25519, id_ecdsa or id_rsa. Set ssh.identityFile in the inventory, or start ssh-agent and"
            + " ssh-add your key.");
    }

    static RemoteException keyUnusable(String host, Path identityFile, String reason, Throwable cause) {
        return new RemoteException(Kind.AUTH_FAILED, host, host + ": cannot use the identity file " + identityFile
            + ": " + reason, cause);
    }

    static RemoteException sudoNeedsPassword(String host, String user, String sudoSaid) {
        String said = sudoSaid == null || sudoSaid.isBlank() ? "" : " (sudo said: " + oneLine(sudoSaid) + ")";
        return new RemoteException(Kind.SUDO_NEEDS_PASSWORD, host, host + ": user " + user
            + " needs a password for sudo" + said + "; allow NOPASSWD for " + user + " (e.g. '" + user
            + " ALL=(ALL) NOPASSWD: ALL' in /etc/sudoers.d/gpuctl) or use root.");
    }

    public static RemoteException timeout(String host, String command, Duration timeout) {
        return new RemoteException(Kind.TIMEOUT, host, host + ": command did not finish within "
            + human(timeout) + ": " + shown(command) + ". It was stopped; check the host and re-run.");
    }

    static RemoteException connectionLost(String host, String command, Throwable cause) {
        return new RemoteException(Kind.CONNECTION_LOST, host, host + ": connection lost while running "
            + shown(command) + " (" + reason(cause) + "). The command may or may not have finished:"
            + " check the host and re-run.", cause);
    }

    static RemoteException io(String host, String what, String reason, Throwable cause) {
        return new RemoteException(Kind.IO, host, host + ": " + what + ": " + reason, cause);
    }

    /** A command as it appears in messages: its first line, at most 200 characters, in backquotes. */
    public static String shown(String command) {
        String s = command.strip();
        int nl = s.indexOf('\n');
        boolean cut = nl >= 0;
        if (cut) s = s.substring(0, nl);
        if (s.length() > 200) {
            s = s.substring(0, 197);
            cut = true;
        }
        return "`" + s + (cut ? " ...`" : "`");
    }

    static String human(Duration d) {
        long ms = d.toMillis();
        if (ms % 1000 != 0) return ms + "ms";
        long s = ms / 1000;
        if (s < 120 || s % 60 != 0) return s + "s";
        return s / 60 + "m";
    }

    static String reason(Throwable t) {
        if (t == null) return "unknown reason";
        Throwable c = t;
        while (c.getCause() != null && (c.getMessage() == null || c.getMessage().isBlank())) c = c.getCause();
        String m = c.getMessage();
        return m == null || m.isBlank() ? c.getClass().getSimpleName() : oneLine(m);
    }

    static String oneLine(String s) {
        String t = s.strip().replaceAll("\\s*\n\\s*", " / ");
        return t.length() > 300 ? t.substring(0, 297) + "..." : t;
    }
}
