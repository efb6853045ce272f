package dev.gpuctl.text;

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
        out = URL_USERINFO.matcher(out).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + maskedUserinfo(m.group(2)) + "@"));
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

    /**
     * A URL as a person may see it: the password of its {@code user:password@} becomes {@code ***} ({@code user:***@});
     * a bare {@code token@} becomes {@code ***@}. Works on text that is not a valid URL too (a space or a quote in
     * the password): everything between {@code ://} and the last '@' before the host's end ('/', '?', '#' or the end)
     * is user information. Text without "://" is returned as it is.
     */
    public static String maskUrl(String url) {
        if (url == null) return null;
        int scheme = url.indexOf("://");
        if (scheme < 0) return url;
        int from = scheme + 3;
        int end = url.length();
        for (int i = from; i < url.length(); i++) {
            char c = url.charAt(i);
            if (c == '/' || c == '?' || c == '#') {
                end = i;
                break;
            }
        }
        int at = url.lastIndexOf('@', end - 1);
        if (at < from) return url;
        return url.substring(0, from) + maskedUserinfo(url.substring(from, at)) + url.substring(at);
    }

    /** "user:password" as "user:***"; a bare token as "***". */
    private static String maskedUserinfo(String userinfo) {
        int colon = userinfo.indexOf(':');
        return colon < 0 ? "***" : userinfo.substring(0, colon) + ":***";
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
