package dev.gpuctl.kube;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.gpuctl.kube.KubeconfigYaml.dump;
import static dev.gpuctl.kube.KubeconfigYaml.list;
import static dev.gpuctl.kube.KubeconfigYaml.named;
import static dev.gpuctl.kube.KubeconfigYaml.only;
import static dev.gpuctl.kube.KubeconfigYaml.printable;
import static dev.gpuctl.kube.KubeconfigYaml.put;
import static dev.gpuctl.kube.KubeconfigYaml.read;

/**
 * A cluster's admin kubeconfig, rebuilt from the master's admin.conf and never copied: only the API server's https
 * address (the cluster's endpoint), the CA (the one the cluster was bootstrapped with) and the embedded client
 * certificate and key are taken ({@link #admin}); everything else that a kubeconfig can carry and that would act on
 * this machine ({@code exec} and {@code auth-provider} plugins, token and certificate files, a proxy, TLS checks
 * switched off) is refused, naming the field. The result is written as kubeadm's admin.conf ({@link #render}) or
 * merged into a user's kubeconfig file the way {@code kubectl config} keeps one ({@link #merge}): the cluster, user
 * and context entries are named after the cluster (the context may be named otherwise), an entry of the same name is
 * replaced, every other entry and setting stays; current-context is set only when the file has none. Pure: text in,
 * text out.
 *
 * <p>Over 300 lines as one contract: what {@link #admin} accepts is exactly what {@link #render}, {@link #merge} and
 * {@link #refresh} write; its YAML handling is already {@link KubeconfigYaml}'s.
 */
public final class Kubeconfig {
    private Kubeconfig() {}

    /** A kubeconfig that cannot be read as one: what is wrong, for a person. */
    public static final class Invalid extends RuntimeException {
        public Invalid(String message) { super(message); }
    }

    /** A master's admin.conf that gpuctl will not put on this machine: which field, and why, for a person. */
    public static final class Refused extends RuntimeException {
        public Refused(String message) { super(message); }
    }

    /** What a merge made: the new file's text, and whether it set current-context. */
    public record Merged(String text, boolean setCurrentContext) {}

    /** The fields of a cluster entry that are taken; any other is refused. */
    static final List<String> CLUSTER_FIELDS = List.of("server", "certificate-authority-data");
    /** The fields of a user entry that are taken; any other is refused. */
    static final List<String> USER_FIELDS = List.of("client-certificate-data", "client-key-data");

    /**
     * Everything taken from a master's admin.conf: the API server's https URL, the CA (base64 PEM, as kubeadm embeds
     * it) and its {@code caCertHash}, the client certificate and key (base64 PEM). The key is never shown.
     */
    public record Admin(String server, String caData, String caCertHash, String clientCertificateData, String clientKeyData) {
        @Override public String toString() {
            return "Admin[server=" + server + ", caCertHash=" + caCertHash + ", clientKeyData=<redacted>]";
        }
    }

    /** Why each field that is refused would act on this machine, for the message that names it. */
    private static final Map<String, String> WHY = Map.ofEntries(
        Map.entry("exec", "a credential plugin: kubectl would run its command on this machine"),
        Map.entry("auth-provider", "an auth provider plugin: kubectl would run it on this machine"),
        Map.entry("tokenFile", "a token read from a file on this machine"),
        Map.entry("token", "a bearer token instead of kubeadm's client certificate"),
        Map.entry("username", "basic authentication instead of kubeadm's client certificate"),
        Map.entry("password", "basic authentication instead of kubeadm's client certificate"),
        Map.entry("certificate-authority", "a file path on this machine instead of the embedded CA"),
        Map.entry("client-certificate", "a file path on this machine instead of the embedded certificate"),
        Map.entry("client-key", "a file path on this machine instead of the embedded key"),
        Map.entry("proxy-url", "a proxy that would see every request"),
        Map.entry("insecure-skip-tls-verify", "the API server's certificate would not be checked"),
        Map.entry("tls-server-name", "the API server's certificate checked against another name"),
        Map.entry("as", "impersonation of another user"),
        Map.entry("as-groups", "impersonation of other groups"),
        Map.entry("as-user-extra", "impersonation"),
        Map.entry("as-uid", "impersonation"));

