package dev.gpuctl.inventory;

import dev.gpuctl.net.Cidr;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/** Syntax rules for names and addresses in the inventory: pure predicates. */
public final class Names {
    private static final String LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
    private static final Pattern DNS_LABEL = Pattern.compile(LABEL);
    private static final Pattern DNS_SUBDOMAIN = Pattern.compile(LABEL + "(\\." + LABEL + ")*");
    private static final Pattern HOST_LABEL = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?");
    private static final Pattern LABEL_NAME = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
    private static final Pattern USER = Pattern.compile("[A-Za-z_][A-Za-z0-9_.-]{0,31}");
    private static final Pattern HOST_KEY = Pattern.compile("(?:(?i)SHA256:)?([A-Za-z0-9+/]{43})=?"); // prefix and padding optional

    private Names() {}

    /** RFC 1123 label as Kubernetes checks it: lowercase letters, digits, '-', alphanumeric at both ends, at most 63. */
    public static boolean isDnsLabel(String s) { return s.length() <= 63 && DNS_LABEL.matcher(s).matches(); }

    /** RFC 1123 subdomain as Kubernetes checks node names: dot-separated DNS labels, at most 253. */
    public static boolean isDnsSubdomain(String s) {
        if (s.length() > 253 || !DNS_SUBDOMAIN.matcher(s).matches()) return false;
        for (String label : s.split("\\.")) if (label.length() > 63) return false;
        return true;
    }

    /**
     * A node address in canonical form: an IPv4 or IPv6 literal as {@link Cidr} writes it, or an
     * RFC 1123 host name in lowercase (labels of letters, digits and '-', at most 63 each, 253 in
     * all; the last label is not all digits, so 300.1.1.1 is a bad IPv4 address, not a name).
     */
    static Optional<String> canonicalAddress(String s) {
        Optional<byte[]> ip = Cidr.parseAddress(s);
        if (ip.isPresent()) return Optional.of(Cidr.formatAddress(ip.get()));
        if (s.isEmpty() || s.length() > 253 || s.endsWith(".")) return Optional.empty();
        String[] labels = s.split("\\.", -1);
        for (String label : labels) {
            if (label.length() > 63 || !HOST_LABEL.matcher(label).matches()) return Optional.empty();
        }
        if (labels[labels.length - 1].matches("[0-9]+")) return Optional.empty();
        return Optional.of(s.toLowerCase(Locale.ROOT));
    }

    /** Kubernetes label key: an optional DNS subdomain prefix and '/', then a name of at most 63. */
    public static boolean isLabelKey(String key) {
        int slash = key.indexOf('/');
        String name = slash < 0 ? key : key.substring(slash + 1);
        if (slash >= 0 && !isDnsSubdomain(key.substring(0, slash))) return false;
        return isLabelValue(name) && !name.isEmpty();
    }

    /** Label prefixes that Kubernetes (node roles included) and the NVIDIA device plugin own, with their subdomains. */
    static final List<String> RESERVED_LABEL_DOMAINS = List.of("kubernetes.io", "k8s.io", "nvidia.com");

    /**
     * The reserved domain a label key's prefix falls under ("kubernetes.io/", "*.k8s.io/", "nvidia.com/",
     * node-role.kubernetes.io/ among them), compared case-insensitively, or empty.
     */
    static Optional<String> reservedLabelPrefix(String key) {
        int slash = key.indexOf('/');
        if (slash < 0) return Optional.empty();
        String prefix = key.substring(0, slash).toLowerCase(Locale.ROOT);
        for (String domain : RESERVED_LABEL_DOMAINS) {
            if (prefix.equals(domain)) return Optional.of(domain + "/");
            if (prefix.endsWith("." + domain)) return Optional.of("*." + domain + "/ (" + prefix + "/)");
        }
        return Optional.empty();
    }

    /** Kubernetes label value: empty, or at most 63 of letters, digits, '-', '_', '.', alphanumeric at both ends. */
    public static boolean isLabelValue(String value) {
        return value.isEmpty() || (value.length() <= 63 && LABEL_NAME.matcher(value).matches());
    }

    /** A login name that is safe on a command line: letters, digits, '_', '.', '-', not starting with '-' or '.'. */
    static boolean isUserName(String s) { return USER.matcher(s).matches(); }

    /** An OpenSSH SHA-256 fingerprint as `ssh-keygen -lf` prints it: "SHA256:" and 43 base64 characters. */
    static boolean isHostKeyFingerprint(String s) {
        var m = HOST_KEY.matcher(s);
        if (!m.matches()) return false;
        try {
            return Base64.getDecoder().decode(m.group(1) + "=").length == 32;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
