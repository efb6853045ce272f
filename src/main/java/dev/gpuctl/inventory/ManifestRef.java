package dev.gpuctl.inventory;

import java.net.URI;
import java.nio.file.Path;

/** A manifest given as an http(s) URL (fetched on the master) or a local file (uploaded to the master). */
public record ManifestRef(URI url, Path file) {
    public ManifestRef {
        if ((url == null) == (file == null)) throw new IllegalArgumentException("exactly one of url, file");
    }
    public static ManifestRef ofUrl(String url) { return new ManifestRef(URI.create(url), null); }
    public static ManifestRef ofFile(Path file) { return new ManifestRef(null, file); }
    public boolean isFile() { return file != null; }
    @Override public String toString() { return isFile() ? file.toString() : url.toString(); }
}