    /**
     * The admin credentials in a master's admin.conf (one cluster, one user), checked: every field of the cluster and
     * user entries is one of {@link #CLUSTER_FIELDS} and {@link #USER_FIELDS}; the server is {@code expectedServer}
     * (https, the cluster's endpoint); the CA is a certificate whose caCertHash is {@code expectedCaHash} (when given:
     * the one recorded at bootstrap); the client certificate is signed by that CA, and a key is there.
     *
     * @param expectedServer  the cluster's endpoint, {@code https://HOST:PORT}; null: any https URL
     * @param expectedCaHash  {@code sha256:<hex>} recorded for this cluster; null: none recorded yet
     * @throws Refused when a field is not one gpuctl takes, or a value is not what it must be
     * @throws Invalid when the text is no kubeconfig with one cluster and one user
     */
    public static Admin admin(String text, String expectedServer, String expectedCaHash) {
        String what = "the master's admin.conf";
        Map<String, Object> doc = read(text, what);
        Map<String, Object> cluster = only(doc, "clusters", "cluster", what);
        Map<String, Object> user = only(doc, "users", "user", what);
        refuseOthers(cluster, CLUSTER_FIELDS, "clusters[0].cluster");
        refuseOthers(user, USER_FIELDS, "users[0].user");
        String server = string(cluster, "server", "clusters[0].cluster");
        URI uri;
        try {
            uri = new URI(server);
        } catch (URISyntaxException e) {
            throw new Refused(what + ": clusters[0].cluster.server '" + printable(server) + "' is not a URL");
        }
        if (!"https".equals(uri.getScheme()) || uri.getHost() == null || uri.getRawUserInfo() != null
                || uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw new Refused(what + ": clusters[0].cluster.server '" + printable(server) + "' is not an https://HOST:PORT URL");
        }
        if (expectedServer != null && !stripSlash(server).equals(stripSlash(expectedServer))) {
            throw new Refused(what + ": clusters[0].cluster.server '" + printable(server) + "' is not the cluster's endpoint "
                + expectedServer);
        }
        String caData = string(cluster, "certificate-authority-data", "clusters[0].cluster");
        X509Certificate ca = certificate(caData, "clusters[0].cluster.certificate-authority-data");
        String hash = Kubeadm.caCertHash(ca);
        if (expectedCaHash != null && !expectedCaHash.equals(hash)) {
            throw new Refused("the master's CA is not the one this cluster was bootstrapped with (recorded " + expectedCaHash
                + ", the master's admin.conf has " + hash + ")");
        }
        String certData = string(user, "client-certificate-data", "users[0].user");
        X509Certificate client = certificate(certData, "users[0].user.client-certificate-data");
        try {
            client.verify(ca.getPublicKey());
        } catch (GeneralSecurityException e) {
            throw new Refused(what + ": users[0].user.client-certificate-data is not signed by the cluster's CA");
        }
        String keyData = string(user, "client-key-data", "users[0].user");
        String keyPem = decode(keyData, "users[0].user.client-key-data");
        if (!keyPem.contains("-----BEGIN ") || !keyPem.contains("PRIVATE KEY-----")) {
            throw new Refused(what + ": users[0].user.client-key-data is not a PEM private key");
        }
        return new Admin(stripSlash(server), caData, hash, certData, keyData);
    }

    /**
     * kubeadm's admin.conf rebuilt from the checked credentials and nothing else: cluster {@code clusterName}, user
     * {@code clusterName-admin}, context {@code clusterName}, current.
     */
    public static String render(Admin a, String clusterName) {
        return merge("", a, clusterName, clusterName).text();
    }

    /**
     * The checked credentials merged into {@code existing} (empty when the file does not exist yet) as cluster
     * {@code clusterName}, user {@code clusterName-admin} and context {@code context}.
     */
    public static Merged merge(String existing, Admin a, String clusterName, String context) {
        String userName = clusterName + "-admin";
        Map<String, Object> doc = existing.isBlank() ? new LinkedHashMap<>() : read(existing, "the kubeconfig file");
        doc.putIfAbsent("apiVersion", "v1");
        doc.putIfAbsent("kind", "Config");
        put(doc, "clusters", clusterName, "cluster", clusterBody(a));
        put(doc, "users", userName, "user", userBody(a));
        Map<String, Object> ctx = new LinkedHashMap<>();
        ctx.put("cluster", clusterName);
        ctx.put("user", userName);
        put(doc, "contexts", context, "context", ctx);
        Object current = doc.get("current-context");
        boolean set = current == null || current.toString().isEmpty();
        if (set) doc.put("current-context", context);
        return new Merged(dump(doc), set);
    }

    /**
     * A kubeconfig merged before ({@link #merge}) with this cluster's entries (cluster {@code clusterName}, user
     * {@code clusterName-admin}) refreshed with new credentials; contexts, current-context and every other entry stay.
     * Empty when the file holds neither entry (the user removed them: nothing to refresh).
     */
    public static Optional<String> refresh(String existing, Admin a, String clusterName) {
        if (existing.isBlank()) return Optional.empty();
        Map<String, Object> doc = read(existing, "the kubeconfig file");
        boolean any = false;
        if (named(doc, "clusters", clusterName)) {
            put(doc, "clusters", clusterName, "cluster", clusterBody(a));
            any = true;
        }
        if (named(doc, "users", clusterName + "-admin")) {
            put(doc, "users", clusterName + "-admin", "user", userBody(a));
            any = true;
        }
        return any ? Optional.of(dump(doc)) : Optional.empty();
    }

