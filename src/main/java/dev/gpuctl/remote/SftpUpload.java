package dev.gpuctl.remote;

import dev.gpuctl.text.ShellWords;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HexFormat;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.sftp.FileAttributes;
import net.schmizz.sshj.sftp.OpenMode;
import net.schmizz.sshj.sftp.RemoteFile;
import net.schmizz.sshj.sftp.SFTPClient;

/**
 * A file put on a host over an {@link SshRemote}'s connection: SFTP to a private temp file, then {@code install} into
 * place with its mode and owner (atomic for whoever reads the target), the temp file removed when the transfer fails.
 */
final class SftpUpload {
    private static final SecureRandom RANDOM = new SecureRandom();

    private SftpUpload() {}

    /** SFTP to a 0600 temp file in /tmp, streamed in 32 KiB writes with 16 requests in flight; then install into place. */
    static void upload(SshRemote remote, SSHClient client, InputStream content, String path, String mode, String owner) {
        upload(remote, client, content, path, mode, owner, null);
    }

    /** The line the install command prints once {@code before} passed (its own output goes to stderr). */
    static final String BEFORE_PASSED = "gpuctl: before the write: done";

    /**
     * Like {@link #upload(SshRemote, SSHClient, InputStream, String, String, String)}, with {@code before} (null: none)
     * run first in the install's command: when it fails, the temp file is removed, nothing is installed, and its result
     * comes back; otherwise the result is exit 0 with before's stderr.
     */
    static ExecResult upload(SshRemote remote, SSHClient client, InputStream content, String path, String mode, String owner,
                             String before) {
        String tmp = "/tmp/.gpuctl-" + HexFormat.of().formatHex(randomBytes());
        String install = before == null ? Shell.installCommand(tmp, path, mode, owner) : beforeThenInstall(before, tmp, path, mode, owner);
        long sent = 0;
        try (SFTPClient sftp = client.newSFTPClient()) {
            FileAttributes attrs = new FileAttributes.Builder().withPermissions(0600).build();
            try (RemoteFile f = sftp.open(tmp, EnumSet.of(OpenMode.WRITE, OpenMode.CREAT, OpenMode.EXCL), attrs);
                 OutputStream os = f.new RemoteFileOutputStream(0, 16)) {
                byte[] chunk = new byte[32 * 1024];
                int n;
                while ((n = content.read(chunk)) >= 0) {
                    os.write(chunk, 0, n);
                    sent += n;
                }
            }
        } catch (IOException e) {
            remote.exec("rm -f -- " + ShellWords.quote(tmp), Duration.ofSeconds(30));
            if (!client.isConnected()) throw RemoteException.connectionLost(remote.name(), "(upload of " + path + ")", e);
            throw RemoteException.io(remote.name(), "cannot upload " + path + " (SFTP to " + tmp + ")", RemoteException.reason(e), e);
        }
        ExecResult r = remote.exec(install, installTimeout(sent));
        boolean beforePassed = before == null || r.stdout().lines().anyMatch(BEFORE_PASSED::equals);
        if (!beforePassed) return new ExecResult(r.exit() == 0 ? 1 : r.exit(), "", r.stderr());
        if (!r.ok()) {
            throw RemoteException.io(remote.name(), "cannot install " + path + " (mode " + mode + ", owner " + owner + ")",
                "exit " + r.exit() + ": " + r.tail(5), null);
        }
        return new ExecResult(0, "", r.stderr());
    }

    /**
     * {@code before} in a subshell (its own {@code exit} ends only it; its output to stderr), and only when it exits 0 the
     * line {@link #BEFORE_PASSED} and the install; a failing {@code before} removes the temp file and exits with its status.
     */
    static String beforeThenInstall(String before, String tmp, String path, String mode, String owner) {
        return "(\n" + before + "\n) >&2 || { e=$?; rm -f -- " + ShellWords.quote(tmp) + "; exit $e; }\necho '" + BEFORE_PASSED + "'\n"
            + Shell.installCommand(tmp, path, mode, owner);
    }

    /**
     * How long installing an uploaded file into place may take: install copies it (/tmp and the target are often two
     * file systems), so a minute for the command and a second per 16 MiB copied (a 3 GiB archive: 4 min 12 s), slow
     * disks and a loaded host included.
     */
    static Duration installTimeout(long bytes) {
        return Duration.ofSeconds(60 + Math.max(0, bytes) / (16L << 20));
    }

    private static byte[] randomBytes() {
        byte[] b = new byte[12];
        RANDOM.nextBytes(b);
        return b;
    }
}
