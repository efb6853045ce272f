package dev.gpuctl.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.text.Fixtures;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** MIG as nvidia-smi reports it: the real H200's profiles and MIG-disabled modes, a GPU without MIG, MIG instances. */
class NvidiaMigTest {
    static final String LGIP = Fixtures.read("nvidia-smi/nvidia-smi-mig-lgip_h200.txt");
    static final Mig SINGLE = new Mig(Mig.Strategy.SINGLE, List.of("1g.18gb"));
    static final Mig MIXED = new Mig(Mig.Strategy.MIXED, List.of("3g.71gb", "1g.18gb", "2g.35gb", "1g.18gb"));

    /** The answer after {@code $ COMMAND} in a queries file, up to its rc= line. */
    static String answer(String file, String command) {
        String text = Fixtures.read(file);
        int at = text.indexOf("$ " + command + "\n");
        String rest = text.substring(at + command.length() + 3);
        return rest.substring(0, rest.indexOf("rc="));
    }

    @Test void theRealH200ProfilesAreRead() {
        List<NvidiaMig.Profile> p = NvidiaMig.parseProfiles(LGIP);
        assertEquals(7, p.size());
        assertEquals(new NvidiaMig.Profile(0, "1g.18gb", 19, 7, 7), p.get(0));
        assertEquals(new NvidiaMig.Profile(0, "7g.141gb", 0, 1, 1), p.get(6));
        assertEquals(Map.of("1g.18gb", 7, "1g.18gb+me", 1, "1g.35gb", 4, "2g.35gb", 3, "3g.71gb", 2, "4g.71gb", 1, "7g.141gb", 1),
            NvidiaMig.totals(p));
        assertEquals(NvidiaMig.totals(p), NvidiaMig.decode(NvidiaMig.encode(NvidiaMig.totals(p))));
    }

    @Test void theRealH200WithMigDisabledSupportsItAndHasNoInstances() {
        String csv = answer("h200/health/mig-disabled-queries.txt", "nvidia-smi --query-gpu=name,mig.mode.current,mig.mode.pending --format=csv");
        // gpuctl asks for the index too; the capture starts at the name
        List<NvidiaMig.GpuMode> modes = NvidiaMig.parseModes("0, " + csv.lines().skip(1).findFirst().orElseThrow());
        assertEquals(List.of(new NvidiaMig.GpuMode(0, "NVIDIA H200", "Disabled", "Disabled")), modes);
        assertTrue(modes.get(0).supported());
        assertFalse(modes.get(0).enabled());
        assertFalse(modes.get(0).pendingChange());
        assertEquals(List.of(), NvidiaMig.parseInstances(answer("h200/health/mig-disabled-queries.txt", "nvidia-smi mig -lgi")));
        assertEquals(Optional.empty(), NvidiaMig.supportProblem("gpu1", modes, LGIP, SINGLE));
        assertEquals(Optional.empty(), NvidiaMig.supportProblem("gpu1", modes, LGIP, MIXED));
    }

    @Test void aGpuWithoutMigIsRefusedNamingHostModelAndWhy() {
        String file = "nvidia-smi/mig/no-mig-queries.txt";
        List<NvidiaMig.GpuMode> modes = NvidiaMig.parseModes(answer(file, NvidiaMig.MODES));
        assertFalse(modes.get(0).supported());
        String p = NvidiaMig.supportProblem("w2", modes, answer(file, "nvidia-smi mig -lgip"), SINGLE).orElseThrow();
        assertEquals("w2: MIG is asked for (gpuSharing.mig: single 1g.18gb), but its GPU 0, NVIDIA GeForce RTX 4090, does not"
            + " support MIG (nvidia-smi: mig.mode.current [N/A]; nvidia-smi mig -lgip: No MIG-supported devices found) — remove mig"
            + " from this node's gpuSharing (time-slicing or MPS share a GPU without MIG)", p);
    }

