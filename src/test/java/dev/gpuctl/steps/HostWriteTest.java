package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shell text of downloads and host-made files, run with this machine's sh (curl fetches file:// URLs): a checksum
 * mismatch stops with both hashes, a failing producer leaves the old file, a backup is made once, no temp file stays.
 */
class HostWriteTest {
    @TempDir Path dir;

    record Result(int exit, String out, String err) {}

    static Result sh(String command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("sh", "-c", dev.gpuctl.hostfiles.TestJournals.redirect(command)).redirectInput(new File("/dev/null")).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Result(p.waitFor(), out, err);
    }

    static final String EMPTY_SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    static String sha(Path f) throws Exception {
        return sh("sha256sum " + f).out().substring(0, 64);
    }

    @Test void aFetchedManifestIsCheckedAndInstalledThroughAPrivateTempDirectory() throws Exception {
        Path source = dir.resolve("plugin.yml");
        Files.writeString(source, "kind: DaemonSet\nmetadata: {annotations: {a: \"{{ .Values.x }}\"}}\n");
        Path target = dir.resolve("out/plugin.yaml");
        Files.createDirectories(target.getParent());
        String url = source.toUri().toString();

        Result ok = sh(Manifest.fetchCommand(url, Optional.of(sha(source)), target.toString()));
        assertEquals(0, ok.exit(), ok.toString());
        assertEquals(Files.readString(source), Files.readString(target));
        assertEquals("600\n", sh("stat -c %a " + target).out());
        assertEquals(1, sh("ls -A " + target.getParent()).out().lines().count(), "a temp file was left beside the manifest");

        Files.delete(target);
        Result bad = sh("export TMPDIR=" + dir + "; " + Manifest.fetchCommand(url, Optional.of(EMPTY_SHA), target.toString()));
        assertEquals(1, bad.exit(), bad.toString());
        assertEquals("sha256 mismatch for " + url + ": expected " + EMPTY_SHA + ", got " + sha(source) + "\n", bad.err());
        assertFalse(Files.exists(target), "a manifest that failed its check was installed");
        assertEquals("out\nplugin.yml\n", sh("ls " + dir).out(), "the download's temp directory was left");
    }

    /**
     * A URL's credentials reach curl in its configuration file (-K), never on its command line; the file, uploaded
     * beside the manifest, is gone after the fetch, and so is the private directory it was moved into.
     */
    @Test void aUrlsCredentialsGoThroughCurlsConfigurationNeverItsArgv() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path curl = bin.resolve("curl");
        // a curl that records its argv and the configuration it was given, and fetches "the manifest"
        Files.writeString(curl, "#!/bin/sh\nprintf '%s\\n' \"$*\" > " + dir.resolve("argv.log") + "\n"
            + "while [ $# -gt 0 ]; do case $1 in -o) o=$2; shift ;; -K) cp \"$2\" " + dir.resolve("conf.log") + " ;; esac; shift; done\n"
            + "printf 'apiVersion: v1\\n' > \"$o\"\n");
        assertTrue(curl.toFile().setExecutable(true));
        Path target = Files.createDirectories(dir.resolve("out")).resolve("plugin.yaml");
        String url = "https://ci:s3cr%22et@mirror.lab/plugin.yml";
        Files.writeString(Path.of(Manifest.curlConfigPath(target.toString())), HostWrite.curlConfig(url));
        String command = Manifest.fetchCommand(url, Optional.of(sha256("apiVersion: v1\n")), target.toString());
        assertFalse(command.contains("s3cr"), command);

