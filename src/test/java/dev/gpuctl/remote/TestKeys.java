package dev.gpuctl.remote;

import java.security.PublicKey;
import java.util.Base64;
import net.schmizz.sshj.common.Buffer;

/** Key material made once with ssh-keygen; the fingerprints are what ssh-keygen -l printed for them. */
final class TestKeys {
    private TestKeys() {}

    static final String ED25519_PUB =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOrutAOSOWCitio794dlqJ7Ge3MFtGOcIUbszgIrZXj4 a";
    static final String ED25519_FP = "SHA256:jMhzwKNA/DQGgjHxuPy9CSQdyn45dCSv2+zk8dWpWtM";
    static final String ECDSA_PUB = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBMzLo1qKj6P"
        + "FY2XVRNgX1Jt9DHuMVp9SokPRhd7XIDUUyntZmapv+RWx9q2w7XGl+/k2s8x+lcibe7Vqj/LeeiM= e";
    static final String ECDSA_FP = "SHA256:84MymkfOtz27RnuwScjARMZU9fWRPG3OSiFnW807cWg";
    /** ED25519_PUB for [127.0.0.1]:2222, hashed by ssh-keygen -H. */
    static final String HASHED_2222 = "|1|0HLsLiVOu2EnoEtaYj+pdHTZpZw=|UhO2CfyupHPSgKK2FGVnq1EsIVw= ssh-ed25519"
        + " AAAAC3NzaC1lZDI1NTE5AAAAIOrutAOSOWCitio794dlqJ7Ge3MFtGOcIUbszgIrZXj4";

    /** The private half of ED25519_PUB, no passphrase. */
    static final String ED25519_PRIVATE = """
        -----BEGIN OPENSSH PRIVATE KEY-----
        b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
        QyNTUxOQAAACDq7rQDkjlgorYqO/eHZaiexntzBbRjnCFG7M4CK2V4+AAAAIisGqWYrBql
        mAAAAAtzc2gtZWQyNTUxOQAAACDq7rQDkjlgorYqO/eHZaiexntzBbRjnCFG7M4CK2V4+A
        AAAECnQtSuX6FGElmJ1gPtvMdvdyWOjV5Ub3cvfmD7bK8ICOrutAOSOWCitio794dlqJ7G
        e3MFtGOcIUbszgIrZXj4AAAAAWEBAgME
        -----END OPENSSH PRIVATE KEY-----
        """;
    /** An ed25519 key encrypted with the passphrase "secret". */
    static final String ENCRYPTED_PRIVATE = """
        -----BEGIN OPENSSH PRIVATE KEY-----
        b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABDerB2mEt
        8Mg+jzmOtfkMy8AAAAEAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIFLXK46biy4MEbwM
        qmltug26iPCHoLYOVQFY88B4eSi5AAAAkMDSaICqFpW35EoXP+Fu9pSlCS6McqQJucQ+sd
        XraGPY5KXFxtp4B2lb1WgEEIxs/4kVLw6Zm5KNgFrlRx/0kfDHNHUhut2EA1aICgMfLGlw
        E85pZ4QWhiSXHpwbN5ZmGLISglL20nXzV+utA9FvjS32/lq3q8j+LW3dxTtysADdFNPXvv
        Hz8gJjxesdhsH/Mg==
        -----END OPENSSH PRIVATE KEY-----
        """;

    static PublicKey publicKey(String line) {
        try {
            return new Buffer.PlainBuffer(Base64.getDecoder().decode(line.split(" ")[1])).readPublicKey();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
