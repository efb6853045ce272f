package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Job specs: every field read, every mistake reported at its FILE:LINE:COLUMN, exports checked against storage.nfs. */
class JobSpecLoaderTest {
    static final Inventory EXAMPLE = InventoryLoader.load(Path.of("inventory.example.yaml"));

    static List<String> errors(String yaml, Inventory inv) {
        InventoryException e = assertThrows(InventoryException.class, () -> JobSpecLoader.parse("job.yaml", yaml, inv));
        return e.errors().stream().map(InventoryError::format).toList();
    }

    static List<String> errors(String yaml) { return errors(yaml, EXAMPLE); }

    @Test void theGuidesJob() {
        JobSpec s = JobSpecLoader.load(Path.of("src/test/resources/jobs/detector-train.yaml"), EXAMPLE);
        assertEquals("detector-train", s.name());
        assertEquals("default", s.namespace());
        assertEquals("registry.internal/trainer:cu118", s.image());
        assertEquals(List.of("python", "train.py", "--cfg", "/cfg/exp01.yaml"), s.command());
        assertEquals(2, s.gpus());
        assertEquals("src/test/resources/jobs/detector-train.yaml:5:7", s.gpusAt());
        assertEquals(List.of("WANDB_MODE", "SEED", "NOTE", "EMPTY"), List.copyOf(s.env().keySet()));
        assertEquals("42", s.env().get("SEED"));
        assertEquals("", s.env().get("EMPTY"));
        JobSpec.Mount data = s.dataset().orElseThrow();
        assertEquals(new NfsExport("/export/dataset", true), data.export());
        assertEquals("172.16.10.90", data.server());
        assertEquals("/data", data.mountPath());
        assertEquals(new NfsExport("/export/ckpt", false), s.checkpoint().orElseThrow().export());
        assertEquals("/ckpt", s.checkpoint().orElseThrow().mountPath());
    }

    @Test void theSmallestJob() {
        JobSpec s = JobSpecLoader.parse("job.yaml", "name: a\nnamespace: team-vision\nimage: busybox\ngpus: 1\n", EXAMPLE);
        assertEquals(List.of(), s.command());
        assertEquals(Map.of(), s.env());
        assertTrue(s.dataset().isEmpty() && s.checkpoint().isEmpty());
        assertEquals("team-vision", s.namespace());
    }

    @Test void everyProblemAtOnceWithItsPosition() {
        assertEquals(List.of(
            "job.yaml:1:1: missing required key 'image' in the top level (expected a container image such as registry.internal/trainer:cu118)",
            "job.yaml:1:7: name: 'Detector_Train' is not a valid name (expected at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)",
            "job.yaml:2:1: unknown key 'imgae' in the top level (did you mean 'image'?)",
            "job.yaml:3:14: command: expected a word (a string), got a list",
            "job.yaml:4:7: gpus: expected a whole number of GPUs (1 or more), got a number (1.5) (GPUs are not shared: a job gets whole GPUs)",
            "job.yaml:5:7: env: '1X' is not a variable name (expected letters, digits, '_', '-' and '.', not starting with a digit)",
            "job.yaml:5:20: duplicate key 'A' in env (first at line 5)",
            "job.yaml:6:10: dataset: no export 'imagenet' (storage.nfs exports: /export/dataset, /export/ckpt)",
            "job.yaml:7:13: checkpoint: export /export/dataset is readOnly in the inventory; checkpoints need a read-write export"),
            errors("""
                name: Detector_Train
                imgae: x
                command: [a, [b]]
                gpus: 1.5
                env: {1X: a, A: b, A: c}
                dataset: imagenet
                checkpoint: /export/dataset
                """));
    }

