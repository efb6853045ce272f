package dev.gpuctl.inventory;

import dev.gpuctl.text.HostConfException;
import dev.gpuctl.kube.ManifestObjects;
import dev.gpuctl.kube.Manifests;
import dev.gpuctl.text.Secrets;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * What reading one inventory needs besides the YAML: where its problems go, the directory that
 * relative paths are relative to, and HOME for '~'.
 */
final class ReadContext {
    final Problems problems;
    private final Path baseDir;
    private final Optional<Path> home;
    private final Set<String> reportedDefaults = new HashSet<>();

    /** The user's ~/.ssh/config, for what the inventory does not say about reaching a node. */
    final SshConfig sshConfig;

    ReadContext(Problems problems, Path baseDir, Optional<String> home) {
        this.problems = problems;
        this.baseDir = baseDir.toAbsolutePath().normalize();
        this.home = home.filter(h -> !h.isBlank()).flatMap(ReadContext::toPath);
        this.sshConfig = this.home.map(h -> h.resolve(".ssh").resolve("config")).map(this::readSshConfig).orElse(SshConfig.EMPTY);
    }

    /**
     * ~/.ssh/config when it is there, with the files it includes (its problems reported as FILE:LINE); none when it is
     * not.
     */
    private SshConfig readSshConfig(Path file) {
        if (!Files.isRegularFile(file)) return SshConfig.EMPTY;
        try {
            String text = Files.readString(file, StandardCharsets.UTF_8);
            SshConfig c = SshConfig.parse(text, file, file.getParent(), DISK);
            for (String p : c.problems()) problems.whole(p);
            return c;
        } catch (IOException | UncheckedIOException e) {
            problems.whole(file + ": cannot read it (" + e.getMessage() + "); fix or move it, or give every node's ssh settings in the inventory");
            return SshConfig.EMPTY;
        }
    }

    /** Files an Include reads: regular files up to 1 MiB, as UTF-8; what cannot be read is not there (as ssh skips it). */
    static final SshConfig.Files DISK = new SshConfig.Files() {
        @Override
        public List<String> list(Path dir) {
            try (var s = Files.list(dir)) {
                return s.map(p -> p.getFileName().toString()).toList();
            } catch (IOException | RuntimeException e) {
                return List.of();
            }
        }

        @Override
        public Optional<String> read(Path file) {
            try {
                if (!Files.isRegularFile(file) || Files.size(file) > 1 << 20) return Optional.empty();
                return Optional.of(Files.readString(file, StandardCharsets.UTF_8));
            } catch (IOException | RuntimeException e) {
                return Optional.empty();
            }
        }
    };

    /** Things the user should know that do not stop the run (a ~/.ssh/config block gpuctl skipped), once each. */
    final Set<String> warnings = new LinkedHashSet<>();

    /** The ~/.ssh/config notes of each node (by name), also in {@link #warnings}. */
    final java.util.Map<String, List<String>> sshNotes = new java.util.LinkedHashMap<>();

    /** A path as ~/.ssh/config writes it: '~/' is HOME, a relative path is relative to HOME (as ssh reads it). */
    Optional<Path> sshConfigPath(String text) {
        if (text.startsWith("~/")) return home.flatMap(h -> toPath(text.substring(2)).map(p -> h.resolve(p).normalize()));
        return toPath(text).map(p -> p.isAbsolute() ? p.normalize() : home.map(h -> h.resolve(p).normalize()).orElse(p));
    }

    private static Optional<Path> toPath(String text) {
        try {
            return Optional.of(Path.of(text));
        } catch (InvalidPathException e) {
            return Optional.empty();
        }
    }

