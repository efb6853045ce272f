package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.Kubeadm;
import dev.gpuctl.kube.Kubeconfig;
import dev.gpuctl.inventory.Inventory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code gpuctl kubeconfig [--merge]}, bootstrap, {@code certs renew} and {@code upgrade} put on this machine: a
 * hostile admin.conf leaves every file as it was, byte for byte; the copy is rebuilt with the CA recorded; another
 * cluster's CA is refused, or at a new bootstrap archives the old copy; a merged kubeconfig is refreshed.
 */
class LaptopKubeconfigsTest {
    static final String USERS = "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster: {server: 'https://prod.example:6443'}\n"
        + "users:\n- name: me\n  user: {token: abc}\ncontexts:\n- name: prod\n  context: {cluster: prod, user: me}\ncurrent-context: prod\n";

    static String res(String name) {
        try (InputStream in = LaptopKubeconfigsTest.class.getResourceAsStream("/kubeconfig/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static String b64(String s) { return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.US_ASCII)); }

    /** kubeadm's admin.conf for master m (10.0.0.1) signed by {@code ca} ("ca" or "other-ca"), with extra user fields. */
    static String admin(String ca, String userExtra) {
        return "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority-data: " + b64(res(ca + ".crt"))
            + "\n    server: https://10.0.0.1:6443\n  name: kubernetes\ncontexts:\n- context: {cluster: kubernetes, user: kubernetes-admin}\n"
            + "  name: kubernetes-admin@kubernetes\ncurrent-context: kubernetes-admin@kubernetes\nusers:\n- name: kubernetes-admin\n  user:\n"
            + "    client-certificate-data: " + b64(res("admin-" + ca + ".crt")) + "\n    client-key-data: " + b64(res("admin-" + ca + ".key"))
            + "\n" + userExtra;
    }

    static final String EXEC = "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [-c, 'touch /tmp/pwned']\n";

    record Files3(byte[] target, byte[] admin, byte[] record) {}

    static Files3 snapshot(Path target, Path adminFile) throws IOException {
        return new Files3(Files.readAllBytes(target), Files.exists(adminFile) ? Files.readAllBytes(adminFile) : null,
            Files.exists(LaptopKubeconfigs.caRecord(adminFile)) ? Files.readAllBytes(LaptopKubeconfigs.caRecord(adminFile)) : null);
    }

    @Test void aHostileAdminConfLeavesTheMergeTargetAndTheCopyByteForByte(@TempDir Path dir) throws Exception {
        Inventory inv = ShHosts.inventory(dir);
        Path target = dir.resolve("home/.kube/config");
        Files.createDirectories(target.getParent());
        Files.writeString(target, USERS);
        LaptopKubeconfigs.forUser(inv.localKubeconfig(), inv.master(), "t", admin("ca", ""), Optional.of(target), "t");
        Files3 before = snapshot(target, inv.localKubeconfig());
        Map<String, String> hostile = Map.of(
            "users[0].user.exec", admin("ca", EXEC),
            "users[0].user.auth-provider", admin("ca", "    auth-provider: {name: gcp, config: {cmd-path: /bin/sh}}\n"),
            "users[0].user.tokenFile", admin("ca", "    tokenFile: /etc/shadow\n"),
            "users[0].user.client-key", admin("ca", "    client-key: /home/me/.ssh/id_ed25519\n"),
            "clusters[0].cluster.insecure-skip-tls-verify", admin("ca", "").replace("    server:", "    insecure-skip-tls-verify: true\n    server:"),
            "clusters[0].cluster.certificate-authority", admin("ca", "").replace("    server:", "    certificate-authority: /tmp/ca\n    server:"),
            "clusters[0].cluster.proxy-url", admin("ca", "").replace("    server:", "    proxy-url: socks5://10.9.9.9:1080\n    server:"),
            "clusters[0].cluster.server", admin("ca", "").replace("https://10.0.0.1:6443", "http://10.0.0.1:6443"),
            "the master's CA is not the one this cluster was bootstrapped with", admin("other-ca", ""));
        for (var e : hostile.entrySet()) {
            Kubeconfig.Refused r = assertThrows(Kubeconfig.Refused.class, () ->
                LaptopKubeconfigs.forUser(inv.localKubeconfig(), inv.master(), "t", e.getValue(), Optional.of(target), "t"), e.getKey());
            assertTrue(r.getMessage().contains(e.getKey()), r.getMessage());
            Files3 after = snapshot(target, inv.localKubeconfig());
            assertArrayEquals(before.target(), after.target(), e.getKey() + ": ~/.kube/config unchanged");
            assertArrayEquals(before.admin(), after.admin(), e.getKey() + ": .gpuctl/t/admin.conf unchanged");
            assertArrayEquals(before.record(), after.record(), e.getKey() + ": the CA record unchanged");
            assertFalse(new String(after.target(), StandardCharsets.UTF_8).contains("/bin/sh"));
        }
    }

    @Test void aHostileAdminConfBeforeAnyMergeWritesNoFile(@TempDir Path dir) throws Exception {
        Inventory inv = ShHosts.inventory(dir);
        Path target = dir.resolve("home/.kube/config");
        assertThrows(Kubeconfig.Refused.class, () ->
            LaptopKubeconfigs.forUser(inv.localKubeconfig(), inv.master(), "t", admin("ca", EXEC), Optional.of(target), "t"));
        assertFalse(Files.exists(target));
        assertFalse(Files.exists(inv.localKubeconfig()));
        assertFalse(Files.exists(LaptopKubeconfigs.caRecord(inv.localKubeconfig())));
    }

    @Test void theCopyIsRebuiltTheCaRecordedAndAMergeRefreshedOnRenewal(@TempDir Path dir) throws Exception {
        Inventory inv = ShHosts.inventory(dir);
        Path adminFile = inv.localKubeconfig();
        LaptopKubeconfigs.Installed first = LaptopKubeconfigs.install(adminFile, "t", admin("ca", ""), Optional.of("https://10.0.0.1:6443"), true);
        assertTrue(first.changed());
        String hash = Kubeadm.caCertHash(res("ca.crt"));
        assertEquals(hash + "\n", Files.readString(LaptopKubeconfigs.caRecord(adminFile)));
        assertEquals(Kubeconfig.render(first.admin(), "t"), Files.readString(adminFile));
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(adminFile)));
        assertFalse(LaptopKubeconfigs.install(adminFile, "t", admin("ca", ""), Optional.of("https://10.0.0.1:6443"), false).changed(),
            "the same admin.conf again changes nothing");

        Path target = dir.resolve("kc");
        Files.writeString(target, USERS);
        LaptopKubeconfigs.forUser(adminFile, inv.master(), "t", admin("ca", ""), Optional.of(target), "lab");
        assertEquals(target.toAbsolutePath() + "\n", Files.readString(LaptopKubeconfigs.mergedRecord(adminFile)));
        String merged = Files.readString(target);
        // kubeadm renewed the client certificate (same CA, same key here): the copy and the merged entries follow
        String renewedCert = b64(res("admin-ca.crt").replace("\n", "\r\n"));
        String renewed = admin("ca", "").replace(b64(res("admin-ca.crt")), renewedCert);
        LaptopKubeconfigs.Installed again = LaptopKubeconfigs.install(adminFile, "t", renewed, Optional.of("https://10.0.0.1:6443"), false);
        assertTrue(again.changed());
        assertEquals(List.of("refreshed cluster t's credentials in " + target.toAbsolutePath()), again.notes());
        String refreshed = Files.readString(target);
        assertTrue(refreshed.contains(renewedCert) && !merged.equals(refreshed));
        assertEquals(Kubeconfig.contexts(merged), Kubeconfig.contexts(refreshed), "contexts kept");
        assertTrue(refreshed.contains("current-context: prod"));
    }

    @Test void aNewClusterAtBootstrapArchivesTheOldCopyAndElsewhereItIsRefused(@TempDir Path dir) throws Exception {
        Inventory inv = ShHosts.inventory(dir);
        Path adminFile = inv.localKubeconfig();
        LaptopKubeconfigs.install(adminFile, "t", admin("ca", ""), Optional.empty(), true);
        byte[] old = Files.readAllBytes(adminFile);
        assertThrows(Kubeconfig.Refused.class, () -> LaptopKubeconfigs.install(adminFile, "t", admin("other-ca", ""), Optional.empty(), false));
        assertArrayEquals(old, Files.readAllBytes(adminFile));

        LaptopKubeconfigs.Installed made = LaptopKubeconfigs.install(adminFile, "t", admin("other-ca", ""), Optional.empty(), true);
        assertTrue(made.notes().get(0).contains("the master has a new CA"), made.notes()::toString);
        List<Path> archived;
        try (var s = Files.list(adminFile.getParent())) {
            archived = s.filter(p -> p.getFileName().toString().matches("admin\\.conf\\.\\d{8}-\\d{6}")).toList();
        }
        assertEquals(1, archived.size());
        assertArrayEquals(old, Files.readAllBytes(archived.get(0)), "the old cluster's copy kept as it was");
        assertEquals(Kubeadm.caCertHash(res("other-ca.crt")) + "\n", Files.readString(LaptopKubeconfigs.caRecord(adminFile)));
    }

    @Test void withoutARecordTheCopyBootstrapLeftGivesTheCa(@TempDir Path dir) throws Exception {
        Inventory inv = ShHosts.inventory(dir);
        Path adminFile = inv.localKubeconfig();
        StateDir.writePrivate(adminFile, admin("ca", "").getBytes(StandardCharsets.UTF_8)); // an earlier gpuctl's copy
        assertEquals(Optional.of(Kubeadm.caCertHash(res("ca.crt"))), LaptopKubeconfigs.recordedCaHash(adminFile));
        assertTrue(assertThrows(Kubeconfig.Refused.class, () -> LaptopKubeconfigs.forUser(adminFile, inv.master(), "t",
            admin("other-ca", ""), Optional.empty(), "t")).getMessage().startsWith("the master's CA is not the one"));
    }
}
