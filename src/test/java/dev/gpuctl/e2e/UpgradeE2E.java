package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * gpuctl upgrade on a 1+2 bed bootstrapped at 1.34 (the bed's repository has 1.34.2, 1.35.0 and 1.35.1), with a GPU
 * Job running on the first worker: bootstrap refuses the raised version and changes nothing; upgrade moves the API
 * server and every kubelet to 1.35 but waits for the Job's node, names it and leaves it; --force finishes it; a
 * re-run changes nothing; a skipped minor and a downgrade are refused. The tests share one cluster, in order.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class UpgradeE2E {
    static final String KUBECTL = "kubectl --kubeconfig=/etc/kubernetes/admin.conf ";
    /** Per host: its packages and holds, the pin, the kubelet's config and the control plane's manifests. */
    static final String STATE = "dpkg-query -W kubelet kubeadm kubectl; apt-mark showhold; cat /etc/apt/preferences.d/gpuctl-kubernetes;"
        + " sha256sum /var/lib/kubelet/config.yaml /etc/kubernetes/manifests/*.yaml 2>/dev/null; true";
    static TestBed bed;
    static Path at134;
    static Path at135;
    static String master;
    static String w1;
    static String w2;
    /** A kubeconfig of the user's that {@code gpuctl kubeconfig --merge} wrote into before the upgrade. */
    static Path merged;
    /** admin.conf's client certificate before the upgrade (kubeadm upgrade apply renews it). */
    static String adminCertBefore;

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() throws IOException {
        bed = TestBed.own("up", 2);
        master = bed.master();
        w1 = bed.workers().get(0);
        w2 = bed.workers().get(1);
        bed.ok(w2, "echo 2 > /etc/gpuctl-testbed/gpus");
        at135 = bed.inventory("docker", "flannel");
        String text = Files.readString(at135);
        assertTrue(text.contains("kubernetesVersion: \"1.35\""), text);
        at134 = at135.resolveSibling("inventory-134.yaml");
        Files.writeString(at134, text.replace("kubernetesVersion: \"1.35\"", "kubernetesVersion: \"1.34\""));
        Gpuctl.Run r = Gpuctl.run("bootstrap", at134.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals("v1.34.2", bed.ok(master, KUBECTL + "version -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"serverVersion\"][\"gitVersion\"])'").strip());
        // a training run on w1 holding its GPU for 15 minutes
        bed.ok(master, "cat <<'EOF' | " + KUBECTL + "apply -f -\napiVersion: batch/v1\nkind: Job\nmetadata: {name: train-42, namespace: default}\n"
            + "spec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      nodeSelector: {kubernetes.io/hostname: " + w1 + "}\n"
            + "      containers:\n      - name: train\n        image: nvcr.io/nvidia/pytorch:25.01-py3\n        command: [sleep, \"900\"]\n"
            + "        resources: {limits: {nvidia.com/gpu: 1}}\nEOF");
        merged = Files.createTempDirectory("gpuctl-upgrade-kube").resolve("config");
        Gpuctl.Run m = Gpuctl.run("kubeconfig", "--merge", "--kubeconfig", merged.toString(), at134.toString());
        assertEquals(0, m.code(), m::toString);
        adminCertBefore = clientCertificate(bed.ok(master, "cat /etc/kubernetes/admin.conf"));
        assertTrue(Files.readString(merged).contains(adminCertBefore));
        bed.ok(master, "for i in $(seq 60); do " + KUBECTL + "get pods -l job-name=train-42 -o jsonpath='{.items[0].status.phase}' | grep -q Running && exit 0; sleep 1; done; exit 1");
    }

    /** The client-certificate-data of a kubeconfig's (only) user. */
    static String clientCertificate(String kubeconfig) {
        return kubeconfig.lines().map(String::strip).filter(l -> l.startsWith("client-certificate-data:")).findFirst().orElseThrow()
            .substring("client-certificate-data:".length()).strip();
    }

    static String kubeletVersions() {
        return bed.ok(master, KUBECTL + "get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.nodeInfo.kubeletVersion}"
            + " {.spec.unschedulable} {.status.allocatable.nvidia\\.com/gpu}{\"\\n\"}{end}'");
    }

    @SuppressWarnings("unchecked")
    static String clusterName() {
        try {
            Map<String, Object> inv = new org.yaml.snakeyaml.Yaml().load(Files.readString(at135));
            return ((Map<String, Object>) inv.get("cluster")).get("name").toString();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test @Order(1) void bootstrapRefusesTheRaisedVersionAndChangesNothing() {
        Map<String, String> before = bed.fingerprints(STATE);
        Gpuctl.Run r = Gpuctl.run("bootstrap", at135.toString());
        assertEquals(3, r.code(), r::toString);
        assertTrue(r.err().contains("the cluster runs v1.34.2; the inventory asks for 1.35: run `gpuctl upgrade`"), r::toString);
        assertEquals(before, bed.fingerprints(STATE), "a refused bootstrap changed a host");
    }

    @Test @Order(2) void aSkippedMinorAndADowngradeAreRefusedBeforeAnyChange() {
        Map<String, String> before = bed.fingerprints(STATE);
        Gpuctl.Run skip = Gpuctl.run("upgrade", "--to", "1.36", at134.toString());
        assertEquals(3, skip.code(), skip::toString);
        assertTrue(skip.err().contains("the cluster runs v1.34.2; 1.36 is 2 minors ahead: kubeadm upgrades one minor at a time; run"
            + " `gpuctl upgrade --to 1.35`, then `gpuctl upgrade --to 1.36`"), skip::toString);
        Gpuctl.Run down = Gpuctl.run("upgrade", "--to", "1.33", at134.toString());
        assertEquals(3, down.code(), down::toString);
        assertTrue(down.err().contains("the cluster runs v1.34.2; 1.33 is older: a downgrade is refused"), down::toString);
        assertEquals(before, bed.fingerprints(STATE), "a refused upgrade changed a host");
    }

    @Test @Order(3) void upgradeMovesEveryNodeButWaitsForTheJobsNodeAndNamesIt() {
        Gpuctl.Run r = Gpuctl.run("upgrade", "--drain-timeout", "15s", at135.toString());
        assertEquals(1, r.code(), r::toString);
        assertTrue(r.err().contains(w1 + ": still runs default/train-") && r.err().contains("--force"), r::toString);
        // the control plane: manifest image, /version, kubeadm-config, the old manifests backed up
        assertTrue(bed.ok(master, "grep 'image:' /etc/kubernetes/manifests/kube-apiserver.yaml").contains("kube-apiserver:v1.35.1"));
        assertTrue(bed.ok(master, KUBECTL + "version -o json").contains("\"gitVersion\": \"v1.35.1\"")
            || bed.ok(master, KUBECTL + "version -o json").contains("\"gitVersion\":\"v1.35.1\""));
        assertTrue(bed.ok(master, KUBECTL + "-n kube-system get configmap kubeadm-config -o jsonpath='{.data.ClusterConfiguration}'")
            .contains("kubernetesVersion: v1.35.1"));
        assertTrue(bed.ok(master, "grep -l 'kube-apiserver:v1.34.2' /etc/kubernetes/tmp/kubeadm-backup-manifests-*/kube-apiserver.yaml").contains("kube-apiserver.yaml"));
        // the control-plane backup, on the laptop, 0600
        try (var files = Files.list(at135.resolveSibling(".gpuctl").resolve("backups"))) {
            assertTrue(files.anyMatch(p -> p.toString().endsWith(".tar.gz")), "a backup before the first change");
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        List<String> nodes = kubeletVersions().lines().map(String::strip).toList();
        assertTrue(nodes.contains(master + "=v1.35.1"), nodes::toString);
        assertTrue(nodes.contains(w2 + "=v1.35.1  2"), "w2 upgraded, uncordoned, both GPUs allocatable\n" + nodes);
        assertTrue(nodes.contains(w1 + "=v1.34.2  1"), "w1 left at 1.34 and uncordoned while its Job runs\n" + nodes);
        assertEquals("Running", bed.ok(master, KUBECTL + "get pods -l job-name=train-42 -o jsonpath='{.items[0].status.phase}'").strip(),
            "the GPU job was never killed");
        assertTrue(bed.ok(w2, "kubelet --version; kubectl version --client; apt-mark showhold; cat /etc/apt/preferences.d/gpuctl-kubernetes")
            .matches("(?s)Kubernetes v1\\.35\\.1\\n.*Client Version: v1\\.35\\.1.*kubeadm\\nkubectl\\nkubelet\\n.*Pin: version 1\\.35\\.\\*.*"));
        assertTrue(bed.ok(w2, "ls /etc/kubernetes/tmp/").contains("kubeadm-kubelet-config"), "kubeadm upgrade node backed the kubelet config up");
    }

    /** A run that fails on a worker mid-batch (its package source broken after the drain) is resumed by running it again. */
    @Test @Order(4) void aFailedRunStopsOnTheWorkerAndTheRerunResumesIt() {
        bed.ok(w1, "echo 'deb [trusted=yes] file:/srv/no-such-repo ./' > /etc/apt/sources.list.d/broken.list");
        Gpuctl.Run failed;
        try {
            failed = Gpuctl.run("upgrade", "--force", "--drain-timeout", "30s", at135.toString());
        } finally {
            bed.ok(w1, "rm -f /etc/apt/sources.list.d/broken.list");
        }
        assertEquals(1, failed.code(), failed::toString);
        assertTrue(failed.err().contains(w1) && failed.err().contains("kubeadm") && failed.err().contains("apt-get"), failed::toString);
        assertTrue(failed.err().contains("run upgrade again"), failed::toString);
        List<String> nodes = kubeletVersions().lines().map(String::strip).toList();
        assertTrue(nodes.contains(w1 + "=v1.34.2 true 1"), "w1 drained (cordoned) and not upgraded\n" + nodes);
    }

    @Test @Order(5) void forceEvictsTheJobAndFinishesThenARerunChangesNothing() {
        Gpuctl.Run r = Gpuctl.run("upgrade", "--force", "--drain-timeout", "30s", at135.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("upgrade complete: every node at 1.35"), r::toString);
        List<String> nodes = kubeletVersions().lines().map(String::strip).toList();
        assertEquals(List.of(master + "=v1.35.1", w1 + "=v1.35.1  1", w2 + "=v1.35.1  2"), nodes.stream().sorted().toList(),
            "every kubelet at 1.35, uncordoned, every GPU allocatable");
        assertTrue(bed.ok(w1, "kubelet --version").contains("v1.35.1"));

        // kubeadm upgrade apply renewed admin.conf's client certificate: every copy follows, and verify is clean at once
        String adminConf = bed.ok(master, "cat /etc/kubernetes/admin.conf");
        String renewed = clientCertificate(adminConf);
        assertNotEquals(adminCertBefore, renewed, "kubeadm upgrade apply renewed admin.conf's client certificate");
        bed.ok(master, "cmp /etc/kubernetes/admin.conf /root/.kube/config");
        try {
            String laptop = Files.readString(at135.resolveSibling(".gpuctl").resolve(clusterName()).resolve("admin.conf"));
            assertEquals(renewed, clientCertificate(laptop), "this machine's copy holds the renewed certificate");
            String mergedNow = Files.readString(merged);
            assertTrue(mergedNow.contains(renewed) && !mergedNow.contains(adminCertBefore), "the merged kubeconfig refreshed\n" + mergedNow);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        Gpuctl.Run verify = Gpuctl.run("verify", at135.toString());
        assertEquals(0, verify.code(), "verify right after the upgrade\n" + verify);

        Map<String, String> before = bed.fingerprints(STATE);
        Gpuctl.Run again = Gpuctl.run("upgrade", at135.toString());
        assertEquals(0, again.code(), again::toString);
        assertTrue(again.out().contains("nothing to upgrade: every node is at 1.35"), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
        assertEquals(before, bed.fingerprints(STATE), "a second upgrade changed a host");
        assertFalse(again.err().contains("FAILED"), again::toString);

        Gpuctl.Run boot = Gpuctl.run("bootstrap", at135.toString());
        assertEquals(0, boot.code(), boot::toString);
        assertEquals(0, boot.count("changed"), "bootstrap at 1.35 finds the upgraded cluster right\n" + boot);
    }
}