    /**
     * A file path from the inventory: '~' and '~/…' are expanded with HOME, a relative path is
     * resolved against the inventory's directory. '~user' is not supported.
     */
    Optional<Path> path(ScalarNode node, String path) {
        String text = node.getValue();
        if (text.isEmpty() || text.indexOf('\0') >= 0) {
            problems.at(node, path + ": expected a file path, got " + Section.describe(node));
            return Optional.empty();
        }
        if (text.startsWith("~") && !text.equals("~") && !text.startsWith("~/")) {
            problems.at(node, path + ": '" + text + "' names another user's home, which is not supported"
                + " (expected '~/…', an absolute path, or a path relative to the inventory)");
            return Optional.empty();
        }
        if (text.startsWith("~")) {
            if (home.isEmpty()) {
                problems.at(node, path + ": cannot expand '~' because HOME is not set (expected an absolute path)");
                return Optional.empty();
            }
            return toPath(text.length() <= 2 ? "" : text.substring(2)).map(p -> home.get().resolve(p).normalize());
        }
        Optional<Path> p = toPath(text).map(rel -> baseDir.resolve(rel).normalize());
        if (p.isEmpty()) problems.at(node, path + ": '" + text + "' is not a valid file path");
        return p;
    }

    /** A default path under HOME ("~/.ssh/id_ed25519"); without HOME, reported once per key. */
    Path underHome(String relative, String key) {
        if (home.isPresent()) return home.get().resolve(relative).normalize();
        if (reportedDefaults.add(key)) {
            problems.whole(key + ": cannot use the default ~/" + relative
                + " because HOME is not set (set " + key + " to an absolute path)");
        }
        return Path.of("/", relative);
    }

    /**
     * Why a local manifest cannot be used, naming the file: over 16 MiB, unreadable, not UTF-8, not YAML
     * ({@link ManifestObjects#text}), or not Kubernetes objects: a kubeconfig, a document without apiVersion or kind, a private
     * key or cloud credentials ({@link ManifestObjects#objects}, naming the file's line); empty when it can.
     */
    static Optional<String> unusableManifest(Path file) {
        try {
            long size = Files.size(file);
            if (size > Manifests.MAX_BYTES) {
                return Optional.of("manifest " + file + " is " + size + " bytes (gpuctl reads at most 16 MiB)");
            }
            ManifestObjects.objects(ManifestObjects.text(Files.readAllBytes(file), "manifest " + file), "manifest " + file);
            return Optional.empty();
        } catch (HostConfException e) {
            return Optional.of(e.getMessage());
        } catch (IOException | RuntimeException e) {
            return Optional.of("cannot read manifest " + file + ": " + (e.getMessage() == null ? e.toString() : e.getMessage()));
        }
    }

    /**
     * A manifest: an http:// or https:// URL, or else a local file, which must exist and be a
     * regular file (relative to the inventory's directory) of at most 16 MiB of UTF-8 YAML.
     */
    Optional<ManifestRef> manifest(ScalarNode node, String path) {
        String text = node.getValue();
        var scheme = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*)://.*", Pattern.DOTALL)
            .matcher(text);
        if (scheme.matches()) {
            String name = scheme.group(1).toLowerCase(Locale.ROOT);
            if (!name.equals("http") && !name.equals("https")) {
                problems.at(node, path + ": unsupported URL scheme '" + scheme.group(1)
                    + "' (expected an http:// or https:// URL, or a local file)");
                return Optional.empty();
            }
            try {
                URI uri = new URI(text);
                if (uri.getHost() == null || uri.getHost().isEmpty()) throw new URISyntaxException(text, "no host");
                return Optional.of(ManifestRef.ofUrl(text));
            } catch (URISyntaxException | IllegalArgumentException e) {
                problems.at(node, path + ": '" + Secrets.maskUrl(text) + "' is not a valid URL (expected e.g. https://example.com/manifest.yaml)");
                return Optional.empty();
            }
        }
        Optional<Path> file = path(node, path);
        if (file.isEmpty()) return Optional.empty();
        if (!Files.exists(file.get())) {
            problems.at(node, path + ": file " + file.get() + " does not exist"
                + " (expected an http(s) URL, or a local file relative to the inventory's directory)");
            return Optional.empty();
        }
        if (!Files.isRegularFile(file.get())) {
            problems.at(node, path + ": " + file.get() + " is not a regular file (expected a manifest file)");
            return Optional.empty();
        }
        Optional<String> unusable = unusableManifest(file.get());
        if (unusable.isPresent()) {
            problems.at(node, path + ": " + unusable.get());
            return Optional.empty();
        }
        return Optional.of(ManifestRef.ofFile(file.get()));
    }
}
