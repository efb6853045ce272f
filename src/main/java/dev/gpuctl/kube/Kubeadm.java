package dev.gpuctl.kube;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.text.JsonText;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;

/**
 * kubeadm's bootstrap tokens and join command: parsing {@code kubeadm token list -o json} and
 * {@code kubeadm token create --print-join-command}, computing the
 * {@code --discovery-token-ca-cert-hash} of a CA certificate, and making new tokens.
 *
 * <p>A token's secret half must never reach a log: the records here print it as
 * {@code abcdef.<redacted>}, and {@link #redactTokens} does the same to any text.
 */
public final class Kubeadm {

    private static final Pattern TOKEN = Pattern.compile("[a-z0-9]{6}\\.[a-z0-9]{16}");
    static final Pattern TOKEN_IN_TEXT = Pattern.compile("\\b([a-z0-9]{6})\\.[a-z0-9]{16}\\b");
    private static final Pattern TOKEN_FLAG = Pattern.compile("(--token(?:=|\\s+))([^\\s.]{0,6})\\S*");
    private static final Pattern CA_HASH = Pattern.compile("sha256:[0-9a-f]{64}");

    /**
     * One bootstrap token as {@code kubeadm token list -o json} prints it.
     *
     * @param ttl     the time to live as kubeadm printed it (a Go duration such as {@code 24h0m0s}),
     *                or null (kubeadm prints {@code expires} instead for stored tokens)
     * @param expires when it stops working, or null for a token that never expires
     */
    public record BootstrapToken(String token, String description, String ttl, Instant expires,
                                 List<String> usages, List<String> groups) {
        public BootstrapToken {
            usages = List.copyOf(usages);
            groups = List.copyOf(groups);
        }

        /** The public half, {@code abcdef} of {@code abcdef.0123456789abcdef}. */
        public String tokenId() {
            int dot = token.indexOf('.');
            return dot < 0 ? token : token.substring(0, dot);
        }

        /** True when it can still be used to join for at least {@code margin} after {@code now}. */
        public boolean usableFor(Instant now, Duration margin) {
            return usages.contains("authentication") && usages.contains("signing")
                    && (expires == null || now.plus(margin).isBefore(expires));
        }

        @Override
        public String toString() {
            return "BootstrapToken[token=" + tokenId() + ".<redacted>, description=" + description + ", ttl=" + ttl
                    + ", expires=" + expires + ", usages=" + usages + ", groups=" + groups + "]";
        }
    }

    /** The parts of a {@code kubeadm join} command gpuctl puts into a JoinConfiguration file. */
    public record JoinCommand(String apiServerEndpoint, String token, String caCertHash) {
        @Override
        public String toString() {
            return "JoinCommand[apiServerEndpoint=" + apiServerEndpoint + ", token=" + redactTokens(token)
                    + ", caCertHash=" + caCertHash + "]";
        }
    }

    private Kubeadm() {
    }

    /**
     * Parses {@code kubeadm token list -o json}: one JSON object per token, one after the other
     * (not a list); a JSON list of them is accepted too. No tokens prints nothing: an empty list.
     *
     * @throws HostConfException when the text is not JSON objects with a {@code token}, or an
     *                           {@code expires} is not an RFC 3339 time
     */
    public static List<BootstrapToken> parseTokenList(String json) {
        List<BootstrapToken> tokens = new ArrayList<>();
        String what = "kubeadm token list -o json output";
        for (JsonNode value : JsonText.parseStream(json, what, null)) {
            for (JsonNode t : value.isArray() ? value : List.of(value)) {
                String token = t.path("token").asText("");
                if (!t.isObject() || token.isEmpty()) {
                    throw new HostConfException(what + " holds an item without a \"token\": " + t);
                }
                Instant expires = null;
                String exp = t.path("expires").asText("");
                if (!exp.isEmpty()) {
                    try {
                        expires = Instant.parse(exp);
                    } catch (DateTimeParseException e) {
                        throw new HostConfException(what + ": token " + token.split("\\.")[0]
                                + " expires at \"" + exp + "\", not an RFC 3339 time", e);
                    }
                }
                tokens.add(new BootstrapToken(token, t.path("description").asText(""),
                        t.hasNonNull("ttl") ? t.get("ttl").asText() : null, expires,
                        strings(t.path("usages")), strings(t.path("groups"))));
            }
        }
        return List.copyOf(tokens);
    }

    /**
     * The certificate key {@code kubeadm certs certificate-key} printed: its one line, 64 hex digits (an AES-256 key).
     *
     * @throws HostConfException when the output is anything else (the text is not shown: it may be a key)
     */
    public static String certificateKey(String output) {
        String key = output.strip();
        if (!key.matches("[0-9a-f]{64}")) {
            throw new HostConfException("kubeadm certs certificate-key printed no key of 64 hex digits (" + output.strip().length()
                + " characters)");
        }
        return key;
    }

