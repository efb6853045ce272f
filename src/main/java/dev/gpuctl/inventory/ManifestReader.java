package dev.gpuctl.inventory;

import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Reads a manifest reference of the inventory (a URL or local file, or {@code { url, sha256 }}) and knows the default
 * manifests gpuctl was tested with, pinned by their sha256.
 */
final class ManifestReader {
    private final ReadContext ctx;
    private final Problems problems;

    ManifestReader(ReadContext ctx) {
        this.ctx = ctx;
        this.problems = ctx.problems;
    }

    /**
     * The sha256 of the upstream manifests gpuctl was tested with, by URL: a default manifest is checked against
     * it on the master like a {@code { url, sha256 }} from the inventory. The files are in testbed/manifests,
     * byte for byte (PinnedManifestsTest recomputes each).
     */
    static final Map<String, String> PINNED_SHA256 = Map.of(
        "https://raw.githubusercontent.com/flannel-io/flannel/v0.28.9/Documentation/kube-flannel.yml",
        "e875824be2f552b45711dbda91af81b17eb961d00025d914d9fef18fad8f09c0",
        "https://raw.githubusercontent.com/projectcalico/calico/v3.32.1/manifests/custom-resources.yaml",
        "f7cd142773609fc7f830b96d8f29bd1b5f05cdc5293324992d8524b54c09c717",
        "https://raw.githubusercontent.com/NVIDIA/k8s-device-plugin/v0.20.0/deployments/static/nvidia-device-plugin.yml",
        "325835e0b0d9263ae673e41d878f849e880642142e9f9b15d1a3400da6a2260d");

    /** A default manifest's reference: its URL, with the pinned sha256 when gpuctl knows that version's. */
    static ManifestRef pinned(String url) { return ManifestRef.ofUrl(url, PINNED_SHA256.get(url)); }

    /** The default cniManifest: upstream's manifest at the version gpuctl was tested with. */
    static String defaultCniManifest(Cni cni) {
        return switch (cni) {
            case FLANNEL -> "https://raw.githubusercontent.com/flannel-io/flannel/v0.28.9/Documentation/kube-flannel.yml";
            case CALICO -> "https://raw.githubusercontent.com/projectcalico/calico/v3.32.1/manifests/custom-resources.yaml";
        };
    }

    static String defaultDevicePluginManifest(String version) {
        return "https://raw.githubusercontent.com/NVIDIA/k8s-device-plugin/" + version
            + "/deployments/static/nvidia-device-plugin.yml";
    }

    static final List<String> MANIFEST_KEYS = List.of("url", "sha256");
    private static final Pattern SHA256 = Pattern.compile("[0-9a-fA-F]{64}");

    /**
     * A manifest: a URL or local file as a string, or {@code { url: https://..., sha256: <64 hex digits> }}. A URL
     * fetched over plain http, or with credentials in it (user:password@), is refused unless a sha256 is given: its
     * content could be changed on the way, and only the checksum makes it safe to apply as cluster admin.
     */
    Optional<ManifestRef> manifest(Section parent, String key) {
        Optional<Node> value = parent.value(key);
        if (value.isEmpty()) return Optional.empty();
        String path = parent.child(key);
        if (!(value.get() instanceof org.yaml.snakeyaml.nodes.MappingNode)) {
            return parent.scalar(key).flatMap(n -> ctx.manifest(n, path).filter(ref -> safeUrl(ref, n, path)));
        }
        Optional<Section> m = parent.section(key, MANIFEST_KEYS, Map.of());
        if (m.isEmpty()) return Optional.empty();
        Optional<ScalarNode> url = m.get().requiredScalar("url", "the manifest's http(s) URL");
        Optional<ScalarNode> sha = m.get().requiredScalar("sha256", "the sha256 of the manifest's content (64 hex digits)");
        Optional<String> digest = sha.filter(s -> check(SHA256.matcher(s.getValue()).matches(), s, m.get().child("sha256")
                + ": '" + shortened(s.getValue()) + "' is not a sha256 (expected 64 hex digits, as sha256sum prints them)"))
            .map(s -> s.getValue().toLowerCase(Locale.ROOT));
        Optional<ManifestRef> ref = url.flatMap(u -> ctx.manifest(u, m.get().child("url")));
        if (ref.isPresent() && ref.get().isFile()) {
            problems.at(url.get(), m.get().child("url") + ": expected an http(s) URL (a local file needs no sha256: write"
                + " its path as " + path + "'s value)");
            return Optional.empty();
        }
        if (ref.isEmpty() || digest.isEmpty()) return Optional.empty();
        return Optional.of(ManifestRef.ofUrl(ref.get().url().toString(), digest.get()));
    }

    private static String shortened(String text) {
        return text.length() <= 80 ? text : text.substring(0, 77) + "...";
    }

    /** Plain http and URLs with credentials need a sha256 (given in the mapping form); see {@link #manifest}. */
    private boolean safeUrl(ManifestRef ref, Node node, String path) {
        if (ref.isFile()) return true;
        Optional<String> why = urlNeedsChecksum(ref.url().toString());
        why.ifPresent(w -> problems.at(node, path + ": " + w + " is refused without a sha256 (write { url: ..., sha256: ... }"
            + " with the manifest's sha256sum, or use an https:// URL without credentials)"));
        return why.isEmpty();
    }

    /** Why a URL is unsafe to fetch without a checksum: plain http, or credentials in it; empty when neither. */
    static Optional<String> urlNeedsChecksum(String url) {
        URI u = URI.create(url);
        if (u.getRawUserInfo() != null) return Optional.of("a URL with credentials in it (user:password@)");
        if ("http".equalsIgnoreCase(u.getScheme())) return Optional.of("a plain http:// URL");
        return Optional.empty();
    }

    private boolean check(boolean ok, Node node, String message) {
        if (!ok) problems.at(node, message);
        return ok;
    }
}
