package dev.gpuctl.remote;

import dev.gpuctl.text.ShellWords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class ShellTest {
    static final List<String> NASTY = List.of("", "plain", "it's", "'", "''", "a'b'c", "$HOME", "${x:-y}", "$(id)",
        "`id`", "back\\slash", "\"double\"", "line1\nline2\n", "tab\there", "*", "; rm -rf /tmp/nothing-here", "!", "ünïcødé");

    /** Runs argv on this machine (sh is all the tests need) and returns stdout. */
    static String sh(String... argv) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        return out;
    }

    @Test
    void quotedWordSurvivesTheShell() throws Exception {
        for (String s : NASTY) {
            assertEquals(s, sh("sh", "-c", "printf %s " + ShellWords.quote(s)), "for: " + s);
        }
    }

    @Test
    void sshCommandRunsTheCommandVerbatimUnderTheLoginShell() throws Exception {
        // sshd hands the command line to the login shell with -c; sh -c stands in for it here
        String command = "printf '%s|' \"$0\" 'it'\"'\"'s' \"$(echo \\$HOME)\"; printf '\\n'; echo second line";
        assertEquals(sh("sh", "-c", command), sh("sh", "-c", Shell.sshCommand(command, true)));
        String multi = "a=1\nif [ \"$a\" = 1 ]; then echo \"one: $a\"; fi\necho 'end'";
        assertEquals("one: 1\nend\n", sh("sh", "-c", Shell.sshCommand(multi, true)));
    }

    @Test
    void nonRootGoesThroughSudoN() {
        assertEquals("sudo -n sh -c 'echo '\\''hi'\\'''", Shell.sshCommand("echo 'hi'", false));
        assertEquals("sh -c true", Shell.sshCommand("true", true));
        assertEquals(List.of("sudo", "-n", "sh", "-c", "echo $x"), Shell.localArgv("echo $x", false));
        assertEquals(List.of("sh", "-c", "echo $x"), Shell.localArgv("echo $x", true));
    }

    @Test
    void installCommandWritesBesideTheTargetAndRenames() {
        String c = Shell.installCommand("/tmp/.gpuctl-ab", "/etc/my file's.conf", "0640", "root:adm");
        assertEquals("if [ -L '/etc/my file'\\''s.conf' ] || [ -d '/etc/my file'\\''s.conf' ]; then"
            + " echo '/etc/my file'\\''s.conf is a symbolic link or a directory: not replacing it' >&2;"
            + " rm -f -- /tmp/.gpuctl-ab; exit 1; fi; "
            + "install -m 0640 -o root -g adm -- /tmp/.gpuctl-ab '/etc/my file'\\''s.conf.gpuctl-tmp'"
            + " && mv -fT -- '/etc/my file'\\''s.conf.gpuctl-tmp' '/etc/my file'\\''s.conf'; rc=$?;"
            + " rm -f -- /tmp/.gpuctl-ab '/etc/my file'\\''s.conf.gpuctl-tmp'; exit $rc", c);
        assertTrue(Shell.installCommand("/tmp/x", "/etc/a", "644", "root").contains("-m 644 -o root --"));
    }

    @Test
    void installCommandRefusesWhatWouldBreakIt() {
        assertThrows(IllegalArgumentException.class, () -> Shell.installCommand("/tmp/x", "etc/a", "0644", "root"));
        assertThrows(IllegalArgumentException.class, () -> Shell.installCommand("/tmp/x", "/etc/", "0644", "root"));
        assertThrows(IllegalArgumentException.class, () -> Shell.installCommand("/tmp/x", "/etc/a", "0948", "root"));
        assertThrows(IllegalArgumentException.class, () -> Shell.installCommand("/tmp/x", "/etc/a", "u+x", "root"));
        assertThrows(IllegalArgumentException.class, () -> Shell.installCommand("/tmp/x", "/etc/a", "0644", "root;id"));
        assertThrows(IllegalArgumentException.class, () -> Shell.installCommand("/tmp/x", "/etc/a", "0644", "a:b:c"));
        assertThrows(IllegalArgumentException.class, () -> ShellWords.quote("nul\0"));
    }
}