        Result r = sh("export PATH=" + bin + ":$PATH TMPDIR=" + dir + "; " + command);
        assertEquals(0, r.exit(), r.toString());
        assertEquals("apiVersion: v1\n", Files.readString(target));
        String argv = Files.readString(dir.resolve("argv.log"));
        assertFalse(argv.contains("s3cr") || argv.contains("mirror.lab"), argv);
        assertTrue(argv.matches("-fsSL -o \\S+/manifest -K \\S+/curl.conf\\n"), argv);
        assertEquals("# written by gpuctl for one download, removed after it: the URL holds credentials\n"
            + "url = \"https://ci:s3cr%22et@mirror.lab/plugin.yml\"\n", Files.readString(dir.resolve("conf.log")));
        assertEquals("plugin.yaml\n", sh("ls -A " + target.getParent()).out(), "the configuration was left beside the manifest");
        assertEquals("argv.log\nbin\nconf.log\nout\n", sh("ls " + dir).out(), "the download's private directory was left");
        assertEquals("# written by gpuctl for one download, removed after it: the URL holds credentials\n"
            + "url = \"https://a\\\\b\\\"c\"\n", HostWrite.curlConfig("https://a\\b\"c"), "curl's quoting: \\\\ and \\\"");
    }

    static String sha256(String text) throws Exception {
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    @Test void aFailedDownloadInstallsNothing() throws Exception {
        Path target = dir.resolve("m.yaml");
        Result r = sh(Manifest.fetchCommand(dir.resolve("missing.yml").toUri().toString(), Optional.empty(), target.toString()));
        assertTrue(r.exit() != 0, r.toString());
        assertFalse(Files.exists(target));
    }

    @Test void plainHttpOrCredentialsWithoutAChecksumAreRefusedOnTheHostToo() throws Exception {
        Result r = sh(Manifest.fetchCommand("http://ci:t0ken@mirror.lab/x.yml", Optional.empty(), dir.resolve("m").toString()));
        assertEquals(1, r.exit());
        assertEquals("refusing to fetch http://ci:***@mirror.lab/x.yml: a URL with credentials in it (user:password@)"
            + " needs a sha256 (give { url: ..., sha256: ... } in the inventory)\n", r.err());
        assertFalse(Manifest.fetchCommand("http://ci:t0ken@mirror.lab/x.yml", Optional.empty(), "/m").contains("curl"));
    }

    @Test void aFileMadeByACommandIsBackedUpOnceAndReplacedOnlyWhenTheCommandSucceeds() throws Exception {
        Path conf = dir.resolve("config.toml");
        Files.writeString(conf, "site\n");
        sh("chmod 0640 " + conf);

        Result failed = sh(HostWrite.replaceWithOutput(conf.toString(), "echo half; false", "0644"));
        assertEquals(1, failed.exit());
        assertEquals("site\n", Files.readString(conf), "a failing producer replaced the file");

        assertEquals(0, sh(HostWrite.replaceWithOutput(conf.toString(), "echo 'version = 2'", "0644")).exit());
        assertEquals("version = 2\n", Files.readString(conf));
        assertEquals("644\n", sh("stat -c %a " + conf).out());
        assertEquals("site\n", Files.readString(dir.resolve("config.toml.gpuctl-orig")));
        assertEquals("640\n", sh("stat -c %a " + dir.resolve("config.toml.gpuctl-orig")).out());

        assertEquals(0, sh(HostWrite.replaceWithOutput(conf.toString(), "echo 'version = 3'", "0644")).exit());
        assertEquals("site\n", Files.readString(dir.resolve("config.toml.gpuctl-orig")), "the backup was overwritten");
        assertEquals("config.toml\nconfig.toml.gpuctl-orig\n", sh("ls " + dir).out(), "a temp file was left");
    }

    @Test void theChecksumCommandNamesBothHashesAndHidesCredentials() throws Exception {
        Path f = dir.resolve("f");
        Files.writeString(f, "");
        assertEquals(0, sh(HostWrite.sha256Check(f.toString(), EMPTY_SHA, "x") + "echo fine").exit());
        Files.writeString(f, "x");
        Result r = sh(HostWrite.sha256Check(f.toString(), EMPTY_SHA, "https://u:p@h/it's.yml") + "echo not reached");
        assertEquals(1, r.exit());
        assertEquals("", r.out());
        assertEquals("sha256 mismatch for https://u:***@h/it's.yml: expected " + EMPTY_SHA + ", got " + sha(f) + "\n", r.err());
    }
}
