package dev.gpuctl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryError;
import dev.gpuctl.inventory.InventoryException;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.inventory.NfsExport;
import dev.gpuctl.inventory.Quantity;
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

    @Test void everyPodSetting() {
        JobSpec s = JobSpecLoader.load(Path.of("src/test/resources/jobs/detector-train-full.yaml"), EXAMPLE);
        JobSpec.Pod p = s.pod();
        assertEquals(List.of("--cfg", "/cfg/exp01.yaml", "--epochs", "90"), p.args());
        assertEquals(java.util.Optional.of("/workspace"), p.workingDir());
        assertEquals(Map.of("WANDB_MODE", "offline"), s.env());
        assertEquals(Map.of("WANDB_API_KEY", new JobSpec.SecretRef("wandb", "api-key")), p.secretEnv());
        assertEquals(List.of("gpu-type", "topology.kubernetes.io/zone"), List.copyOf(p.nodeSelector().keySet()));
        assertEquals(3, p.tolerations().size());
        assertEquals(new JobSpec.Toleration("nvidia.com/gpu", "Exists", "", "", java.util.Optional.empty()), p.tolerations().get(1));
        assertEquals(java.util.Optional.of(300L), p.tolerations().get(2).seconds());
        assertEquals(List.of("regcred"), p.imagePullSecrets());
        assertEquals(new JobSpec.Resources(java.util.Optional.of("4"), java.util.Optional.of("8500m"), java.util.Optional.of("16Gi"),
            java.util.Optional.of("32Gi")), p.resources());
        assertEquals(java.util.Optional.of("8Gi"), p.shm());
        assertEquals(java.util.Optional.of(86400L), p.ttlSecondsAfterFinished());
        assertEquals(java.util.Optional.of(172800L), p.activeDeadlineSeconds());
        assertEquals(JobSpec.Pod.NONE, JobSpecLoader.parse("job.yaml", "{name: a, image: b, gpus: 1}", EXAMPLE).pod());
    }

    @Test void podSettingMistakesAtTheirPosition() {
        assertEquals(List.of(
            "job.yaml:1:30: unknown key 'cpu' in the top level (expected one of: name, namespace, image, command, gpus, env, dataset, checkpoint, "
                + "args, workingDir, nodeSelector, tolerations, imagePullSecrets, resources, shm, ttlSecondsAfterFinished, activeDeadlineSeconds, migProfile)",
            "job.yaml:2:7: args: the list is empty (leave args out to run the image's default arguments)",
            "job.yaml:3:13: workingDir: 'work' is not an absolute path (expected a directory such as /workspace)",
            "job.yaml:4:16: nodeSelector: 'bad key!' is not a label key (expected an optional DNS prefix and '/', then at most 63 letters, digits, '-', '_' and '.')",
            "job.yaml:4:35: nodeSelector.ok: expected a label value (at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit), got a list",
            "job.yaml:6:37: tolerations[0].value: operator Exists takes no value (leave value out, or use Equal)",
            "job.yaml:6:48: tolerations[0].effect: 'Never' (expected NoSchedule, PreferNoSchedule, NoExecute, or leave it out for every effect)",
            "job.yaml:7:3: tolerations[1]: no key needs operator: Exists (which tolerates every taint); give key: or operator: Exists",
            "job.yaml:7:60: tolerations[1].tolerationSeconds: only with effect: NoExecute",
            "job.yaml:8:20: imagePullSecrets: 'Reg_Cred' is not a Secret's name (expected lowercase letters, digits, '-' and '.', such as regcred)",
            "job.yaml:10:3: unknown key 'request' in resources (did you mean 'requests'?)",
            "job.yaml:11:17: resources.limits.cpu: '-1' is not a quantity greater than zero (expected cores such as 4 or 500m; suffixes Ki Mi Gi Ti, k M G T, m for thousandths)",
            "job.yaml:11:21: unknown key 'nvidia.com/gpu' in resources.limits (GPUs are gpus: at the top level of the job spec)",
            "job.yaml:12:6: shm: '8GB' is not a quantity greater than zero (expected a size such as 8Gi; suffixes Ki Mi Gi Ti, k M G T, m for thousandths)",
            "job.yaml:13:26: ttlSecondsAfterFinished: expected a whole number of seconds (0 or more), got a string ('1d') (e.g. 86400 for a day)",
            "job.yaml:14:24: activeDeadlineSeconds: expected a whole number of seconds (1 or more), got a number (0) (e.g. 86400 for a day)",
            "job.yaml:15:14: missing required key 'key' in env.TOKEN (expected a key of that Secret)",
            "job.yaml:15:23: env.TOKEN.secret: 'My Secret' is not a Secret's name (expected lowercase letters, digits, '-' and '.')"),
            errors("""
                {name: a, image: b, gpus: 1, cpu: 2,
                args: [],
                workingDir: work,
                nodeSelector: {"bad key!": x, ok: [y]},
                tolerations: [
                  {key: k, operator: Exists, value: v, effect: Never},
                  {operator: Equal, effect: NoSchedule, tolerationSeconds: 5}],
                imagePullSecrets: [Reg_Cred],
                resources: {
                  request: {cpu: 1},
                  limits: {cpu: -1, nvidia.com/gpu: 1}},
                shm: 8GB,
                ttlSecondsAfterFinished: 1d,
                activeDeadlineSeconds: 0,
                env: {TOKEN: {secret: My Secret}}}
                """));
    }

    @Test void requestsAboveLimitsAndShmAboveTheMemoryLimit() {
        assertEquals(List.of(
            "job.yaml:1:58: resources.requests.cpu: 2 is more than the limit 1500m (Kubernetes refuses a request above its limit; expected at most 1500m)",
            "job.yaml:1:69: resources.requests.memory: 64Gi is more than the limit 32Gi (Kubernetes refuses a request above its limit; expected at most 32Gi)",
            "job.yaml:1:118: shm: 40Gi is more than resources.limits.memory 32Gi (a memory-backed /dev/shm counts against the container's memory limit; expected at most 32Gi)"),
            errors("{name: a, image: b, gpus: 1, resources: {requests: {cpu: 2, memory: 64Gi}, limits: {cpu: 1500m, memory: 32Gi}}, shm: 40Gi}"));
        JobSpec ok = JobSpecLoader.parse("job.yaml", "{name: a, image: b, gpus: 1, resources: {requests: {cpu: 0.5, memory: 1G},"
            + " limits: {cpu: 500m, memory: 1Gi}}, shm: 1Gi}", EXAMPLE);
        assertEquals(java.util.Optional.of("0.5"), ok.pod().resources().cpuRequest());
    }

    @Test void quantitiesAsKubernetesReadsThem() {
        assertEquals(0, new java.math.BigDecimal("0.5").compareTo(Quantity.parse("500m").get()));
        assertEquals(0, new java.math.BigDecimal(17179869184L).compareTo(Quantity.parse("16Gi").get()));
        assertEquals(0, new java.math.BigDecimal("1000").compareTo(Quantity.parse("1e3").get()));
        assertEquals(0, new java.math.BigDecimal("1.5e9").compareTo(Quantity.parse("1.5G").get()));
        for (String bad : List.of("", "GB", "8GB", "1.2.3", "-1", "1 Gi", "0x10", "Gi")) {
            assertTrue(Quantity.parse(bad).isEmpty(), bad);
        }
    }

    @Test void aSecretsValueIsNeverInTheSpec() {
        List<String> e = errors("{name: a, image: b, gpus: 1, env: {TOKEN: {secret: s, key: k, value: hunter2}}}");
        assertEquals(List.of("job.yaml:1:63: unknown key 'value' in env.TOKEN (a value from a Secret is { secret: NAME, key: KEY };"
            + " a plain value is written as it is)"), e);
    }

    @Test void yamlItselfIsCheckedAsForTheInventory() {
        assertTrue(errors("name: a\nname: b\nimage: c\ngpus: 1\n").get(0).startsWith("job.yaml:2:1: duplicate key 'name'"));
        assertTrue(errors("- a\n").get(0).equals("job.yaml:1:1: the job spec: expected a mapping, got a list"),
            errors("- a\n").toString());
        assertEquals(List.of("job.yaml: the job spec is empty (expected name:, image: and gpus:)"), errors(""));
        assertTrue(errors("name: [\n").get(0).startsWith("job.yaml:"), errors("name: [\n").toString());
    }
}
