package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.testbed.TestBed;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The NVIDIA driver held and the GPUs' health on the test bed's GPU workers: bootstrap holds the driver package and
 * writes the unattended-upgrades blacklist (a re-run changes nothing); an apt upgrade leaves the held driver alone;
 * a deliberate driver upgrade without a reboot and ECC errors are each found by verify on the worker where they were
 * made, with their cause and fix, and only there; a reboot clears the mismatch. Then the whole cluster: bootstrap
 * records each GPU node's GPUs as its annotation gpuctl.dev/gpus-at-bootstrap (migrating an earlier host record),
 * and verify names a GPU missing since by index and UUID.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GpuHealthE2E {
    static final String STEPS = "driver-hold,gpu-health";
    static final String CONF = "/etc/apt/apt.conf.d/51gpuctl-hold-nvidia-driver";
    static final String FINGERPRINT = "apt-mark showhold; stat -c '%n %Y %a' " + CONF + " /var/lib/gpuctl/gpus-at-bootstrap 2>&1;"
        + " dpkg-query -W -f='${Version}\\n' nvidia-driver-emu";
    static BootstrappedCluster.Lease cluster;
    static TestBed bed;
    static Path inventory;

    /**
     * The shared 1+2 cluster (the bed's inventory, bootstrapped, restored from its snapshot): the driver hold, the
     * blacklist and the GPU record are that bootstrap's, and each case's bootstrap here a re-run on it. This class
     * bootstrapped a bed of its own in its order 5 before (~50 s).
     */
    @BeforeAll static void up() {
        cluster = BootstrappedCluster.acquire(2);
        bed = cluster.bed();
        inventory = cluster.inventory();
    }

    @AfterAll static void down() {
        BootstrappedCluster.release(cluster);
    }

    /** gpu-health checks of verify --json, per host: check -> problem ("" when ok). */
    static Map<String, Map<String, String>> health() throws Exception {
        Gpuctl.Run r = Gpuctl.run("verify", "--json", "--wait-timeout", "1", inventory.toString());
        JsonNode doc = new ObjectMapper().readTree(r.out());
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        for (JsonNode h : doc.path("hosts")) {
            Map<String, String> checks = new LinkedHashMap<>();
            for (JsonNode c : h.path("checks")) {
                if (!c.path("step").asText().equals("gpu-health")) continue;
                checks.put(c.path("check").asText(), c.path("ok").asBoolean() ? "" : c.path("problem").asText() + " | fix: " + c.path("fix").asText());
            }
            out.put(h.path("name").asText(), checks);
        }
        return out;
    }

    static String failed(Map<String, String> checks) {
        return String.join("\n", checks.values().stream().filter(p -> !p.isEmpty()).toList());
    }

    @Test @Order(1) void bootstrapHoldsTheDriverAndRecordsTheGpus() {
        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", STEPS, inventory.toString());
        assertEquals(0, r.code(), r::toString);
        for (String w : bed.workers()) {
            assertTrue(bed.ok(w, "apt-mark showhold").lines().anyMatch("nvidia-driver-emu"::equals), w);
            assertTrue(bed.ok(w, "cat " + CONF).contains("Unattended-Upgrade::Package-Blacklist {\n    \"^nvidia-(?!container-)\";"), w);
            assertTrue(bed.ok(w, "apt-config dump Unattended-Upgrade::Package-Blacklist").contains("\"^nvidia-(?!container-)\""), w + ": apt reads the file");
            assertEquals("no", bed.ok(w, "test -e /var/lib/gpuctl/gpus-at-bootstrap && echo yes || echo no").strip(),
                w + ": the GPUs are recorded on the node object now, not in a host file");
        }
        assertTrue(bed.ok(bed.master(), "test -e " + CONF + " && echo yes || echo no").strip().equals("no"), "the master has no GPU driver to hold");
        Map<String, String> before = bed.fingerprints(FINGERPRINT);
        Gpuctl.Run again = Gpuctl.run("bootstrap", "--only", STEPS, inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(before, bed.fingerprints(FINGERPRINT), "a re-run changed a host");
    }

    @Test @Order(2) void healthyWorkersPassEveryHealthCheck() throws Exception {
        var h = health();
        for (String w : bed.workers()) {
            assertEquals(4, h.get(w).size(), h::toString); // the module's version, the driver against it, memory, Xid
            assertEquals("", failed(h.get(w)), w + ": " + h);
        }
    }

    /** A newer driver package, as an upgrade would bring it, in a local apt source on the worker. */
    static void offerNewerDriver(String w) {
        bed.ok(w, "set -e; d=/root/newdriver; rm -rf $d; mkdir -p $d/pkg/DEBIAN $d/pkg/usr/bin $d/pkg/usr/lib/gpuctl-emu/nvidia-driver;"
            + " cp /usr/bin/nvidia-smi $d/pkg/usr/bin/; sed 's/580\\.159\\.04/580.173.02/' /usr/lib/gpuctl-emu/nvidia-driver/version > $d/pkg/usr/lib/gpuctl-emu/nvidia-driver/version;"
            + " printf 'Package: nvidia-driver-emu\\nVersion: 580.173.02-1\\nArchitecture: amd64\\nMaintainer: t <t@t.invalid>\\nDepends: gpuctl-emu-common\\nDescription: newer driver\\n' > $d/pkg/DEBIAN/control;"
            + " dpkg-deb --root-owner-group -b $d/pkg $d/nvidia-driver-emu_580.173.02-1_amd64.deb >/dev/null;"
            + " f=nvidia-driver-emu_580.173.02-1_amd64.deb; { dpkg-deb -f $d/$f; echo \"Filename: ./$f\"; echo \"Size: $(stat -c %s $d/$f)\"; echo \"SHA256: $(sha256sum $d/$f | cut -d' ' -f1)\"; echo; } > $d/Packages;"
            + " echo 'deb [trusted=yes] file:/root/newdriver ./' > /etc/apt/sources.list.d/newdriver.list; apt-get -qq update");
    }

    @Test @Order(3) void anAptUpgradeLeavesTheHeldDriverAlone() {
        String w = bed.workers().get(0);
        offerNewerDriver(w);
        assertTrue(bed.ok(w, "apt-cache policy nvidia-driver-emu").contains("580.173.02-1"), "the newer driver is offered");
        String out = bed.ok(w, "DEBIAN_FRONTEND=noninteractive apt-get -y upgrade 2>&1");
        assertTrue(out.contains("kept back") || out.contains("held"), out);
        assertEquals("580.159.04-1", bed.ok(w, "dpkg-query -W -f='${Version}' nvidia-driver-emu"), out);
    }

    @Test @Order(4) void eachFaultIsFoundOnItsWorkerOnly() throws Exception {
        String w1 = bed.workers().get(0), w2 = bed.workers().get(1);
        // w1: the driver upgraded deliberately but without the reboot; w2: ECC errors and a pending row remapping
        bed.ok(w1, "DEBIAN_FRONTEND=noninteractive apt-get -y -qq install --allow-change-held-packages nvidia-driver-emu=580.173.02-1 >/dev/null 2>&1");
        bed.ok(w2, "echo '0 dram_uncorrectable=2 remap_pending=Yes' > /etc/gpuctl-testbed/ecc");
        var h = health();
        assertTrue(failed(h.get(w1)).startsWith("Driver/library version mismatch: the kernel module version is unknown, the NVML library is 580.173")
            && failed(h.get(w1)).contains("reboot the node"), h::toString);
        assertTrue(failed(h.get(w1)).contains("fix: the fix named in the problem"), h::toString);
        assertTrue(failed(h.get(w2)).contains("2 uncorrectable ECC error(s) since the driver loaded (DRAM Uncorrectable 2)"), h::toString);
        assertTrue(failed(h.get(w2)).contains("row remapping") && !failed(h.get(w2)).contains("mismatch"), h::toString);
        assertTrue(failed(h.get(w1)).lines().noneMatch(l -> l.contains("ECC error")), h::toString);
        assertTrue(h.get(bed.master()).isEmpty(), "the master has no GPU checks: " + h);

        // a reboot loads the new module: the mismatch is gone
        bed.reboot(w1);
        bed.ok(w2, "rm -f /etc/gpuctl-testbed/ecc");
        h = health();
        assertEquals("", failed(h.get(w1)), h::toString);
        assertEquals("", failed(h.get(w2)), h::toString);
    }

    /** The gpu-record check of verify --json on the master, per GPU node: node -> problem ("" when ok). */
    static Map<String, String> records() throws Exception {
        Gpuctl.Run r = Gpuctl.run("verify", "--json", "--wait-timeout", "1", inventory.toString());
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode h : new ObjectMapper().readTree(r.out()).path("hosts")) {
            for (JsonNode c : h.path("checks")) {
                if (!c.path("step").asText().equals("gpu-record")) continue;
                String node = c.path("check").asText().replaceAll("^node (\\S+):.*", "$1");
                out.put(node, c.path("ok").asBoolean() ? "" : c.path("problem").asText());
            }
        }
        return out;
    }

    static JsonNode annotations(String node) throws Exception {
        JsonNode n = new ObjectMapper().readTree(bed.ok(bed.master(), "kubectl --kubeconfig=/etc/kubernetes/admin.conf get node " + node + " -o json"));
        return n.path("metadata").path("annotations");
    }

    static String annotation(String node) throws Exception {
        return annotations(node).path("gpuctl.dev/gpus-at-bootstrap").asText("");
    }

    /** index:UUID of each GPU nvidia-smi lists on the host, comma-separated (the record's form). */
    static String gpusOf(String w) {
        return String.join(",", bed.ok(w, "nvidia-smi --query-gpu=index,uuid --format=csv,noheader").strip().lines()
            .map(l -> l.replace(", ", ":")).toList());
    }

    @Test @Order(5) void theGpusAtBootstrapAreANodeAnnotationAMissingOneIsNamedAndAnOldHostRecordIsMigrated() throws Exception {
        String w1 = bed.workers().get(0), w2 = bed.workers().get(1);
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        for (String w : List.of(w1, w2)) {
            assertEquals(gpusOf(w), annotation(w), w + ": the GPUs nvidia-smi listed at bootstrap");
            assertTrue(annotation(w).matches("0:GPU-[0-9a-f-]{36}"), annotation(w));
        }
        Map<String, String> rec = records();
        assertEquals(Map.of(w1, "", w2, ""), rec, rec::toString);
        // a re-run changes nothing: the record is never overwritten
        JsonNode before = annotations(w1);
        Gpuctl.Run again = Gpuctl.run("bootstrap", "--only", "gpu-record", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
        assertEquals(before, annotations(w1));

        // a node an earlier gpuctl bootstrapped: no annotation, its GPUs in a host file, and it had a second GPU then
        bed.ok(bed.master(), "kubectl --kubeconfig=/etc/kubernetes/admin.conf annotate node " + w2 + " gpuctl.dev/gpus-at-bootstrap-");
        assertEquals("", annotation(w2));
        bed.ok(w2, "mkdir -p /var/lib/gpuctl; { nvidia-smi -L; echo 'GPU 1: NVIDIA H200 (UUID: GPU-11111111-2222-3333-4444-555555555555)'; }"
            + " > /var/lib/gpuctl/gpus-at-bootstrap");
        Gpuctl.Run migrate = Gpuctl.run("bootstrap", "--only", "gpu-record", inventory.toString());
        assertEquals(gpusOf(w2) + ",1:GPU-11111111-2222-3333-4444-555555555555", annotation(w2), "w2: taken over from the host file");
        assertEquals(1, migrate.code(), "the GPU recorded then is missing now: " + migrate);
        assertTrue(migrate.err().contains("node " + w2 + ": every GPU recorded at bootstrap (annotation gpuctl.dev/gpus-at-bootstrap) listed by nvidia-smi:"
            + " 1 GPU(s) listed by nvidia-smi, 2 recorded at bootstrap; missing: GPU 1 (GPU-11111111-2222-3333-4444-555555555555)"), migrate::toString);
        rec = records();
        assertEquals("", rec.get(w1), rec::toString);
        assertTrue(rec.get(w2).startsWith("1 GPU(s) listed by nvidia-smi, 2 recorded at bootstrap; missing: GPU 1 (GPU-11111111-2222-3333-4444-555555555555)"),
            rec::toString);

        // w1's GPU falls off the bus: named by index and UUID, on w1's check only
        bed.ok(w1, "echo 0 > /etc/gpuctl-testbed/gpus-lost");
        rec = records();
        assertTrue(rec.get(w1).startsWith("1 GPU(s) recorded at bootstrap, none listed now"), rec::toString);
        assertTrue(rec.get(w2).contains("GPU-11111111-2222-3333-4444-555555555555") && !rec.get(w2).contains(annotation(w1).substring(2)),
            "w1's lost GPU is named on w1's check only: " + rec);
        bed.ok(w1, "rm -f /etc/gpuctl-testbed/gpus-lost");
        assertEquals("", records().get(w1));
    }

    /** The kernel's PCI address of a worker's GPU 0 as the driver logs it in an Xid line ("0000:91:00"), from nvidia-smi's bus id. */
    static String xidPci(String w) {
        String bus = bed.ok(w, "nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i 0").strip(); // 00000000:91:00.0
        return bus.substring(4, bus.lastIndexOf('.')).toLowerCase(java.util.Locale.ROOT);
    }

    @Test @Order(6) void aJobsXidIsAWarningNamingItsProcessAHardwareXidFails() throws Exception {
        String w1 = bed.workers().get(0), w2 = bed.workers().get(1);
        // the node annotation back to what w2 really has (order 5 left it naming a GPU lost since): a clean cluster
        bed.ok(bed.master(), "kubectl --kubeconfig=/etc/kubernetes/admin.conf annotate node " + w2 + " --overwrite gpuctl.dev/gpus-at-bootstrap=" + gpusOf(w2));
        Gpuctl.Run clean = Gpuctl.run("verify", inventory.toString());
        assertEquals(0, clean.code(), clean::toString);

        String pci = xidPci(w1);
        String uuid = gpusOf(w1).substring(2);
        bed.kernelLog(w1, "NVRM: Xid (PCI:" + pci + "): 13, pid=4242, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address");
        Gpuctl.Run app = Gpuctl.run("verify", inventory.toString());
        assertEquals(5, app.code(), "a job's own Xid: verify passes with a warning\n" + app);
        assertTrue(app.out().contains("WARN\n      warn:  1 application Xid error(s) in the kernel log since boot (a job's fault, not the GPU's):\n"
            + "             Xid 13 (Graphics Engine Exception) at "), app::toString);
        assertTrue(app.out().contains(" on GPU 0 (" + uuid + ", PCI " + pci + "), by process python3 (pid 4242): \"Graphics SM Warp Exception"), app::toString);
        assertTrue(app.out().lines().filter(l -> l.contains("WARN")).allMatch(l -> l.startsWith(w1 + " ")), "on w1 only:\n" + app);

        bed.kernelLog(w1, "NVRM: Xid (PCI:" + pci + "): 79, pid=4242, name=python3, GPU has fallen off the bus.");
        var h = health();
        assertTrue(failed(h.get(w1)).startsWith("1 hardware/driver Xid error(s) in the kernel log since boot:\nXid 79 (GPU has fallen off the bus) at "), h::toString);
        assertTrue(failed(h.get(w1)).contains(" on GPU 0 (" + uuid + ", PCI " + pci + "): \"GPU has fallen off the bus.\" — drain it first (gpuctl drain HOST)"), h::toString);
        assertEquals("", failed(h.get(w2)), h::toString);
        Gpuctl.Run hw = Gpuctl.run("verify", inventory.toString());
        assertEquals(4, hw.code(), "a hardware Xid fails verify\n" + hw);

        bed.clearKernelLog(w1);
        assertEquals("", failed(health().get(w1)));
    }

    @Test @Order(7) void verifySecondsAfterAWorkersRebootIsClean() {
        String w2 = bed.workers().get(1);
        bed.reboot(w2);
        Gpuctl.Run r = Gpuctl.run("verify", inventory.toString());
        assertEquals(0, r.code(), "verify right after " + w2 + " rebooted\n" + r);
    }
}
