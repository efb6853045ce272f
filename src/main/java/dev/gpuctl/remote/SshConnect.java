package dev.gpuctl.remote;

import com.hierynomus.sshj.transport.cipher.BlockCiphers;
import com.hierynomus.sshj.transport.cipher.ChachaPolyCiphers;
import com.hierynomus.sshj.transport.cipher.GcmCiphers;
import dev.gpuctl.inventory.Bastion;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.SshSettings;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import net.schmizz.keepalive.KeepAliveProvider;
import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.common.Factory;
import net.schmizz.sshj.transport.TransportException;
import net.schmizz.sshj.transport.cipher.Cipher;
import net.schmizz.sshj.userauth.UserAuthException;

/**
 * The connect half of {@link SshRemote}: sshj's configuration, the TCP connect (or a bastion's channel) and key
 * exchange within the connect timeout, the host-key check ({@link HostKeyCheck}), the login with each key in turn.
 */
final class SshConnect {
    private SshConnect() {}

    /**
     * One sshj configuration for every connection: building one tries every cipher it lists, and its factories make
     * fresh objects per connection (its random source is synchronised). Made once, never changed after: on first use,
     * or ahead of it by {@link #prepareInBackground} (the command's first key read or connection then finds it made).
     */
    private static final Ahead<DefaultConfig> CONFIG = new Ahead<>("ssh-config", () -> {
        DefaultConfig c = new ModernCiphers();
        c.setKeepAliveProvider(KeepAliveProvider.KEEP_ALIVE);
        return c;
    });

    /**
     * Builds sshj's configuration on a daemon thread now: it registers BouncyCastle (its signed jar verified, some 500
     * classes loaded) and tries each cipher, 1-2 s of one core before the first key can be read and the first host
     * connected to. Started once the arguments are parsed, it is made while the command reads its inventory.
     */
    static void prepareInBackground() { CONFIG.startInBackground(); }

    /**
     * sshj's configuration offering the ciphers in OpenSSH's default order (chacha20-poly1305, AES-CTR, AES-GCM),
     * then AES-CBC for an old server. sshj's own list also has Blowfish, Twofish, Serpent, CAST, 3DES and RC4, and it tries every
     * one of them to drop those the JVM lacks: 0.4 s of CPU before the first connection, a third of gpuctl's CPU in a
     * verify of three hosts (a JFR profile). The ones kept are tried the same way.
     */
    static final class ModernCiphers extends DefaultConfig {
        static final List<Factory.Named<Cipher>> OFFERED = List.of(ChachaPolyCiphers.CHACHA_POLY_OPENSSH(),
            BlockCiphers.AES128CTR(), BlockCiphers.AES192CTR(), BlockCiphers.AES256CTR(), GcmCiphers.AES128GCM(),
            GcmCiphers.AES256GCM(), BlockCiphers.AES128CBC(), BlockCiphers.AES192CBC(), BlockCiphers.AES256CBC());

        @Override protected void initCipherFactories() {
            List<Factory.Named<Cipher>> available = new ArrayList<>();
            for (Factory.Named<Cipher> f : OFFERED) {
                try {
                    Cipher c = f.create();
                    c.init(Cipher.Mode.Encrypt, new byte[c.getBlockSize()], new byte[c.getIVSize()]);
                    available.add(f);
                } catch (RuntimeException e) {
                    // not in this JVM: not offered
                }
            }
            setCipherFactories(available);
        }
    }

    static DefaultConfig config() { return CONFIG.get(); }

    /**
     * Connects and logs in; for a non-root user also checks that {@code sudo -n} works.
     *
     * @throws RemoteException UNREACHABLE, HOST_KEY_UNKNOWN, HOST_KEY_CHANGED, AUTH_FAILED, SUDO_NEEDS_PASSWORD, IO
     */
    static SshRemote connect(Node node, SshOptions opts) {
        SshSettings ssh = node.ssh();
        Duration timeout = opts.connectTimeoutFor(ssh);
        List<SshKeys.Login> keys = opts.keys().logins(node.name(), ssh, opts.passphrase(), opts.agentSocket());
        SSHClient bastion = null;
        SSHClient client = null;
        try {
            if (ssh.bastion().isPresent()) {
                Bastion b = ssh.bastion().get();
                bastion = newClient(opts, timeout);
                HostKeyCheck check = new HostKeyCheck(node.name() + " (bastion " + b.address() + ")", b.address(),
                    b.port(), ssh.knownHosts(), Optional.empty(), opts.acceptNewHostKeys());
                bastion.addHostKeyVerifier(check);
                String label = node.name() + " (bastion " + b.address() + ")";
                handshake(label, b.address(), b.port(), check, bastion, null, timeout);
                login(label, b.user(), bastion, keys);
            }
            client = newClient(opts, timeout);
            HostKeyCheck check = new HostKeyCheck(node.name(), node.address(), ssh.port(), ssh.knownHosts(),
                ssh.hostKey(), opts.acceptNewHostKeys());
            client.addHostKeyVerifier(check);
            handshake(node.name(), node.address(), ssh.port(), check, client, bastion, timeout);
            login(node.name(), ssh.user(), client, keys);
            SshRemote remote = new SshRemote(node, client, bastion);
            if (!ssh.isRoot()) remote.checkSudo(timeout.plusSeconds(20));
            return remote;
        } catch (RuntimeException e) {
            SshRemote.closeQuietly(client);
            SshRemote.closeQuietly(bastion);
            throw e;
        }
    }

