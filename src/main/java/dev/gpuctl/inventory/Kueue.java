package dev.gpuctl.inventory;

/**
 * Kueue, which gpuctl installs when the inventory has teams: a release tag and the manifest that deploys it (default:
 * the release's manifests.yaml; a local file for air-gapped sites, or a URL with its sha256).
 */
public record Kueue(String version, ManifestRef manifest) {
    public static final String DEFAULT_VERSION = "v0.14.8";

    /** The release's manifest, as Kueue's installation guide applies it (kubectl apply --server-side -f URL). */
    public static String defaultManifest(String version) {
        return "https://github.com/kubernetes-sigs/kueue/releases/download/" + version + "/manifests.yaml";
    }

    public static Kueue defaults() { return new Kueue(DEFAULT_VERSION, ManifestReader.pinned(defaultManifest(DEFAULT_VERSION))); }
}