    /**
     * A read-only command ({@code String.formatted} with admin.conf's path twice) that prints admin.conf's public
     * fields (server, CA, client certificate) and the SHA-256 of its client key, never the key: what {@link
     * #sameCredentials} compares with this machine's copy.
     */
    public static final String CREDENTIALS_PROBE = "sed -n 's/^[[:space:]]*\\(server\\|certificate-authority-data\\|client-certificate-data\\):[[:space:]]*/\\1 /p' %s"
        + " && printf 'client-key-sha256 ' && sed -n 's/^[[:space:]]*client-key-data:[[:space:]]*//p' %s | tr -d '\\n' | sha256sum | cut -d' ' -f1";

    /**
     * True when {@code laptop} (a kubeconfig gpuctl rebuilt) holds the credentials that {@link #CREDENTIALS_PROBE}
     * printed of the master's admin.conf: the same server, CA, client certificate and client key.
     */
    public static boolean sameCredentials(String laptop, String probeOutput) {
        Admin a;
        try {
            a = admin(laptop, null, null);
        } catch (Invalid | Refused e) {
            return false;
        }
        Map<String, String> got = new LinkedHashMap<>();
        for (String line : probeOutput.split("\n")) {
            int sp = line.indexOf(' ');
            if (sp > 0) got.merge(line.substring(0, sp), line.substring(sp + 1).strip(), (x, y) -> x + "\n" + y);
        }
        String keyHash;
        try {
            keyHash = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(a.clientKeyData().getBytes(StandardCharsets.US_ASCII)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java has SHA-256", e);
        }
        return Map.of("server", a.server(), "certificate-authority-data", a.caData(), "client-certificate-data", a.clientCertificateData(),
            "client-key-sha256", keyHash).equals(got);
    }

    private static Map<String, Object> clusterBody(Admin a) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("certificate-authority-data", a.caData());
        c.put("server", a.server());
        return c;
    }

    private static Map<String, Object> userBody(Admin a) {
        Map<String, Object> u = new LinkedHashMap<>();
        u.put("client-certificate-data", a.clientCertificateData());
        u.put("client-key-data", a.clientKeyData());
        return u;
    }

    private static void refuseOthers(Map<String, Object> body, List<String> allowed, String where) {
        for (Object k : body.keySet()) {
            String key = String.valueOf(k);
            if (allowed.contains(key)) continue;
            String why = WHY.getOrDefault(key, "not a field gpuctl takes (only " + String.join(", ", allowed) + ")");
            throw new Refused("the master's admin.conf: " + where + "." + printable(key) + " is refused: " + why
                + "; gpuctl rebuilds the kubeconfig from " + String.join(", ", allowed) + " only");
        }
    }

    private static String string(Map<String, Object> body, String key, String where) {
        Object v = body.get(key);
        if (!(v instanceof String s) || s.isBlank()) {
            throw new Refused("the master's admin.conf: " + where + "." + key + " is missing or not a string");
        }
        return s;
    }

    private static String decode(String data, String where) {
        try {
            return new String(Base64.getDecoder().decode(data.strip()), StandardCharsets.US_ASCII);
        } catch (IllegalArgumentException e) {
            throw new Refused("the master's admin.conf: " + where + " is not base64");
        }
    }

    private static X509Certificate certificate(String data, String where) {
        String pem = decode(data, where);
        try {
            return (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
        } catch (GeneralSecurityException | ClassCastException e) {
            throw new Refused("the master's admin.conf: " + where + " is not a PEM X.509 certificate");
        }
    }

    private static String stripSlash(String s) { return s.endsWith("/") ? s.substring(0, s.length() - 1) : s; }

    /** The names of the contexts in a kubeconfig's text (empty when it has none). */
    public static List<String> contexts(String text) {
        if (text.isBlank()) return List.of();
        List<String> names = new ArrayList<>();
        for (Object e : list(read(text, "the kubeconfig file"), "contexts", "the kubeconfig file")) {
            if (e instanceof Map<?, ?> m && m.get("name") != null) names.add(m.get("name").toString());
        }
        return names;
    }

    /**
     * The base64 {@code client-certificate-data} of the current context's user (or of the only user when no context
     * is current); empty when that user has none (a token, a certificate file).
     */
    public static Optional<String> currentClientCertificateData(String text) {
        Map<String, Object> doc = read(text, "the kubeconfig file");
        List<Object> users = list(doc, "users", "the kubeconfig file");
        String user = null;
        Object current = doc.get("current-context");
        for (Object e : list(doc, "contexts", "the kubeconfig file")) {
            if (e instanceof Map<?, ?> m && current != null && current.toString().equals(String.valueOf(m.get("name")))
                && m.get("context") instanceof Map<?, ?> c && c.get("user") != null) user = c.get("user").toString();
        }
        for (Object e : users) {
            if (e instanceof Map<?, ?> m && (user == null ? users.size() == 1 : user.equals(String.valueOf(m.get("name"))))
                && m.get("user") instanceof Map<?, ?> u && u.get("client-certificate-data") != null) {
                return Optional.of(u.get("client-certificate-data").toString());
            }
        }
        return Optional.empty();
    }


}
