package dev.gpuctl.inventory;

import dev.gpuctl.text.Secrets;
import java.net.URI;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A manifest given as an http(s) URL (fetched on the master) or a local file (uploaded to the master, byte for byte
 * as read here). A URL may carry the sha256 its content must have: the master checks what it fetched against it
 * before anything uses it.
 *
 * @param sha256 64 lower-case hex digits, or null when the inventory gives none
 */
public record ManifestRef(URI url, Path file, String sha256) {
    public ManifestRef {
        if ((url == null) == (file == null)) throw new IllegalArgumentException("exactly one of url, file");
        if (sha256 != null && (file != null || !sha256.matches("[0-9a-f]{64}"))) {
            throw new IllegalArgumentException("a sha256 is 64 lower-case hex digits, given with a URL");
        }
    }
    public static ManifestRef ofUrl(String url) { return new ManifestRef(URI.create(url), null, null); }
    public static ManifestRef ofUrl(String url, String sha256) { return new ManifestRef(URI.create(url), null, sha256); }
    public static ManifestRef ofFile(Path file) { return new ManifestRef(null, file, null); }
    public boolean isFile() { return file != null; }
    public Optional<String> checksum() { return Optional.ofNullable(sha256); }
    /** The file, or the URL with its password masked ({@code user:***@}): what messages and the plan show. */
    @Override public String toString() { return isFile() ? file.toString() : Secrets.maskUrl(url.toString()); }
}
