package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import net.schmizz.sshj.common.Factory;
import org.junit.jupiter.api.Test;

/** The ciphers gpuctl offers: OpenSSH's defaults in its order, then AES-CBC; none of sshj's legacy ones tried. */
class ModernCiphersTest {
    @Test void openSshsDefaultCiphersInItsOrderThenCbc() {
        assertEquals(List.of("chacha20-poly1305@openssh.com", "aes128-ctr", "aes192-ctr", "aes256-ctr", "aes128-gcm@openssh.com",
                "aes256-gcm@openssh.com", "aes128-cbc", "aes192-cbc", "aes256-cbc"),
            new SshConnect.ModernCiphers().getCipherFactories().stream().map(Factory.Named::getName).toList(),
            "all of them are in Java 17 (with BouncyCastle for chacha20-poly1305)");
        assertEquals(SshConnect.ModernCiphers.class, SshRemote.config().getClass());
    }
}