    private static SSHClient newClient(SshOptions opts, Duration timeout) {
        SSHClient c = new SSHClient(config());
        int connectMs = (int) timeout.toMillis();
        c.setConnectTimeout(connectMs);
        // The socket read timeout must outlast the keepalive interval, or an idle connection would die.
        c.setTimeout((int) Math.max(connectMs, opts.keepAlive().toMillis() * 4));
        c.getTransport().setTimeoutMs(Math.max(connectMs, 30_000));
        c.getConnection().getKeepAlive().setKeepAliveInterval((int) opts.keepAlive().toSeconds());
        return c;
    }

    /** Ends handshakes that outlive their connect timeout (a host that accepts TCP and never speaks SSH). */
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "ssh-connect-timeout");
        t.setDaemon(true);
        return t;
    });

    /**
     * TCP connect (or the bastion's direct-tcpip channel), the server's banner and the key exchange, all within
     * {@code timeout}: when it passes first, the socket (or channel) is closed under the handshake, and the failure says
     * whether the host ever sent its SSH banner.
     */
    private static void handshake(String label, String address, int port, HostKeyCheck check, SSHClient c,
                                  SSHClient via, Duration timeout) {
        AtomicBoolean done = new AtomicBoolean();
        AtomicBoolean expired = new AtomicBoolean();
        AtomicReference<AutoCloseable> channel = new AtomicReference<>();
        ScheduledFuture<?> dog = WATCHDOG.schedule(() -> {
            if (!done.compareAndSet(false, true)) return;
            expired.set(true);
            // the handshake's reads fail at once; closing a channel may wait for the bastion, so not on this thread
            Thread closer = new Thread(() -> {
                SshRemote.closeQuietly(c.getSocket());
                SshRemote.closeQuietly(channel.get());
            }, "ssh-" + label + "-connect-timeout");
            closer.setDaemon(true);
            closer.start();
        }, timeout.toMillis(), TimeUnit.MILLISECONDS);
        try {
            if (via == null) {
                c.connect(address, port);
            } else {
                var direct = via.newDirectConnection(address, port);
                channel.set(direct);
                if (expired.get()) SshRemote.closeQuietly(direct);
                c.connectVia(direct);
            }
            if (!done.compareAndSet(false, true)) throw new IOException("closed: the connect timeout passed");
        } catch (IOException e) {
            done.set(true);
            if (check.problem() != null) throw check.problem();
            if (expired.get()) {
                throw RemoteException.handshakeTimeout(label, address, port, timeout, bannerSeen(c), e);
            }
            if (e instanceof TransportException) {
                throw RemoteException.unreachable(label, address, port, "SSH handshake failed: " + RemoteException.reason(e), e);
            }
            throw RemoteException.unreachable(label, address, port, connectReason(e, via != null), e);
        } catch (RuntimeException e) {
            done.set(true);
            if (expired.get() && !(e instanceof RemoteException)) {
                throw RemoteException.handshakeTimeout(label, address, port, timeout, bannerSeen(c), e);
            }
            throw e;
        } finally {
            dog.cancel(false);
        }
    }

    /** Whether the server sent its SSH identification line (sshj throws instead of answering when it sent none). */
    private static boolean bannerSeen(SSHClient c) {
        try {
            String v = c.getTransport().getServerVersion();
            return v != null && !v.isEmpty();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static String connectReason(IOException e, boolean viaBastion) {
        String hop = viaBastion ? " (from the bastion)" : "";
        if (e instanceof ConnectException) return "connection refused" + hop;
        if (e instanceof NoRouteToHostException) return "no route to host" + hop;
        if (e instanceof SocketTimeoutException) return "timed out" + hop;
        if (e instanceof UnknownHostException) return "unknown host name";
        return RemoteException.reason(e) + hop;
    }

    /**
     * Offers the keys in order until one is let in. A default key file that cannot be read (say, encrypted with no
     * terminal) is passed over when another key was offered before it; the failure names every key offered.
     */
    private static void login(String label, String user, SSHClient c, List<SshKeys.Login> keys) {
        List<String> tried = new ArrayList<>();
        UserAuthException last = null;
        for (SshKeys.Login key : keys) {
            net.schmizz.sshj.userauth.method.AuthMethod method;
            try {
                method = key.method(c);
            } catch (RemoteException e) {
                if (tried.isEmpty()) throw e;
                continue;
            }
            tried.add(key.source());
            try {
                c.auth(user, method);
                return;
            } catch (UserAuthException e) {
                last = e;
            } catch (TransportException e) {
                throw RemoteException.connectionLost(label, "(login as " + user + ")", e);
            }
            if (!c.isConnected()) break;
        }
        if (tried.size() == 1 && keys.get(0).file().isPresent()) {
            throw RemoteException.authFailed(label, user, Path.of(tried.get(0)), RemoteException.reason(last), last);
        }
        throw RemoteException.authFailedWithAll(label, user, tried, last == null ? "no key could be offered"
            : RemoteException.reason(last), last);
    }
}