    @Test void gpus() {
        assertEquals(List.of("job.yaml:1:40: gpus: 0 (expected at least 1: a job without GPUs does not belong on GPU nodes)"),
            errors("{name: a, image: b, command: [], gpus: 0}").subList(1, 2));
        assertTrue(errors("{name: a, image: b, command: [], gpus: 0}").get(0).contains("command: the list is empty"));
        assertEquals(List.of("job.yaml:1:1: missing required key 'gpus' in the top level (expected the number of whole GPUs the job needs, at least 1)"),
            errors("{name: a, image: b}"));
        assertEquals(List.of("job.yaml:1:27: gpus: expected a whole number of GPUs (1 or more), got a string ('two') (GPUs are not shared: a job gets whole GPUs)"),
            errors("{name: a, image: b, gpus: two}"));
        Inventory noGpu = InventoryLoader.parse("inv.yaml", """
            cluster: { name: c, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
              - { name: w, address: 10.0.0.2, role: worker, gpu: false }
            """, Path.of("/tmp"), Map.of("HOME", "/root"));
        assertEquals(List.of("job.yaml:1:27: gpus: the inventory inv.yaml has no GPU node (every node has gpu: false)"),
            errors("{name: a, image: b, gpus: 1}", noGpu));
        assertEquals(List.of("job.yaml:1:39: dataset: the inventory inv.yaml has no storage.nfs (add the NFS server and its exports there,"
            + " e.g. storage: { nfs: { server: master, exports: [ { path: /export/dataset } ] } })", "job.yaml:1:27: gpus: the inventory inv.yaml has no GPU node (every node has gpu: false)"),
            errors("{name: a, image: b, gpus: 1, dataset: x}", noGpu).stream().sorted((a, b) -> b.compareTo(a)).toList());
    }

    @Test void mounts() {
        assertEquals(List.of("job.yaml:1:60: checkpoint: mountPath /data is the dataset's too (expected another directory)"),
            errors("{name: a, image: b, gpus: 1, dataset: dataset, checkpoint: {export: ckpt, mountPath: /data}}"));
        assertEquals(List.of("job.yaml:1:68: checkpoint.mountPath: '/ckpt/../etc' is not usable: it has a '..' part (expected an absolute"
            + " path other than /, of letters, digits, '.', '_', '-', '+' and '@', without '.' or '..' parts, '//' or a trailing '/')"),
            errors("{name: a, image: b, gpus: 1, checkpoint: {export: ckpt, mountPath: /ckpt/../etc}}"));
        for (String bad : List.of("'/ckpt/a\\b'", "'/ckpt/a\"b'", "\"/ckpt/a b\"", "/ckpt/a:b", "\"/ckpt/a#b\"", "\"/ckpt/a,b\"", "\"/ckpt/x\\ny\"")) {
            List<String> e = errors("{name: a, image: b, gpus: 1, checkpoint: {export: ckpt, mountPath: " + bad + "}}");
            assertEquals(1, e.size(), e::toString);
            assertTrue(e.get(0).startsWith("job.yaml:1:68: checkpoint.mountPath: '") && e.get(0).contains("' is not usable: it contains "),
                e.get(0));
        }
        assertEquals(List.of("job.yaml:1:42: missing required key 'export' in checkpoint (expected an export of storage.nfs, by path or name)",
                "job.yaml:1:43: unknown key 'path' in checkpoint (name the export with export: and its path or name, e.g. export: /export/ckpt)"),
            errors("{name: a, image: b, gpus: 1, checkpoint: {path: ckpt}}"));
    }

    @Test void yamlItselfIsCheckedAsForTheInventory() {
        assertTrue(errors("name: a\nname: b\nimage: c\ngpus: 1\n").get(0).startsWith("job.yaml:2:1: duplicate key 'name'"));
        assertTrue(errors("- a\n").get(0).equals("job.yaml:1:1: the job spec: expected a mapping, got a list"),
            errors("- a\n").toString());
        assertEquals(List.of("job.yaml: the job spec is empty (expected name:, image: and gpus:)"), errors(""));
        assertTrue(errors("name: [\n").get(0).startsWith("job.yaml:"), errors("name: [\n").toString());
    }
}
