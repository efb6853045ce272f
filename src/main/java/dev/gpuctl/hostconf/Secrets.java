package dev.gpuctl.hostconf;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Hides the secrets that host files and tool output carry, for logs and messages: private keys (PEM blocks), a
 * kubeconfig's {@code client-key-data}, kubeadm's certificate key, bearer tokens and passwords, and registry
 * credentials ({@code auth}, {@code identitytoken} under {@code auths}), in YAML, JSON or as flags, and the
 * {@code user:password@} part of a URL. Certificates
 * ({@code client-certificate-data}) are public and stay. Pure: text in, text out; the value becomes
 * {@code <redacted>}, the key stays, so a person still sees what was there.
 */
public final class Secrets {
    private Secrets() {}

    public static final String REDACTED = "<redacted>";

    private static final Pattern PEM_KEY = Pattern.compile(
        "(-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----)[\\s\\S]*?(-----END \\2PRIVATE KEY-----)");

    /** "key: value", "key": "value", key=value for the keys whose values are secret (case-insensitive). */
    private static final Pattern KEY_VALUE = Pattern.compile(
        "(?i)(?<![\\w-])([\"']?(?:client-key-data|certificate-?key|password|passwd|auth|identitytoken|registrytoken|token|bearer-token)[\"']?"
            + "[ \\t]*[:=][ \\t]*)(\"(?:[^\"\\\\\\n]|\\\\.)*\"|'[^'\\n]*'|[^\\s,}\\]\"']+)");

    /** kubeadm's --certificate-key (64 hex digits), as a flag in a command or in kubeadm init's advice. */
    private static final Pattern CERT_KEY_FLAG = Pattern.compile("(--certificate-key(?:=|[ \\t]+))([0-9a-fA-F]+)");

    /** user:password@ (or a bare token@) in a URL: the part before '@' becomes the mask, the host stays. */
    private static final Pattern URL_USERINFO = Pattern.compile("(?i)\\b([a-z][a-z0-9+.-]*://)([^\\s/?#@'\"<>]+)@");

    /** Words that must be in a text for it to hold any of the above: most log lines hold none, and skip the patterns. */
    private static final String[] HINTS = {"PRIVATE KEY", "key-data", "ertificate-key", "ertificateKey", "assw", "auth", "AUTH", "Auth",
        "oken", "OKEN", "://"};

    public static String redact(String text) {
        if (text == null || !mayHold(text)) return text;
        String out = PEM_KEY.matcher(text).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + "\n" + REDACTED + "\n" + m.group(3)));
        out = URL_USERINFO.matcher(out).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + REDACTED + "@"));
        out = CERT_KEY_FLAG.matcher(out).replaceAll("$1" + REDACTED);
        out = KEY_VALUE.matcher(out).replaceAll(m -> {
            String v = m.group(2);
            if (v.equals("{") || v.equals("[") || v.equals("null") || v.equals("\"\"") || v.equals("''") || isReference(v)) {
                return Matcher.quoteReplacement(m.group());
            }
            String quote = v.startsWith("\"") ? "\"" : v.startsWith("'") ? "'" : "";
            return Matcher.quoteReplacement(m.group(1) + quote + REDACTED + quote);
        });
        return out;
    }

    private static boolean mayHold(String text) {
        for (String h : HINTS) {
            if (text.contains(h)) return true;
        }
        return false;
    }

    /** A value that names a secret rather than being one: gpuctl's own {{fact}} placeholders and "<...>" masks. */
    private static boolean isReference(String v) {
        String s = v.replaceAll("^[\"']|[\"']$", "");
        return s.startsWith("{{") || s.startsWith("<") && s.endsWith(">");
    }
}
