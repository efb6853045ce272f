package dev.gpuctl.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** nvidia-smi -lms 500 sampling as a real H200 printed it (src/test/resources/h200/health/*-lms500.csv). */
class GpuSamplesTest {
    static final String H200 = "GPU-01bc1429-cdbb-796f-97d8-790afa7693b9";

    static String capture(String name) throws IOException {
        return Files.readString(Path.of("src/test/resources/h200/health", name));
    }

    @Test void theCommandIsTheOneTheCapturesWereTakenWith() {
        assertEquals("nvidia-smi --query-gpu=index,uuid,utilization.gpu,utilization.memory,memory.used,memory.total"
            + " --format=csv,noheader,nounits -lms 500", GpuSamples.COMMAND);
    }

    @Test void aBusyGpuOverItsWindow() throws IOException {
        GpuSamples.Window w = GpuSamples.parse(capture("busy-lms500.csv"));
        assertEquals(Optional.empty(), w.problem());
        assertEquals(7, w.samples().size());
        assertEquals(new GpuSamples.Sample(0, H200, 97, 22, 21887L, 143771L), w.samples().get(0));
        assertEquals(List.of(new GpuSamples.Gpu(0, H200, 7, 99, 97, 21887L, 143771L)), w.gpus());
    }

    @Test void heldIdleHoldsMemoryAtZeroPercentAndIdleHoldsNothing() throws IOException {
        assertEquals(List.of(new GpuSamples.Gpu(0, H200, 7, 0, 0, 21007L, 143771L)), GpuSamples.parse(capture("held-idle-lms500.csv")).gpus());
        assertEquals(List.of(new GpuSamples.Gpu(0, H200, 7, 0, 0, 0L, 143771L)), GpuSamples.parse(capture("idle-lms500.csv")).gpus());
    }

    @Test void severalGpusAreKeptApartInTheOrderFirstSeen() throws IOException {
        // two GPUs, as one -lms loop prints them: GPU 0 busy, GPU 1 held idle, sample after sample
        List<String> busy = capture("busy-lms500.csv").lines().toList();
        List<String> held = capture("held-idle-lms500.csv").lines().map(l -> l.replace("0, GPU-01bc", "1, GPU-99bc")).toList();
        StringBuilder two = new StringBuilder();
        for (int i = 0; i < 2; i++) two.append(busy.get(i)).append('\n').append(held.get(i)).append('\n');
        var gpus = GpuSamples.parse(two.toString()).gpus();
        assertEquals(2, gpus.size());
        assertEquals(1, gpus.get(1).index());
        assertEquals(2, gpus.get(1).samples());
        assertEquals(0, gpus.get(1).utilMax());
        assertEquals(97, gpus.get(0).utilMax());
    }

    @Test void whatIsNoSampleIsTheProblemAndNaIsNoNumber() {
        GpuSamples.Window w = GpuSamples.parse("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.173\n");
        assertTrue(w.samples().isEmpty());
        assertEquals(Optional.of("Failed to initialize NVML: Driver/library version mismatch NVML library version: 580.173"), w.problem());
        var na = GpuSamples.parse("0, " + H200 + ", [N/A], [N/A], 120, 143771\n").gpus().get(0);
        assertEquals(null, na.utilMax());
        assertEquals(120L, na.memoryUsedMib());
    }
}