    /**
     * Parses {@code kubeadm token create --print-join-command} output: the line starting with
     * {@code kubeadm join} (warnings before it are skipped), with {@code --token} and
     * {@code --discovery-token-ca-cert-hash} in either {@code --flag value} or
     * {@code --flag=value} form.
     *
     * @throws HostConfException when there is no join line, or its endpoint, token or CA hash is
     *                           missing or malformed (a join without a CA hash is not trusted)
     */
    public static JoinCommand parseJoinCommand(String output) {
        String line = output.lines().map(String::strip).filter(l -> l.startsWith("kubeadm join "))
                .reduce((a, b) -> b)
                .orElseThrow(() -> new HostConfException("kubeadm printed no `kubeadm join` line: "
                        + redactJoinLine(output.strip())));
        List<String> words = new ArrayList<>(Arrays.asList(line.split("\\s+")));
        words.remove(0);
        words.remove(0); // "kubeadm join"
        String endpoint = null, token = null, hash = null;
        for (int i = 0; i < words.size(); i++) {
            String w = words.get(i);
            if (w.equals("\\")) continue;
            if (w.startsWith("--")) {
                String flag = w;
                String value = null;
                int eq = w.indexOf('=');
                if (eq > 0) {
                    flag = w.substring(0, eq);
                    value = w.substring(eq + 1);
                } else if (takesValue(flag) && i + 1 < words.size()) {
                    value = words.get(++i);
                }
                if (flag.equals("--token")) token = value;
                if (flag.equals("--discovery-token-ca-cert-hash") && hash == null) hash = value;
            } else if (endpoint == null) {
                endpoint = w;
            }
        }
        String shown = redactJoinLine(line);
        if (endpoint == null || !endpoint.matches("[^\\s:]+:\\d+|\\[[0-9a-fA-F:.]+]:\\d+")) {
            throw new HostConfException("the join command has no API server host:port: " + shown);
        }
        if (token == null || !isValidToken(token)) {
            throw new HostConfException("the join command has no valid --token: " + shown);
        }
        if (hash == null || !CA_HASH.matcher(hash).matches()) {
            throw new HostConfException("the join command has no --discovery-token-ca-cert-hash sha256:<64 hex>: "
                    + shown);
        }
        return new JoinCommand(endpoint, token, hash);
    }

    /**
     * The {@code --discovery-token-ca-cert-hash} of a CA certificate, exactly as kubeadm computes it:
     * {@code sha256:} and the lower-case hex SHA-256 of the certificate's SubjectPublicKeyInfo,
     * as Java encodes the certificate's public key ({@code getPublicKey().getEncoded()}: X.509 SubjectPublicKeyInfo). For a PEM bundle, the first
     * certificate counts.
     *
     * @throws HostConfException when the text is not a PEM (or DER) X.509 certificate
     */
    public static String caCertHash(String caCertPem) {
        X509Certificate cert;
        try {
            cert = (X509Certificate) CertificateFactory.getInstance("X.509")
                    .generateCertificate(new ByteArrayInputStream(caCertPem.getBytes(StandardCharsets.US_ASCII)));
        } catch (CertificateException | ClassCastException e) {
            throw new HostConfException("the CA certificate is not a PEM X.509 certificate: " + e.getMessage(), e);
        }
        return caCertHash(cert);
    }

    /** {@link #caCertHash(String)} of a parsed certificate: SHA-256 of its public key's SubjectPublicKeyInfo encoding. */
    public static String caCertHash(X509Certificate cert) {
        try {
            return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(cert.getPublicKey().getEncoded()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java has SHA-256", e);
        }
    }

    /** True for a bootstrap token: {@code [a-z0-9]{6}.[a-z0-9]{16}}, nothing around it. */
    public static boolean isValidToken(String token) {
        return token != null && TOKEN.matcher(token).matches();
    }

    /** The text with every token secret replaced: {@code abcdef.0123456789abcdef} becomes {@code abcdef.<redacted>}. */
    public static String redactTokens(String text) {
        if (text == null) return null;
        // what TOKEN_IN_TEXT.matcher(text).replaceAll("$1.<redacted>") does, by a scan from dot to dot: every log
        // line goes through here, and the regex's word boundaries cost a Unicode lookup at every character of
        // a 100 KB kubectl answer
        StringBuilder out = null;
        int copied = 0;
        int dot = text.indexOf('.', 6);
        while (dot >= 0) {
            int start = dot - 6;
            int end = dot + 17;
            if (end <= text.length() && tokenChars(text, start, dot) && tokenChars(text, dot + 1, end)
                    && (start == 0 || !wordChar(text.charAt(start - 1))) && (end == text.length() || !wordChar(text.charAt(end)))) {
                if (out == null) out = new StringBuilder(text.length());
                out.append(text, copied, dot + 1).append("<redacted>");
                copied = end;
                dot = text.indexOf('.', end + 6);
            } else {
                dot = text.indexOf('.', dot + 1);
            }
        }
        return out == null ? text : out.append(text, copied, text.length()).toString();
    }

    private static boolean tokenChars(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (!(c >= 'a' && c <= 'z' || c >= '0' && c <= '9')) return false;
        }
        return true;
    }

    /** A word character as a regex word boundary sees it. */
    private static boolean wordChar(char c) {
        return c == '_' || Character.isLetterOrDigit(c);
    }

    /** Hides the value of every --token flag, well-formed or not, and any token-shaped text. */
    private static String redactJoinLine(String text) {
        return redactTokens(TOKEN_FLAG.matcher(text).replaceAll("$1$2.<redacted>"));
    }

    private static boolean takesValue(String flag) {
        return !flag.equals("--control-plane") && !flag.equals("--discovery-token-unsafe-skip-ca-verification")
                && !flag.equals("--dry-run") && !flag.equals("--v");
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }
}
