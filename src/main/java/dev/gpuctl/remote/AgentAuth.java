package dev.gpuctl.remote;

import com.hierynomus.sshj.key.KeyAlgorithm;
import java.util.List;
import net.schmizz.sshj.common.Buffer;
import net.schmizz.sshj.common.KeyType;
import net.schmizz.sshj.common.Message;
import net.schmizz.sshj.common.SSHPacket;
import net.schmizz.sshj.transport.TransportException;
import net.schmizz.sshj.userauth.UserAuthException;
import net.schmizz.sshj.userauth.method.AbstractAuthMethod;

/**
 * Public key authentication (RFC 4252 §7) with a key an ssh-agent holds, as sshj's AuthPublickey does it with a key
 * file: first ask whether the server would take the key, then send the request signed by the agent. An RSA key is
 * signed with the rsa-sha2 algorithm sshj negotiated (server-sig-algs), as OpenSSH 8.8+ refuses ssh-rsa (SHA-1).
 */
final class AgentAuth extends AbstractAuthMethod {
    private final SshAgent.Key key;
    private String algorithm;

    AgentAuth(SshAgent.Key key) {
        super("publickey");
        this.key = key;
    }

    private String algorithm() throws UserAuthException {
        if (algorithm != null) return algorithm;
        if (!key.type().equals(KeyType.RSA.toString())) return algorithm = key.type();
        try {
            List<KeyAlgorithm> offered = params.getTransport().getClientKeyAlgorithms(KeyType.RSA);
            algorithm = offered.isEmpty() ? key.type() : offered.get(0).getKeyAlgorithm();
        } catch (TransportException e) {
            throw new UserAuthException("no signature algorithm for " + key.describe(), e);
        }
        return algorithm;
    }

    private SSHPacket buildReq(boolean signed) throws UserAuthException {
        return super.buildReq().putBoolean(signed).putString(algorithm()).putString(key.blob());
    }

    @Override
    protected SSHPacket buildReq() throws UserAuthException {
        return buildReq(false);
    }

    @Override
    public void handle(Message cmd, SSHPacket buf) throws UserAuthException, TransportException {
        if (cmd != Message.USERAUTH_60) {
            super.handle(cmd, buf);
            return;
        }
        // SSH_MSG_USERAUTH_PK_OK: the server takes this key; sign session id + request (RFC 4252 §7)
        SSHPacket req = buildReq(true);
        byte[] data = new Buffer.PlainBuffer().putString(params.getTransport().getSessionID()).putBuffer(req)
            .getCompactData();
        byte[] signature = key.sign(data, algorithm());
        if (signature == null) throw new UserAuthException("the ssh-agent refused to sign with its " + key.describe());
        params.getTransport().write(req.putString(signature));
    }

    @Override
    public String toString() { return "agent " + key.describe(); }
}
