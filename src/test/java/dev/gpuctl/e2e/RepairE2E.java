package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@code gpuctl repair} on a 1+2 bed: a GPU job runs on w2 throughout. w1's GPU falls off the bus (an Xid 79 in its
 * kernel log, the GPU gone until the next boot): the dry run prints the diagnosis and the plan and changes nothing; the
 * repair picks the reboot only, brings w1 back (uncordoned, allocatable restored, the smoke pod passed, recorded) and
 * leaves w2's job alone; a second repair changes nothing and verify is clean. An Xid 48 on a present GPU (the plugin's
 * sticky unhealthy mark) is answered by a GPU reset and a plugin restart, without a reboot. A GPU job on the sick node
 * is waited for (the repair stops, naming it, the node cordoned) and only --force evicts it. A GPU that stays dead after the reboot
 * leaves w1 cordoned, exit 1, with the human step named.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RepairE2E {
    static final String KUBECTL = "kubectl --kubeconfig=/etc/kubernetes/admin.conf ";
    static final ObjectMapper JSON = new ObjectMapper();
    static TestBed bed;
    static Path inventory;
    static String w1;
    static String w2;
    static String jobPod;

    static BootstrappedCluster.Lease cluster;

    /** The shared 1+2 cluster as right after bootstrap (its own inventory and .gpuctl/). */
    @BeforeAll static void up() throws Exception {
        cluster = BootstrappedCluster.acquire(2);
        bed = cluster.bed();
        w1 = bed.workers().get(0);
        w2 = bed.workers().get(1);
        inventory = cluster.inventory();
        // a training job on w2, running for the whole class
        bed.ok(bed.master(), "cat > /root/train.yaml <<'EOF'\n"
            + "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train-w2, namespace: default}\n"
            + "spec:\n  backoffLimit: 0\n  template:\n    spec:\n      nodeName: " + w2 + "\n      restartPolicy: Never\n"
            + "      containers:\n      - name: train\n        image: registry.internal/trainer:cu118\n        command: [sleep, \"1800\"]\n"
            + "        resources: {limits: {nvidia.com/gpu: 1}}\nEOF\n" + KUBECTL + "apply -f /root/train.yaml");
        jobPod = runningJobPod();
    }

    @AfterAll static void down() {
        BootstrappedCluster.release(cluster);
    }

    static JsonNode kubectl(String args) throws IOException {
        return JSON.readTree(bed.ok(bed.master(), KUBECTL + args));
    }

    static String runningJobPod() throws Exception {
        for (long deadline = System.nanoTime() + 90_000_000_000L; ; Thread.sleep(1000)) {
            JsonNode pods = kubectl("get pods -n default -l job-name=train-w2 -o json").path("items");
            if (pods.size() == 1 && pods.get(0).path("status").path("phase").asText().equals("Running")) {
                assertEquals(w2, pods.get(0).path("spec").path("nodeName").asText());
                return pods.get(0).path("metadata").path("name").asText();
            }
            assertTrue(System.nanoTime() < deadline, () -> "w2's job is not running: " + pods);
        }
    }

    static void assertJobUntouched() throws Exception {
        assertEquals(jobPod, runningJobPod(), "w2's job runs on, the same pod");
    }

    static boolean cordoned(String node) {
        return bed.ok(bed.master(), KUBECTL + "get node " + node + " -o 'jsonpath={.spec.unschedulable}'").strip().equals("true");
    }

    static String allocatable(String node) {
        return bed.ok(bed.master(), KUBECTL + "get node " + node + " -o 'jsonpath={.status.allocatable.nvidia\\.com/gpu}'").strip();
    }

    static String lastRepair(String node) {
        return bed.ok(bed.master(), KUBECTL + "get node " + node + " -o 'jsonpath={.metadata.annotations.gpuctl\\.dev/last-repair}'").strip();
    }

    static String bootId(String host) {
        return bed.ok(host, "cat /proc/sys/kernel/random/boot_id").strip();
    }

    static List<Path> audits() throws IOException {
        Path state = inventory.toAbsolutePath().getParent().resolve(".gpuctl");
        if (!Files.isDirectory(state)) return List.of();
        try (Stream<Path> s = Files.walk(state)) {
            return s.filter(p -> p.getParent().getFileName().toString().equals("repairs") && p.toString().endsWith(".json")).sorted().toList();
        }
    }

    /** w1's GPU 0 falls off the bus: the driver's Xid 79 in its kernel log, the GPU gone from nvidia-smi until a boot ({@code dead}: every boot). */
    static void gpuFallsOffTheBus(boolean dead) {
        String bus = bed.ok(w1, "nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i 0").strip(); // 00000000:3B:00.0
        String pci = bus.substring(4, 14).toLowerCase(); // 0000:3b:00, as the driver logs it
        bed.kernelLog(w1, "NVRM: Xid (PCI:" + pci + "): 79, pid=4242, name=python3, GPU has fallen off the bus.");
        bed.ok(w1, dead ? "echo 0 > /etc/gpuctl-testbed/gpus-lost" : "mkdir -p /run/gpuctl-testbed && echo 0 > /run/gpuctl-testbed/gpus-lost");
        assertFalse(bed.ssh(w1, "nvidia-smi -L").exit() == 0, "the GPU is gone");
    }

    @Test @Order(1) void aHealthyNodeIsLeftAsItIs() throws Exception {
        Gpuctl.Run r = Gpuctl.run("repair", "-i", inventory.toString(), w1);
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("nothing to repair"), r::toString);
        assertFalse(cordoned(w1));
        assertEquals(List.of(), audits(), "no repair, no audit entry");
    }

    @Test @Order(2) void aGpuOffTheBusIsRebootedProvedAndReturned() throws Exception {
        gpuFallsOffTheBus(false);
        String boot = bootId(w1);

        Gpuctl.Run dry = Gpuctl.run("repair", "--dry-run", "-i", inventory.toString(), w1);
        assertEquals(0, dry.code(), dry::toString);
        assertTrue(dry.out().contains("1 GPU(s) recorded at bootstrap missing from nvidia-smi: GPU 0 (GPU-"), dry::toString);
        assertTrue(dry.out().contains("hardware Xid 79 (GPU has fallen off the bus) x1"), dry::toString);
        assertTrue(dry.out().contains("reboot the host over ssh") && !dry.out().contains("restart the device plugin pod")
            && !dry.out().contains("nvidia-smi -r -i"), "the reboot only: " + dry);
        assertTrue(dry.out().contains("dry run complete: nothing was changed"), dry::toString);
        assertFalse(cordoned(w1), "a dry run cordons nothing");
        assertEquals(boot, bootId(w1));

        Gpuctl.Run r = Gpuctl.run("repair", "-i", inventory.toString(), w1);
        System.out.println("$ gpuctl repair " + w1 + "\n" + r);
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains(w1 + ": repaired and proved (reboot), back in service"), r::toString);
        assertNotEquals(boot, bootId(w1), "w1 was rebooted");
        assertTrue(r.err().lines().anyMatch(l -> l.matches(w1 + "\\s+reboot\\s+changed.*")), "w1 was rebooted by the repair:\n" + r.err());
        assertFalse(r.err().lines().anyMatch(l -> l.matches("\\S+\\s+(restart-plugin|reset-gpu)\\s.*")), "no other remedy ran:\n" + r.err());
        assertTrue(r.err().lines().anyMatch(l -> l.matches(bed.master() + "\\s+smoke-pod\\s+changed.*")), "the smoke pod ran:\n" + r.err());
        assertFalse(cordoned(w1), "w1 is back in service");
        assertEquals("1", allocatable(w1));
        assertTrue(bed.ok(w1, "nvidia-smi -L").startsWith("GPU 0: "));
        assertTrue(lastRepair(w1).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ;proved;remedies=reboot"), lastRepair(w1));
        List<Path> audits = audits();
        assertEquals(1, audits.size(), audits::toString);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(audits.get(0))));
        JsonNode audit = JSON.readTree(audits.get(0).toFile());
        assertEquals(w1, audit.path("node").asText());
        assertTrue(audit.path("proof").path("proved").asBoolean(), audit::toString);
        assertEquals("reboot", audit.path("remedies").get(0).path("remedy").asText(), audit::toString);
        assertTrue(audit.path("diagnosis").toString().contains("Xid 79"), audit::toString);
        assertJobUntouched();
    }

    @Test @Order(3) void aSecondRepairChangesNothingAndVerifyIsClean() throws Exception {
        String boot = bootId(w1);
        Gpuctl.Run r = Gpuctl.run("repair", "-i", inventory.toString(), w1);
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains(w1 + ": nothing to repair"), r::toString);
        assertEquals(boot, bootId(w1));
        assertEquals(1, audits().size());
        Gpuctl.Run v = Gpuctl.run("verify", "--json", "--wait-timeout", "1", inventory.toString());
        assertEquals(java.util.Set.of(), v.failedChecks(), v::toString);
        assertJobUntouched();
    }

    static String pluginPod(String node) throws IOException {
        for (JsonNode p : kubectl("get pods -n kube-system -o json").path("items")) {
            if (p.path("metadata").path("name").asText().startsWith("nvidia-device-plugin") && p.path("spec").path("nodeName").asText().equals(node)) {
                return p.path("metadata").path("name").asText();
            }
        }
        return "";
    }

    @Test @Order(4) void aStickyUnhealthyGpuIsResetAndThePluginRestartedWithoutAReboot() throws Exception {
        String bus = bed.ok(w1, "nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i 0").strip();
        bed.kernelLog(w1, "NVRM: Xid (PCI:" + bus.substring(4, 14).toLowerCase() + "): 48, pid=4242, name=python3, An uncorrectable double bit"
            + " error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.");
        for (long deadline = System.nanoTime() + 60_000_000_000L; !allocatable(w1).equals("0"); Thread.sleep(1000)) {
            assertTrue(System.nanoTime() < deadline, "the plugin marks w1's GPU unhealthy: allocatable " + allocatable(w1));
        }
        String boot = bootId(w1);
        String plugin = pluginPod(w1);
        Gpuctl.Run r = Gpuctl.run("repair", "-i", inventory.toString(), w1);
        System.out.println("$ gpuctl repair " + w1 + " (sticky unhealthy)\n" + r);
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("hardware Xid 48 (Double Bit ECC Error) x1") && r.out().contains("advertises 0 nvidia.com/gpu, 1 expected"), r::toString);
        assertTrue(r.out().contains(w1 + ": repaired and proved (reset_gpu, restart_plugin), back in service"), r::toString);
        assertTrue(r.err().lines().anyMatch(l -> l.matches(w1 + "\\s+reset-gpu\\s+changed.*")), r::toString);
        assertTrue(r.err().lines().anyMatch(l -> l.matches(bed.master() + "\\s+restart-plugin\\s+changed.*")), r::toString);
        assertEquals(boot, bootId(w1), "no reboot");
        assertNotEquals(plugin, pluginPod(w1), "a new plugin pod");
        assertEquals("1", allocatable(w1));
        assertFalse(cordoned(w1));
        assertTrue(lastRepair(w1).endsWith(";proved;remedies=reset_gpu,restart_plugin"), lastRepair(w1));
        // the Xid it answered no longer fails verify, and a second repair finds nothing
        Gpuctl.Run v = Gpuctl.run("verify", "--json", "--wait-timeout", "1", inventory.toString());
        assertEquals(java.util.Set.of(), v.failedChecks(), v::toString);
        // verify shows each node's last repair: w1's, none for w2
        for (JsonNode h : JSON.readTree(v.out()).path("hosts")) {
            JsonNode last = h.path("lastRepair");
            if (h.path("name").asText().equals(w1)) {
                assertTrue(last.path("proved").asBoolean() && last.path("remedies").toString().equals("[\"reset_gpu\",\"restart_plugin\"]"), v::toString);
                assertEquals(lastRepair(w1).split(";")[0], last.path("at").asText());
            } else {
                assertTrue(last.isNull(), v::toString);
            }
        }
        Gpuctl.Run text = Gpuctl.run("verify", "--wait-timeout", "1", inventory.toString());
        assertTrue(text.out().lines().anyMatch(l -> l.equals(w1 + "  last repair: " + lastRepair(w1).split(";")[0] + " proved (reset_gpu, restart_plugin)")),
            text::toString);
        Gpuctl.Run again = Gpuctl.run("repair", "-i", inventory.toString(), w1);
        assertEquals(0, again.code(), again::toString);
        assertTrue(again.out().contains(w1 + ": nothing to repair"), again::toString);
        assertJobUntouched();
        aDriverMismatchIsAnsweredByAModuleReloadWithoutAReboot();
    }

    /** The same driver package at another version: every file of the installed one, its version file changed. */
    static void upgradeDriverWithoutReboot(String w) {
        bed.ok(w, "set -e; d=/root/newdriver; rm -rf $d; mkdir -p $d/pkg/DEBIAN;"
            + " dpkg -L nvidia-driver-emu | while read -r f; do if [ -f \"$f\" ] && [ ! -L \"$f\" ]; then install -D -m \"$(stat -c %a \"$f\")\" \"$f\" \"$d/pkg$f\"; fi; done;"
            + " sed -i 's/580\\.159\\.04/580.173.02/' $d/pkg/usr/lib/gpuctl-emu/nvidia-driver/version;"
            + " printf 'Package: nvidia-driver-emu\\nVersion: 580.173.02-1\\nArchitecture: amd64\\nMaintainer: t <t@t.invalid>\\nDepends: gpuctl-emu-common\\nDescription: newer driver\\n' > $d/pkg/DEBIAN/control;"
            + " dpkg-deb --root-owner-group -b $d/pkg $d/new.deb >/dev/null; dpkg --force-hold -i $d/new.deb >/dev/null");
    }

    /** Part of order 4 (one bed, one bootstrap): the driver package upgraded under a running nvidia-persistenced. */
    static void aDriverMismatchIsAnsweredByAModuleReloadWithoutAReboot() throws Exception {
        bed.ok(w1, "systemctl enable --now nvidia-persistenced 2>&1");
        upgradeDriverWithoutReboot(w1);
        assertTrue(bed.ssh(w1, "nvidia-smi -L").out().contains("Driver/library version mismatch"), "the mismatch");
        // the bed's kernel refuses the unload while persistenced holds the GPUs, as the real one
        var refused = bed.ssh(w1, "modprobe -r nvidia 2>&1");
        assertTrue(refused.exit() != 0 && refused.out().contains("modprobe: FATAL: Module nvidia is in use."), refused::toString);
        String boot = bootId(w1);
        Gpuctl.Run r = Gpuctl.run("repair", "-i", inventory.toString(), w1);
        System.out.println("$ gpuctl repair " + w1 + " (driver mismatch)\n" + r);
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("driver: Driver/library version mismatch") && r.out().contains("reload the NVIDIA kernel modules"), r::toString);
        assertTrue(r.out().contains(w1 + ": repaired and proved (reload_modules, restart_plugin), back in service"), r::toString);
        assertTrue(r.err().lines().anyMatch(l -> l.matches(w1 + "\\s+reload-modules\\s+changed.*")), r::toString);
        assertEquals(boot, bootId(w1), "no reboot");
        // the bed's "loaded module" is the new package's version now, and nvidia-smi answers
        assertTrue(bed.ok(w1, "cat /run/gpuctl-testbed/nvidia-module-version").contains("580.173.02"), "the new module loaded");
        assertTrue(bed.ssh(w1, "nvidia-smi -L").exit() == 0, "nvidia-smi answers");
        assertEquals("active", bed.ssh(w1, "systemctl is-active nvidia-persistenced").out().strip(), "persistenced runs again");
        assertTrue(lastRepair(w1).endsWith(";proved;remedies=reload_modules,restart_plugin"), lastRepair(w1));
        assertFalse(cordoned(w1));
        Gpuctl.Run again = Gpuctl.run("repair", "-i", inventory.toString(), w1);
        assertTrue(again.code() == 0 && again.out().contains(w1 + ": nothing to repair"), again::toString);
        assertJobUntouched();
        bed.ok(w1, "systemctl disable --now nvidia-persistenced 2>&1");
    }

    @Test @Order(5) void aGpuJobOnTheSickNodeIsWaitedForAndOnlyForceEvictsIt() throws Exception {
        bed.ok(bed.master(), "cat > /root/train-w1.yaml <<'EOF'\n"
            + "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train-w1, namespace: default}\n"
            + "spec:\n  backoffLimit: 0\n  template:\n    spec:\n      nodeSelector: {kubernetes.io/hostname: " + w1 + "}\n      restartPolicy: Never\n"
            + "      containers:\n      - name: train\n        image: registry.internal/trainer:cu118\n        command: [sleep, \"1800\"]\n"
            + "        resources: {limits: {nvidia.com/gpu: 1}}\nEOF\n" + KUBECTL + "apply -f /root/train-w1.yaml");
        String held = null;
        for (long deadline = System.nanoTime() + 60_000_000_000L; held == null; Thread.sleep(1000)) {
            JsonNode pods = kubectl("get pods -n default -l job-name=train-w1 -o json").path("items");
            if (pods.size() == 1 && pods.get(0).path("status").path("phase").asText().equals("Running")) held = pods.get(0).path("metadata").path("name").asText();
            assertTrue(System.nanoTime() < deadline, () -> "w1's job is not running: " + pods);
        }
        String bus = bed.ok(w1, "nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i 0").strip();
        bed.kernelLog(w1, "NVRM: Xid (PCI:" + bus.substring(4, 14).toLowerCase() + "): 94, pid=4242, name=python3, Contained: SM (0x1)."
            + " RST: No, D-RST: No");

        Gpuctl.Run waited = Gpuctl.run("repair", "--drain-timeout", "5s", "-i", inventory.toString(), w1);
        System.out.println("$ gpuctl repair --drain-timeout 5s " + w1 + " (a GPU job on it)\n" + waited);
        assertEquals(1, waited.code(), waited::toString);
        assertTrue(waited.err().contains(held) && waited.err().contains(w1 + " stays cordoned") && waited.err().contains("--force"), waited::toString);
        assertTrue(waited.out().contains("hardware Xid 94 (Contained ECC error) x1"), waited::toString);
        assertTrue(cordoned(w1), "held out of service, the job untouched");
        assertEquals("Running", kubectl("get pod -n default " + held + " -o json").path("status").path("phase").asText(), "the job was not killed");

        Gpuctl.Run forced = Gpuctl.run("repair", "--force", "-i", inventory.toString(), w1);
        System.out.println("$ gpuctl repair --force " + w1 + "\n" + forced);
        assertEquals(0, forced.code(), forced::toString);
        assertTrue(forced.out().contains(w1 + ": repaired and proved (reset_gpu, restart_plugin), back in service"), forced::toString);
        assertFalse(kubectl("get pods -n default -o json").path("items").toString().contains("\"" + held + "\""), "the job's pod was evicted");
        assertFalse(cordoned(w1));
        bed.ok(bed.master(), KUBECTL + "delete job train-w1 --ignore-not-found; " + KUBECTL + "-n default delete pods -l job-name=train-w1 --ignore-not-found");
        for (long deadline = System.nanoTime() + 60_000_000_000L; ; Thread.sleep(1000)) {
            if (kubectl("get pods -n default -l job-name=train-w1 -o json").path("items").isEmpty()) break;
            assertTrue(System.nanoTime() < deadline, "train-w1's pods are gone");
        }
        assertJobUntouched();
    }

    static final String LOST = "Failed to initialize NVML: Unknown Error";

    /** The running pod of the DaemonSet gpu-probe (on w1 only), or "" while there is none. */
    static String probePod() throws IOException {
        for (JsonNode p : kubectl("get pods -n default -l app=gpu-probe -o json").path("items")) {
            if (p.path("status").path("phase").asText().equals("Running") && p.path("metadata").path("deletionTimestamp").isMissingNode()) {
                return p.path("metadata").path("name").asText();
            }
        }
        return "";
    }

    static dev.gpuctl.testbed.BedResult smiIn(String pod) {
        return bed.ssh(bed.master(), KUBECTL + "exec -n default " + pod + " -- nvidia-smi -L 2>&1");
    }

    /**
     * NVIDIA's "Failed to initialize NVML: Unknown Error": a bootstrapped worker (the /dev/char links, NVIDIA's udev rule)
     * keeps a running GPU pod's GPUs across systemctl daemon-reload; the same worker with the links and the rule removed
     * (a host prepared the old way) loses them at the next daemon-reload; verify names the pod and says to run repair;
     * the repair makes the links and the rule and restarts that pod only (no drain, no reboot), proves it by the pod's own
     * nvidia-smi -L, leaves w2's job alone; a second repair changes nothing.
     */
    @Test @Order(6) void podsThatLostTheirGpusAtADaemonReloadAreRestartedAndThePreventionMade() throws Exception {
        bed.ok(bed.master(), "cat > /root/gpu-probe.yaml <<'EOF'\n"
            + "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: gpu-probe, namespace: default}\n"
            + "spec:\n  selector: {matchLabels: {app: gpu-probe}}\n  template:\n    metadata: {labels: {app: gpu-probe}}\n    spec:\n"
            + "      nodeSelector: {kubernetes.io/hostname: " + w1 + "}\n"
            + "      containers:\n      - name: probe\n        image: nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04\n        command: [sleep, \"3600\"]\n"
            + "        resources: {limits: {nvidia.com/gpu: 1}}\nEOF\n" + KUBECTL + "apply -f /root/gpu-probe.yaml");
        String pod = "";
        for (long deadline = System.nanoTime() + 60_000_000_000L; pod.isEmpty(); Thread.sleep(1000)) {
            pod = probePod();
            assertTrue(!pod.isEmpty() || System.nanoTime() < deadline, "gpu-probe runs on w1");
        }
        assertTrue(smiIn(pod).out().startsWith("GPU 0: "), () -> "the pod sees its GPU: " + smiIn(probePodQuiet()));
        // the kubelet has given the pod its GPU (its device checkpoint names the pod): a daemon-reload acts on what the
        // kubelet allocated, and the bed's API server reports a pod Running up to a heartbeat before its kubelet knows it
        String uid = kubectl("get pod -n default " + pod + " -o json").path("metadata").path("uid").asText();
        assertFalse(uid.isEmpty(), "the pod's uid");
        String checkpoint = "cat /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint 2>/dev/null; true";
        for (long deadline = System.nanoTime() + 90_000_000_000L; !bed.ok(w1, checkpoint).contains(uid); Thread.sleep(1000)) {
            assertTrue(System.nanoTime() < deadline, () -> "w1's kubelet allocated the pod's GPU: " + bed.ok(w1, checkpoint));
        }
        // prevented after bootstrap: the links and the rule are there, and a daemon-reload takes nothing
        assertTrue(bed.ok(w1, "ls -l /dev/char/").contains("195:0 -> /dev/nvidia0"), "bootstrap made the links");
        assertTrue(bed.ok(w1, "cat /lib/udev/rules.d/71-nvidia-dev-char.rules").contains("create-dev-char-symlinks --create-all"));
        bed.ok(w1, "systemctl daemon-reload");
        assertEquals("", bed.ok(w1, "cat /run/gpuctl-testbed/nvml-lost 2>/dev/null; true").strip(), "no container lost its GPUs");
        assertTrue(smiIn(pod).out().startsWith("GPU 0: "), "the GPUs kept across the daemon-reload");

        // a host prepared the old way: no rule, no links; the next daemon-reload takes the pod's GPUs
        bed.ok(w1, "rm -f /lib/udev/rules.d/71-nvidia-dev-char.rules; find /dev/char -lname '*nvidia*' -delete; systemctl daemon-reload");
        for (long deadline = System.nanoTime() + 90_000_000_000L; !smiIn(pod).out().contains(LOST); Thread.sleep(1000)) {
            assertTrue(System.nanoTime() < deadline, "the pod loses NVML: " + smiIn(pod));
        }
        Gpuctl.Run v = Gpuctl.run("verify", "--json", "--wait-timeout", "1", inventory.toString());
        assertTrue(v.failedChecks().containsAll(java.util.Set.of(bed.master() + " gpu-pods-nvml", w1 + " dev-char-links")), v::toString);
        assertTrue(v.out().contains("default/" + pod + " on " + w1) && v.out().contains("run `gpuctl repair " + w1 + "`"), v::toString);

        String boot = bootId(w1);
        Gpuctl.Run r = Gpuctl.run("repair", "-i", inventory.toString(), w1);
        System.out.println("$ gpuctl repair " + w1 + " (lost NVML)\n" + r);
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("1 running GPU pod(s) lost their GPUs") && r.out().contains("default/" + pod + " (DaemonSet)"), r::toString);
        assertTrue(r.out().contains(w1 + ": repaired and proved (dev_char_links, restart_lost_pods), back in service"), r::toString);
        assertFalse(r.err().lines().anyMatch(l -> l.matches("\\S+\\s+(cordon|drain|reboot|reset-gpu|restart-plugin|smoke-pod)\\s.*")), "nothing else:\n" + r.err());
        assertTrue(r.err().contains(w1 + ": dcgmi diag -r 1 skipped: DCGM (dcgmi) is not installed on the host"), r::toString);
        assertEquals(boot, bootId(w1), "no reboot");
        assertTrue(bed.ok(w1, "ls -l /dev/char/").contains("195:0 -> /dev/nvidia0"), "the links made");
        assertTrue(bed.ok(w1, "cat /lib/udev/rules.d/71-nvidia-dev-char.rules").contains("create-dev-char-symlinks --create-all"), "the rule made");
        String now = probePod();
        for (long deadline = System.nanoTime() + 60_000_000_000L; now.isEmpty() || now.equals(pod); Thread.sleep(1000), now = probePod()) {
            assertTrue(System.nanoTime() < deadline, "the DaemonSet's new pod runs on w1: " + probePod());
        }
        assertNotEquals(pod, now, "the pod was restarted");
        assertTrue(smiIn(now).out().startsWith("GPU 0: "), () -> "the new pod sees its GPU: " + smiIn(probePodQuiet()));
        assertTrue(lastRepair(w1).endsWith(";proved;remedies=dev_char_links,restart_lost_pods"), lastRepair(w1));
        assertFalse(cordoned(w1));
        assertJobUntouched();
        assertTrue(smiIn(jobPod).out().startsWith("GPU 0: "), "w2's job keeps its GPU");
        Gpuctl.Run again = Gpuctl.run("repair", "-i", inventory.toString(), w1);
        assertTrue(again.code() == 0 && again.out().contains(w1 + ": nothing to repair"), again::toString);
        assertEquals(now, probePod(), "the second repair restarts nothing");
        bed.ok(bed.master(), KUBECTL + "delete daemonset gpu-probe --ignore-not-found");
        for (long deadline = System.nanoTime() + 60_000_000_000L; ; Thread.sleep(1000)) {
            if (kubectl("get pods -n default -l app=gpu-probe -o json").path("items").isEmpty()) break;
            assertTrue(System.nanoTime() < deadline, "gpu-probe's pods are gone");
        }
    }

    static String probePodQuiet() {
        try {
            return probePod();
        } catch (IOException e) {
            return "";
        }
    }

    @Test @Order(7) void aGpuThatStaysDeadLeavesTheNodeCordonedNamingTheHumanStep() throws Exception {
        gpuFallsOffTheBus(true);
        Gpuctl.Run r = Gpuctl.run("repair", "--drain-timeout", "30s", "-i", inventory.toString(), w1);
        System.out.println("$ gpuctl repair " + w1 + " (dead GPU)\n" + r);
        assertEquals(1, r.code(), r::toString);
        assertTrue(r.err().contains("1 GPU(s) recorded at bootstrap, none listed now"), r::toString);
        assertTrue(r.err().contains(w1 + " stays cordoned. What a person must do: reseat the GPU(s)") && r.err().contains("RMA"), r::toString);
        assertTrue(cordoned(w1), "w1 stays out of service");
        assertTrue(lastRepair(w1).contains(";not-proved;remedies=reboot"), lastRepair(w1));
        List<Path> audits = audits();
        assertEquals(6, audits.size(), "one a repair of orders 2, 4 (two: the Xid 48, the driver), 5, 6, 7: " + audits);
        JsonNode audit = JSON.readTree(audits.get(5).toFile());
        assertFalse(audit.path("proof").path("proved").asBoolean(), audit::toString);
        assertTrue(audit.path("proof").path("humanStep").asText().contains("RMA"), audit::toString);
        assertJobUntouched();
    }
}
