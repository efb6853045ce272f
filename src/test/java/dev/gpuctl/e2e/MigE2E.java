package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * MIG on the test bed's GPU worker: asked on a GPU model without MIG (an emulated GeForce RTX 4090), bootstrap is
 * refused at preflight, naming the host and the model, and nothing on the host changes; on an emulated H200, MIG
 * single 1g.18gb turns MIG mode on, cuts the GPU into 7 instances, and the device plugin (strategy single) advertises
 * them as nvidia.com/gpu = 7; a re-run changes nothing (the same instances, not made anew).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MigE2E {
    static final String KUBECTL = "kubectl --kubeconfig=/etc/kubernetes/admin.conf ";
    static final String HOST_STATE = "nvidia-smi --query-gpu=index,name,mig.mode.current,mig.mode.pending --format=csv,noheader;"
        + " nvidia-smi mig -lgi; ls /etc/kubernetes 2>&1; apt-mark showhold; ls /var/lib/gpuctl 2>&1;"
        + " cat /var/lib/gpuctl-emu/mig-mode.json 2>&1; dpkg-query -W -f='${Package} ${Version}\\n' | md5sum";
    static BootstrappedCluster.Lease cluster;
    static TestBed bed;
    static String worker;
    static Path inventory;

    /**
     * The shared 1+1 cluster (restored from its snapshot; this class bootstrapped a bed of its own before, ~50 s): MIG is
     * asked of a cluster already running, as an operator adds it to the inventory later; the refusal on a GPU without
     * MIG changes nothing there either.
     */
    @BeforeAll static void up() throws IOException {
        cluster = BootstrappedCluster.acquire(1);
        bed = cluster.bed();
        worker = bed.workers().get(0);
        Path plain = cluster.inventory();
        inventory = plain.resolveSibling("inventory-mig.yaml");
        String text = Files.readString(plain);
        assertTrue(text.contains("  packages: system\n"), text);
        Files.writeString(inventory, text.replace("  packages: system\n",
            "  packages: system\n  gpuSharing: { mig: { strategy: single, profile: 1g.18gb } }\n"));
    }

    @AfterAll static void down() {
        BootstrappedCluster.release(cluster);
    }

    @Test @Order(1) void refusedBeforeAnyChangeOnAGpuModelWithoutMig() {
        bed.ok(worker, "echo 'NVIDIA GeForce RTX 4090' > /etc/gpuctl-testbed/gpu-model");
        Map<String, String> before = bed.fingerprints(HOST_STATE);
        assertTrue(before.get(worker).startsWith("0, NVIDIA GeForce RTX 4090, [N/A], [N/A]\nNo MIG-supported devices found."), before.get(worker));
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        System.out.println("$ gpuctl bootstrap inventory-mig.yaml  (h1: GeForce RTX 4090)\n" + r.out() + r.err());
        assertEquals(3, r.code(), r::toString);
        assertTrue(r.err().contains(worker + ": MIG is asked for (gpuSharing.mig: single 1g.18gb), but its GPU 0, NVIDIA GeForce RTX 4090,"
            + " does not support MIG (nvidia-smi: mig.mode.current [N/A]; nvidia-smi mig -lgip: No MIG-supported devices found)"), r::toString);
        assertEquals(before, bed.fingerprints(HOST_STATE), "a refused run changed a host");
        Gpuctl.Run plan = Gpuctl.run("plan", inventory.toString());
        assertTrue(plan.out().contains(worker + ": MIG single 1g.18gb"), plan::toString);
    }

    @Test @Order(2) void singleOnAnH200GivesSevenGpusAndAReRunChangesNothing() {
        bed.ok(worker, "rm -f /etc/gpuctl-testbed/gpu-model");
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals("0, NVIDIA H200, Enabled, Enabled", bed.ok(worker, "nvidia-smi --query-gpu=index,name,mig.mode.current,mig.mode.pending"
            + " --format=csv,noheader").strip());
        assertEquals(7, bed.ok(worker, "nvidia-smi -L").lines().filter(l -> l.startsWith("  MIG 1g.18gb ")).count());
        String m = bed.master();
        assertEquals("7", bed.ok(m, KUBECTL + "get node " + worker + " -o jsonpath='{.status.allocatable.nvidia\\.com/gpu}'").strip());
        assertEquals("mig-single-1g.18gb", bed.ok(m, KUBECTL + "get node " + worker
            + " -o jsonpath='{.metadata.labels.nvidia\\.com/device-plugin\\.config}'").strip());
        assertTrue(bed.ok(m, KUBECTL + "-n kube-system get configmap nvidia-device-plugin-configs -o jsonpath='{.data.mig-single-1g\\.18gb}'")
            .contains("migStrategy: single"));
        Map<String, String> after = bed.fingerprints(HOST_STATE);
        Gpuctl.Run again = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertTrue(again.err().lines().anyMatch(l -> l.matches(worker + "\\s+mig\\s+ok .*")), again::toString);
        assertEquals(after, bed.fingerprints(HOST_STATE), "a re-run changed the worker (instances made anew?)");
        Gpuctl.Run verify = Gpuctl.run("verify", inventory.toString());
        assertEquals(0, verify.code(), verify::toString);
    }

    @Test @Order(3) void mixedReCutsTheGpuAndAJobAsksForOneProfile() throws Exception {
        Path mixed = inventory.resolveSibling("inventory-mig-mixed.yaml");
        Files.writeString(mixed, Files.readString(inventory).replace("{ strategy: single, profile: 1g.18gb }",
            "{ strategy: mixed, profile: [1g.18gb, 3g.71gb, 1g.18gb, 2g.35gb] }"));
        Gpuctl.Run r = Gpuctl.run("bootstrap", mixed.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(java.util.List.of("3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"), bed.ok(worker, "nvidia-smi -L").lines()
            .filter(l -> l.startsWith("  MIG ")).map(l -> l.trim().split("\\s+")[1]).sorted(java.util.Comparator.reverseOrder()).toList());
        String alloc = bed.ok(bed.master(), KUBECTL + "get node " + worker + " -o jsonpath='{.status.allocatable}'");
        for (String want : new String[] {"\"nvidia.com/mig-1g.18gb\":\"2\"", "\"nvidia.com/mig-2g.35gb\":\"1\"",
                "\"nvidia.com/mig-3g.71gb\":\"1\"", "\"nvidia.com/gpu\":\"0\""}) {
            assertTrue(alloc.contains(want), want + " in " + alloc);
        }
        assertEquals("mig-mixed-1x3g.71gb-1x2g.35gb-2x1g.18gb", bed.ok(bed.master(), KUBECTL + "get node " + worker
            + " -o jsonpath='{.metadata.labels.nvidia\\.com/device-plugin\\.config}'").strip(), "a new layout, a new config: the plugin restarts");
        Map<String, String> after = bed.fingerprints(HOST_STATE);
        Gpuctl.Run again = Gpuctl.run("bootstrap", mixed.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(after, bed.fingerprints(HOST_STATE), "a re-run changed the worker");

        Path tooBig = mixed.resolveSibling("mig-too-big.yaml");
        Files.writeString(tooBig, "name: mig-big\nimage: registry.internal/trainer:cu118\ncommand: [sleep, \"30\"]\ngpus: 3\nmigProfile: 1g.18gb\n");
        Gpuctl.Run refused = Gpuctl.run("job", "submit", tooBig.toString(), mixed.toString());
        assertEquals(2, refused.code(), refused::toString);
        assertTrue(refused.err().contains("gpus: 3 is more than any node has: the largest, " + worker + ", has 2 nvidia.com/mig-1g.18gb"), refused::toString);
        Path fits = mixed.resolveSibling("mig-job.yaml");
        Files.writeString(fits, "name: mig-a\nimage: registry.internal/trainer:cu118\ncommand: [sleep, \"30\"]\ngpus: 2\nmigProfile: 1g.18gb\n");
        Gpuctl.Run submit = Gpuctl.run("job", "submit", fits.toString(), mixed.toString());
        assertEquals(0, submit.code(), submit::toString);
        long deadline = System.nanoTime() + 60_000_000_000L;
        String node = "";
        while (node.isEmpty() && System.nanoTime() < deadline) {
            node = bed.ok(bed.master(), KUBECTL + "get pods -n default -l job-name=mig-a -o jsonpath='{.items[*].spec.nodeName}'").strip();
            if (node.isEmpty()) Thread.sleep(1000);
        }
        assertEquals(worker, node, "the job's pod is bound to the node offering nvidia.com/mig-1g.18gb");
    }
}
