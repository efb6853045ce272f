package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Probe;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RestoreStepTest {
    @Test void everyNodeMustBeReady() {
        assertEquals(Optional.empty(), RestoreStep.notReady("h0   Ready   control-plane   1h   v1.35.0\nh1   Ready   <none>   1h   v1.35.0\n", true));
        assertEquals(Optional.of("not Ready: h1 NotReady"),
            RestoreStep.notReady("h0   Ready   control-plane   1h   v1.35.0\nh1   NotReady   <none>   1h   v1.35.0\n", true));
        assertEquals(Optional.of("no nodes yet"), RestoreStep.notReady("", true));
        assertTrue(RestoreStep.notReady("The connection to the server 10.0.0.1:6443 was refused", false).orElseThrow()
            .startsWith("kubectl get nodes failed: The connection"));
    }

    @Test void aHealthyClusterIsOnlyAnApiServerThatSaysOk() {
        assertTrue(RestoreGuardStep.healthy("ok\n"));
        assertFalse(RestoreGuardStep.healthy(""));
        assertFalse(RestoreGuardStep.healthy("The connection to the server 10.0.0.1:6443 was refused - did you specify the right host or port?"));
    }

    @Test void theScriptChecksTheSumFirstMovesTheOldStateAsideAndRestoresIntoAFreshDataDir() {
        String sha = "a".repeat(64);
        String up = "b".repeat(64);
        String first = RestoreStep.stopScript(up, sha);
        int firstSum = first.indexOf("echo '" + up + "  '\"$b\" | sha256sum -c");
        int status = first.indexOf("etcdutl snapshot status");
        assertTrue(firstSum > 0 && firstSum < status && status < first.indexOf("mv /etc/kubernetes/manifests"),
            "the upload and its snapshot are checked before anything stops: " + first);
        assertTrue(first.contains("trap 'rm -rf -- \"$d\"; [ $ok = 1 ] || rm -f -- \"$b\"' EXIT"), "the upload is removed when the first part fails: " + first);
        assertTrue(first.contains("echo \"$aside\" >/var/backups/gpuctl-restoring"), first);
        assertFalse(first.contains("sleep") || first.contains("while"), "the wait for the control plane to stop is the engine's: " + first);

        Probe stopped = RestoreStep.stopped(sha, "unix:///var/run/cri-dockerd.sock");
        assertTrue(stopped.command().contains("crictl --runtime-endpoint unix:///var/run/cri-dockerd.sock ps --name '^(etcd|kube-apiserver)$' -q"), stopped.command());
        assertEquals(RestoreStep.STOP_WAIT, stopped.waitUpTo());
        assertEquals(Optional.empty(), stopped.judge().apply(new ExecResult(0, "", ""), new Facts()));
        assertEquals(Optional.empty(), stopped.judge().apply(new ExecResult(0, "restored\n", ""), new Facts()), "already restored: nothing was stopped");
        assertTrue(stopped.judge().apply(new ExecResult(0, "3f2a9c\n", ""), new Facts()).orElseThrow().startsWith("the control plane still runs"));

        String s = RestoreStep.script(up, sha);
        assertTrue(s.contains("echo '" + up + "  '\"$d/a.tar.gz\" | sha256sum -c"), "the upload is checked against its own sum: " + s);
        assertTrue(s.contains("tar -xzpf \"$d/a.tar.gz\" -C / --no-same-owner --exclude=etcd-snapshot.db"), s);
        assertTrue(s.indexOf("ln -s -- \"$n\" \"$c\"") > s.indexOf("tar -xzpf"), "the kubelet's current-certificate link made again: " + s);
        int sum = s.indexOf("sha256sum -c");
        int stop = s.indexOf("systemctl stop kubelet");
        int restore = s.indexOf("etcdutl snapshot restore");
        assertTrue(sum > 0 && sum < stop && stop < restore, s);
        assertTrue(s.contains("aside=$(cat /var/backups/gpuctl-restoring"), "the directory the first part made: " + s);
        assertTrue(s.contains("--data-dir /var/lib/etcd.gpuctl-new"), s);
        assertTrue(s.contains("mv /var/lib/etcd \"$aside/var-lib-etcd\""), "the old data is moved aside, never deleted: " + s);
        assertTrue(s.contains("trap 'rm -rf -- \"$d\" \"$b\"' EXIT"), "the work directory and the upload are removed however it ends");
        assertTrue(s.contains("echo " + sha + " >/etc/kubernetes/gpuctl/restored-from; rm -f /var/backups/gpuctl-restoring"), s);
    }
}