    @Test void aProfileTheModelLacksOrTooManyInstancesAreRefusedWithTheProfilesOffered() {
        var modes = List.of(new NvidiaMig.GpuMode(0, "NVIDIA H200", "Disabled", "Disabled"));
        assertEquals(Optional.of("w1: its GPUs (NVIDIA H200) offer no MIG profile 1g.10gb; they offer 1g.18gb, 1g.18gb+me, 1g.35gb,"
                + " 2g.35gb, 3g.71gb, 4g.71gb, 7g.141gb (nvidia-smi mig -lgip) — set gpuSharing.mig.profile to one of these"),
            NvidiaMig.supportProblem("w1", modes, LGIP, new Mig(Mig.Strategy.SINGLE, List.of("1g.10gb"))));
        assertTrue(NvidiaMig.supportProblem("w1", modes, LGIP, new Mig(Mig.Strategy.MIXED, List.of("4g.71gb", "4g.71gb")))
            .orElseThrow().contains("fit at most 1 instance of 4g.71gb, the inventory asks 2 per GPU"));
        assertTrue(NvidiaMig.supportProblem("w1", modes, LGIP, new Mig(Mig.Strategy.MIXED, List.of("3g.71gb", "3g.71gb", "2g.35gb")))
            .orElseThrow().contains("take 8 compute slices, its GPUs (NVIDIA H200) have 7"));
    }

    @Test void layoutsAndWhatThePluginAdvertises() {
        Map<String, Integer> totals = NvidiaMig.totals(NvidiaMig.parseProfiles(LGIP));
        assertEquals(java.util.Collections.nCopies(7, "1g.18gb"), NvidiaMig.layout(SINGLE, totals));
        assertEquals(List.of("3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"), NvidiaMig.layout(MIXED, totals), "largest made first");
        assertEquals(Map.of("nvidia.com/gpu", 14), NvidiaMig.resources(SINGLE, 2, totals));
        assertEquals(Map.of("nvidia.com/gpu", 2), NvidiaMig.resources(new Mig(Mig.Strategy.SINGLE, List.of("3g.71gb")), 1, totals));
        assertEquals(Map.of("nvidia.com/mig-1g.18gb", 4, "nvidia.com/mig-2g.35gb", 2, "nvidia.com/mig-3g.71gb", 2),
            NvidiaMig.resources(MIXED, 2, totals));
    }

    @Test void instancesAreReadAndComparedWithTheLayout() {
        List<NvidiaMig.Instance> seven = NvidiaMig.parseInstances(Fixtures.read("nvidia-smi/mig/lgi-h200-7x1g.18gb.txt"));
        assertEquals(7, seven.size());
        assertEquals(new NvidiaMig.Instance(0, "1g.18gb", 19, 13, "6:1"), seven.get(6));
        Map<String, Integer> totals = NvidiaMig.totals(NvidiaMig.parseProfiles(LGIP));
        assertEquals(Optional.empty(), NvidiaMig.layoutProblem(List.of(0), NvidiaMig.layout(SINGLE, totals), seven));
        assertEquals(Optional.of("GPU 1 has no GPU instance, expected 7 × 1g.18gb each"),
            NvidiaMig.layoutProblem(List.of(0, 1), NvidiaMig.layout(SINGLE, totals), seven));

        List<NvidiaMig.Instance> mixed = NvidiaMig.parseInstances(Fixtures.read("nvidia-smi/mig/lgi-h200-mixed.txt"));
        assertEquals(5, mixed.size());
        assertEquals(Optional.of("GPU 1 has 3g.71gb, expected 2 × 1g.18gb + 2g.35gb + 3g.71gb each"),
            NvidiaMig.layoutProblem(List.of(0, 1), NvidiaMig.layout(MIXED, totals), mixed));
        assertEquals(Optional.of("GPU 0 has 2 × 1g.18gb + 2g.35gb + 3g.71gb, expected 7 × 1g.18gb each"),
            NvidiaMig.layoutProblem(List.of(0), NvidiaMig.layout(SINGLE, totals), mixed));
        assertEquals(List.of(), NvidiaMig.parseInstances("No MIG-enabled devices found.\n"));
    }
}
