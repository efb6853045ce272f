package dev.gpuctl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryException;
import dev.gpuctl.inventory.InventoryLoader;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A job asking for MIG devices (migProfile): its resource in the Job, the fit check on that resource, its mistakes. */
class MigJobTest {
    static final Inventory EXAMPLE = InventoryLoader.load(Path.of("inventory.example.yaml"));

    @Test void migProfileAsksForThatMigResource() {
        JobSpec s = JobSpecLoader.parse("job.yaml", "{name: a, image: b, gpus: 2, migProfile: 1g.18gb}", EXAMPLE);
        assertEquals("nvidia.com/mig-1g.18gb", s.gpuResource());
        Map<String, Object> job = JobManifestTest.parse(JobManifest.render(s));
        Map<String, Object> limits = JobManifestTest.at(job, "spec", "template", "spec", "containers", 0, "resources", "limits");
        assertEquals(Map.of("nvidia.com/mig-1g.18gb", 2), limits);
        JobSpec whole = JobSpecLoader.parse("job.yaml", "{name: a, image: b, gpus: 2}", EXAMPLE);
        assertEquals("nvidia.com/gpu", whole.gpuResource());
    }

    @Test void aWrongProfileIsRefusedAtItsPlace() {
        InventoryException e = assertThrows(InventoryException.class,
            () -> JobSpecLoader.parse("job.yaml", "{name: a, image: b, gpus: 1, migProfile: 1g}", EXAMPLE));
        assertTrue(e.errors().get(0).format().startsWith("job.yaml:1:42: migProfile: '1g' is not a MIG profile name"), e.errors().toString());
    }

    @Test void theFitCheckCountsTheMigResource() {
        JobSpec s = JobSpecLoader.parse("job.yaml", "{name: a, image: b, gpus: 3, migProfile: 1g.18gb}", EXAMPLE);
        String nodes = """
            {"apiVersion": "v1", "kind": "List", "items": [
              {"metadata": {"name": "w1"}, "status": {"allocatable": {"nvidia.com/gpu": "1", "nvidia.com/mig-1g.18gb": "2"}}},
              {"metadata": {"name": "w2"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}}]}
            """;
        Map<String, Integer> mig = new LinkedHashMap<>(GpuUsage.allocatable(nodes, s.gpuResource()));
        assertEquals(Map.of("w1", 2, "w2", 0), mig);
        assertEquals(Optional.of("job.yaml:1:27: gpus: 3 is more than any node has: the largest, w1, has 2 nvidia.com/mig-1g.18gb"
                + " (the cluster); a pod runs on one node, so the job would wait forever (expected at most 2)"),
            JobSubmit.unfit(s, mig, "the cluster"));
        assertTrue(JobSubmit.unfit(s, Map.of("w2", 0), "the cluster").orElseThrow()
            .contains("no node offers nvidia.com/mig-1g.18gb (the cluster); MIG devices of a profile are offered by nodes with"
                + " gpuSharing.mig strategy mixed"));
    }
}
