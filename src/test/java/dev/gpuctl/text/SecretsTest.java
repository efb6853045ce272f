package dev.gpuctl.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** What {@link Secrets#redact} hides, and what it leaves for a person to read. */
class SecretsTest {
    static final String KEY_B64 = "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB";

    @Test void aKubeconfigKeepsItsCertificateAndLosesItsKey() {
        String kubeconfig = """
            users:
            - name: kubernetes-admin
              user:
                client-certificate-data: Q0VSVElGSUNBVEU=
                client-key-data: %s
            """.formatted(KEY_B64);
        String r = Secrets.redact(kubeconfig);
        assertFalse(r.contains(KEY_B64), r);
        assertTrue(r.contains("client-key-data: <redacted>"), r);
        assertTrue(r.contains("client-certificate-data: Q0VSVElGSUNBVEU="), "a certificate is public: " + r);
        String json = "{\"users\":[{\"user\":{\"client-certificate-data\":\"Q0VS\",\"client-key-data\":\"" + KEY_B64 + "\"}}]}";
        assertEquals("{\"users\":[{\"user\":{\"client-certificate-data\":\"Q0VS\",\"client-key-data\":\"<redacted>\"}}]}", Secrets.redact(json));
    }

    @Test void privateKeyBlocksAndCertificateKeysAreHidden() {
        String pem = "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\nxyz\n-----END EC PRIVATE KEY-----\n";
        assertEquals("-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n-----BEGIN EC PRIVATE KEY-----\n<redacted>\n-----END EC PRIVATE KEY-----\n",
            Secrets.redact(pem));
        String hex = "a".repeat(64);
        assertEquals("kubeadm join 10.0.0.1:6443 --control-plane --certificate-key <redacted>",
            Secrets.redact("kubeadm join 10.0.0.1:6443 --control-plane --certificate-key " + hex));
        assertEquals("certificateKey: \"<redacted>\"", Secrets.redact("certificateKey: \"" + hex + "\""));
    }

    @Test void registryCredentialsInDaemonJsonAndItsDiffAreHidden() {
        String daemon = """
            {
              "auths": {
                "registry.example:5000": { "auth": "dXNlcjpodW50ZXIy", "identitytoken": "eyJhbGciOi" }
              },
              "registry-mirrors": ["https://mirror.example"],
              "default-runtime": "nvidia"
            }
            """;
        String r = Secrets.redact(daemon);
        assertFalse(r.contains("dXNlcjpodW50ZXIy") || r.contains("eyJhbGciOi"), r);
        assertTrue(r.contains("\"auth\": \"<redacted>\"") && r.contains("\"identitytoken\": \"<redacted>\""), r);
        assertTrue(r.contains("\"registry.example:5000\"") && r.contains("https://mirror.example"), "the rest stays: " + r);
        String diff = "-    \"auth\":\"dXNlcjpodW50ZXIy\",\n+    \"auth\":\"bmV3OnNlY3JldA==\",";
        assertEquals("-    \"auth\":\"<redacted>\",\n+    \"auth\":\"<redacted>\",", Secrets.redact(diff));
        assertEquals("password: <redacted>\nPassword=<redacted>", Secrets.redact("password: hunter2\nPassword=hunter2"));
    }

    @Test void maskUrlKeepsTheUserAndHostAndHidesThePassword() {
        assertEquals("https://ci:***@mirror.lab/flannel.yml", Secrets.maskUrl("https://ci:s3cret@mirror.lab/flannel.yml"));
        assertEquals("https://***@mirror.lab/x", Secrets.maskUrl("https://t0ken@mirror.lab/x"));
        // not a valid URL: a space, a quote or an '@' in the password is hidden all the same
        assertEquals("https://ci:***@mirror.lab/a b", Secrets.maskUrl("https://ci:p@ss w\"rd@mirror.lab/a b"));
        assertEquals("https://mirror.lab/p@v1", Secrets.maskUrl("https://mirror.lab/p@v1"));
        assertEquals("./kube-flannel.yml", Secrets.maskUrl("./kube-flannel.yml"));
    }

    @Test void aUrlKeepsItsHostAndLosesItsUserAndPassword() {
        assertEquals("curl -fsSL -o \"$d/x\" https://ci:***@mirror.lab/flannel.yml",
            Secrets.redact("curl -fsSL -o \"$d/x\" https://ci:s3cret@mirror.lab/flannel.yml"));
        assertEquals("\"url\" : \"http://***@10.0.0.5:8080/p.yml\"", Secrets.redact("\"url\" : \"http://tok@10.0.0.5:8080/p.yml\""));
        String plain = "https://github.com/NVIDIA/k8s-device-plugin/raw/v0.17.0/x.yml and mailto me@lab, https://a.lab/p@v1";
        assertEquals(plain, Secrets.redact(plain));
    }

    @Test void whatIsNoSecretStaysByteForByte() {
        String[] plain = {
            "--authorization-mode=Node,RBAC --enable-bootstrap-token-auth=true",
            "token: {{join.token}}", "bootstrapToken: abc", "tokens:\n  - x", "\"auths\": {", "auth: null",
            "kubeadm token create --ttl 3600s --description 'gpuctl bootstrap' --print-join-command",
            "client-certificate-data: Q0VS", "$ apt-get install -y chrony",
        };
        for (String s : plain) assertEquals(s, Secrets.redact(s));
        String none = "a line that names no secret at all";
        assertSame(none, Secrets.redact(none), "a line with no hint is not even scanned");
        assertEquals(null, Secrets.redact(null));
    }
}
