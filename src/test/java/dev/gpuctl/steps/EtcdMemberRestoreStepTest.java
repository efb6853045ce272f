package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.backup.EtcdRestore;
import dev.gpuctl.step.Sh;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Each master's part of a whole control plane's restore: its own member's flags, one --initial-cluster for all. */
class EtcdMemberRestoreStepTest {
    static final String SHA = "a".repeat(64);
    static final String UP = "b".repeat(64);
    static final List<EtcdRestore.Member> THREE = List.of(EtcdRestore.Member.of("m1", "10.0.0.11"),
        EtcdRestore.Member.of("m2", "10.0.0.12"), EtcdRestore.Member.of("m3", "10.0.0.13"));

    @Test void eachMemberRestoresTheSnapshotWithItsNameAndUrlAndTheSameClusterAndToken() {
        String cluster = EtcdRestore.initialCluster(THREE);
        String m2 = EtcdMemberRestoreStep.script(UP, SHA, THREE.get(1), cluster, EtcdRestore.token(SHA));
        String m3 = EtcdMemberRestoreStep.script(UP, SHA, THREE.get(2), cluster, EtcdRestore.token(SHA));
        for (String s : List.of(m2, m3)) {
            assertTrue(s.contains("etcdutl snapshot restore \"$d/x/" + dev.gpuctl.backup.BackupArchive.SNAPSHOT + "\""), s);
            assertTrue(s.contains(" --initial-cluster " + ShellWords.quote(cluster) + " --initial-cluster-token " + ShellWords.quote("gpuctl-restore-aaaaaaaaaaaaaaaa")), s);
            assertTrue(s.contains(" --data-dir /var/lib/etcd.gpuctl-new"), s);
        }
        assertTrue(m2.contains(" --name " + ShellWords.quote("m2") + " ") && m2.contains("--initial-advertise-peer-urls " + ShellWords.quote("https://10.0.0.12:2380")), m2);
        assertTrue(m3.contains(" --name " + ShellWords.quote("m3") + " ") && m3.contains("--initial-advertise-peer-urls " + ShellWords.quote("https://10.0.0.13:2380")), m3);
    }

    @Test void theUploadIsCheckedBeforeTheOldDataMovesAsideAndTheManifestsComeBackLast() {
        String s = EtcdMemberRestoreStep.script(UP, SHA, THREE.get(0), EtcdRestore.initialCluster(THREE), EtcdRestore.token(SHA));
        int sum = s.indexOf("echo '" + UP + "  '\"$d/a.tar.gz\" | sha256sum -c");
        int restore = s.indexOf("etcdutl snapshot restore");
        int aside = s.indexOf("mv /var/lib/etcd \"$aside/var-lib-etcd\"");
        int back = s.indexOf("mv \"$aside\"/manifests-running/*.yaml /etc/kubernetes/manifests/");
        int marker = s.indexOf("echo " + SHA + " >" + RestoreStep.MARKER);
        assertTrue(sum > 0 && sum < restore && restore < aside && aside < back && back < marker, s);
        assertTrue(s.contains("if [ -e \"$aside/var-lib-etcd\" ]; then rm -rf /var/lib/etcd; elif"), "a cut-off run never moves the old data twice: " + s);
        assertFalse(s.contains("sleep") || s.contains("while"), "the waits are the engine's: " + s);
    }

    @Test void aStoppedOrRestoredMasterIsNotStoppedAgain() {
        assertTrue(RestoreStopStep.stoppedOrRestored("stopped\n"));
        assertTrue(RestoreStopStep.stoppedOrRestored("restored\n"));
        assertFalse(RestoreStopStep.stoppedOrRestored("running\n"));
        assertFalse(RestoreStopStep.stoppedOrRestored(""));
    }

    @Test void aNameOrUrlTwiceIsRefusedBeforeAnyHost() {
        List<EtcdRestore.Member> twice = List.of(THREE.get(0), THREE.get(0));
        assertEquals("member m1 named twice", org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> new EtcdMemberRestoreStep(UP, SHA, twice)).getMessage());
    }
}
