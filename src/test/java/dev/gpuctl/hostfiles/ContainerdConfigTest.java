package dev.gpuctl.hostfiles;

import dev.gpuctl.text.Fixtures;
import dev.gpuctl.text.HostConfException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ContainerdConfigTest {

    private static final String V2 = Fixtures.read("containerd/config-v2-default.toml");
    private static final String V3 = Fixtures.read("containerd/config-v3-default.toml");

    @Test
    void v2FalseBecomesTrueAndNothingElseChanges() {
        String out = ContainerdConfig.ensureSystemdCgroup(V2);
        assertEquals(V2.replace("            SystemdCgroup = false", "            SystemdCgroup = true"), out);
        assertTrue(ContainerdConfig.hasSystemdCgroup(out));
        assertFalse(ContainerdConfig.hasSystemdCgroup(V2));
    }

    @Test
    void v3MissingKeyIsAddedAsFirstKeyWithTheTablesIndentation() {
        String out = ContainerdConfig.ensureSystemdCgroup(V3);
        String header = "          [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n";
        assertEquals(V3.replace(header, header + "            SystemdCgroup = true\n"), out);
    }

    @Test
    void idempotentOnBothVersions() {
        for (String in : new String[]{V2, V3}) {
            String once = ContainerdConfig.ensureSystemdCgroup(in);
            assertEquals(once, ContainerdConfig.ensureSystemdCgroup(once));
            assertTrue(ContainerdConfig.hasSystemdCgroup(once));
        }
    }

    @Test
    void alreadyTrueIsReturnedUnchanged() {
        String in = "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
                + "  SystemdCgroup = true  # kubelet uses systemd\n";
        assertEquals(in, ContainerdConfig.ensureSystemdCgroup(in));
    }

    @Test
    void trailingCommentAndSpacingAreKept() {
        String in = "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
                + "\tSystemdCgroup=false # set by someone\n";
        assertEquals(in.replace("=false", "=true"), ContainerdConfig.ensureSystemdCgroup(in));
    }

    @Test
    void missingTableIsAppendedForItsVersion() {
        assertEquals("version = 2\n\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
                + "  SystemdCgroup = true\n", ContainerdConfig.ensureSystemdCgroup("version = 2\n"));
        assertEquals("version = 3\nroot = '/x'\n\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n"
                + "  SystemdCgroup = true\n", ContainerdConfig.ensureSystemdCgroup("version = 3\nroot = '/x'"));
    }

    @Test
    void theOtherVersionsTableIsNotTheRightOne() {
        // a v3 file with a v2-style table: containerd 2 would ignore that table, so gpuctl adds the v3 one
        String in = "version = 3\n\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.kata.options]\n  X = 1\n";
        String out = ContainerdConfig.ensureSystemdCgroup(in);
        assertTrue(out.startsWith(in), out);
        assertTrue(out.endsWith("[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n"
                + "  SystemdCgroup = true\n"), out);
    }

    @Test
    void headersMatchWithEitherQuoteAndBlanks() {
        String in = "version = 2\n[ plugins . 'io.containerd.grpc.v1.cri' . containerd.runtimes.runc.options ]\n"
                + "  SystemdCgroup = false\n";
        assertEquals(in.replace("false", "true"), ContainerdConfig.ensureSystemdCgroup(in));
    }

    @Test
    void onlyTheRuncOptionsTableIsEdited() {
        String in = "version = 2\n"
                + "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n  BinaryName = \"\"\n"
                + "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia]\n  runtime_type = \"io.containerd.runc.v2\"\n";
        String out = ContainerdConfig.ensureSystemdCgroup(in);
        assertEquals(in.replace("  BinaryName = \"\"\n", "  SystemdCgroup = true\n  BinaryName = \"\"\n"), out);
    }

    @Test
    void crlfFileKeepsItsLineEnds() {
        String in = "version = 2\r\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\r\n"
                + "  SystemdCgroup = false\r\n";
        assertEquals(in.replace("false", "true"), ContainerdConfig.ensureSystemdCgroup(in));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "",
            "disabled_plugins = [\"cri\"]\n",
            "#version = 2\n[plugins]\n",
            "[plugins]\nversion = 2\n",
    })
    void noVersionIsRefusedWithAdvice(String in) {
        HostConfException e = assertThrows(HostConfException.class, () -> ContainerdConfig.ensureSystemdCgroup(in));
        assertTrue(e.getMessage().contains("containerd config default"), e.getMessage());
    }

    @Test
    void otherVersionsAreRefused() {
        HostConfException e = assertThrows(HostConfException.class,
                () -> ContainerdConfig.ensureSystemdCgroup("version = 1\n"));
        assertTrue(e.getMessage().contains("version = 1"), e.getMessage());
        assertThrows(HostConfException.class, () -> ContainerdConfig.ensureSystemdCgroup("version = 4\n"));
    }

    @Test
    void inlineOrDottedOptionsAreRefusedNotDuplicated() {
        String inline = "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
                + "  options = { SystemdCgroup = false }\n";
        assertThrows(HostConfException.class, () -> ContainerdConfig.ensureSystemdCgroup(inline));
        String dotted = "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n"
                + "  options.BinaryName = ''\n";
        assertThrows(HostConfException.class, () -> ContainerdConfig.ensureSystemdCgroup(dotted));
        String elsewhere = "version = 2\n[plugins]\n  \"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options.SystemdCgroup = true\n";
        HostConfException e = assertThrows(HostConfException.class, () -> ContainerdConfig.ensureSystemdCgroup(elsewhere));
        assertTrue(e.getMessage().contains("line 3"), e.getMessage());
    }

    @Test
    void anotherRuntimesSystemdCgroupIsLeftAlone() {
        // nvidia-ctk runtime configure copies runc's options, SystemdCgroup included, to the nvidia runtime
        String in = "version = 2\n"
                + "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia.options]\n  SystemdCgroup = false\n"
                + "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n  SystemdCgroup = false\n";
        String out = ContainerdConfig.ensureSystemdCgroup(in);
        assertEquals("version = 2\n"
                + "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia.options]\n  SystemdCgroup = false\n"
                + "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n  SystemdCgroup = true\n", out);
    }

    @Test
    void commentsMentioningTheKeyAreFine() {
        String in = "version = 2\n# SystemdCgroup is set below\n"
                + "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n  SystemdCgroup = false\n";
        assertEquals(in.replace("= false", "= true"), ContainerdConfig.ensureSystemdCgroup(in));
    }

    @Test
    void duplicateTableIsRefused() {
        String t = "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n";
        assertThrows(HostConfException.class,
                () -> ContainerdConfig.ensureSystemdCgroup("version = 2\n" + t + "  A = 1\n" + t + "  B = 2\n"));
    }

    @Test
    void oddValueIsRefused() {
        String in = "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
                + "  SystemdCgroup = \"true\"\n";
        assertThrows(HostConfException.class, () -> ContainerdConfig.ensureSystemdCgroup(in));
    }
}
