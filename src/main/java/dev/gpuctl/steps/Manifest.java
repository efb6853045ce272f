package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.ManifestObjects;
import dev.gpuctl.inventory.ManifestRef;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Puts a manifest on the master and applies it: a local file is patched here and uploaded; a URL is fetched
 * on the master and patched there. Applying is skipped when {@code kubectl diff} finds nothing to change.
 */
final class Manifest {
    private Manifest() {}

    /** Where the manifest lives on the master: named after its source, so a new source is a new file. */
    static String remotePath(String name, ManifestRef ref) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(key(ref).getBytes(StandardCharsets.UTF_8));
            return Kube.DIR + "/" + name + "-" + HexFormat.of().formatHex(d, 0, 4) + ".yaml";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A local file is known by its name (so the plan is the same wherever the inventory lives), a URL by itself and
     * its sha256 when given (a new checksum is a new file).
     */
    private static String key(ManifestRef ref) {
        if (ref.isFile()) return "file:" + ref.file().getFileName();
        return ref.url() + ref.checksum().map(h -> " sha256:" + h).orElse("");
    }

    static String readLocal(ManifestRef ref) {
        try {
            return Files.readString(ref.file(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read manifest " + ref.file(), e);
        }
    }

    /** Ops that place the (patched) manifest at {@code path} on the master. */
    static List<Op> place(String what, ManifestRef ref, String path, String rule, UnaryOperator<String> patch) {
        List<Op> ops = new ArrayList<>();
        ops.add(Op.Run.of("gpuctl's directory", "install -d -m 0700 " + Kube.DIR).unless("test -d " + Kube.DIR));
        if (ref.isFile()) {
            String content = patch.apply(readLocal(ref));
            List<String> objects = ManifestObjects.objects(content, "manifest " + ref.file()).stream().map(ManifestObjects.KubeObject::label).toList();
            ops.add(Op.WriteFile.manifest(what + " (from " + ref.file().getFileName() + (rule.isEmpty() ? "" : ", " + rule) + ")",
                path, content, "0600", objects));
        } else {
            String url = ref.url().toString();
            if (ref.url().getRawUserInfo() != null && ref.checksum().isPresent()) {
                // the credentials go to curl in a root-only file, never on a command line (ps shows argv to every user)
                ops.add(Op.WriteFile.literal("curl's configuration for " + what + " (the URL's credentials; moved into the fetch's"
                    + " private directory and removed with it)", curlConfigPath(path), HostWrite.curlConfig(url), "0600")
                    .asSecret().unless("test -s " + path));
            }
            ops.add(Op.Run.of("fetch " + what + " from " + ref + ref.checksum().map(h -> " (sha256 " + h + ")").orElse(""),
                    fetchCommand(url, ref.checksum(), path))
                .unless("test -s " + path).changing(path).journalling(Sh.journalWrite(path)));
            if (!rule.isEmpty()) ops.add(new Op.EditFile(what + ": " + rule, path, rule, patch, "0600"));
        }
        return ops;
    }

    /**
     * Fetches {@code url} into a fresh private directory (removed on every way out; a URL with credentials through the
     * curl configuration at {@link #curlConfigPath}, never on curl's command line), checks it against
     * {@code sha256} when given (a mismatch stops the command naming both hashes), and installs it at {@code path}
     * through a temp file beside it and a rename (0600). A URL that needs a checksum (plain http, credentials in it)
     * and has none is refused: the inventory loader refuses it first; this holds derived URLs (Calico's operator
     * beside its custom resources) to the same rule.
     */
    static String fetchCommand(String url, Optional<String> sha256, String path) {
        Optional<String> unsafe = HostWrite.needsChecksum(url);
        if (unsafe.isPresent() && sha256.isEmpty()) {
            return "echo " + ShellWords.quote("refusing to fetch " + HostWrite.withoutCredentials(url) + ": " + unsafe.get()
                + " needs a sha256 (give { url: ..., sha256: ... } in the inventory)") + " >&2; exit 1";
        }
        String get = URI.create(url).getRawUserInfo() == null ? HostWrite.download(url, "manifest", sha256)
            : HostWrite.downloadWithConfig(curlConfigPath(path), url, "manifest", sha256);
        return HostWrite.TEMP_DIR + get + HostWrite.install("\"$d/manifest\"", path, "0600");
    }

    /**
     * Where the curl configuration of a URL with credentials is uploaded (0600, in gpuctl's root-only directory) before
     * {@link #fetchCommand} moves it into its private directory and reads it.
     */
    static String curlConfigPath(String path) { return path + ".curl"; }

    static Op.Run apply(String what, String path) {
        return Op.Run.of("apply " + what, Kube.kubectl("apply -f " + path)).unlessRight(applied(what, path));
    }

    static Probe applied(String what, String path) {
        return Probe.of(what + " applied and unchanged (kubectl diff)",
            "if [ -s " + path + " ]; then " + Kube.kubectl("diff -f " + path) + " >/dev/null 2>&1; echo $?; else echo missing; fi",
            r -> switch (r.stdout().strip()) {
                case "0" -> Optional.empty();
                case "1" -> Optional.of("the cluster differs from " + path);
                case "missing" -> Optional.of(path + " is not on the master yet");
                case "127" -> Optional.of("kubectl is not installed");
                default -> Optional.of("kubectl diff failed (exit " + r.stdout().strip() + "): is the API server up?");
            });
    }
}
