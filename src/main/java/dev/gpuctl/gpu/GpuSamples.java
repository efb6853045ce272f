package dev.gpuctl.gpu;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * GPU utilisation sampled over a window: {@code nvidia-smi --query-gpu=}{@value #FIELDS}
 * {@code --format=csv,noheader,nounits -lms 500}, one line per GPU and sample, until it is stopped. Pure.
 */
public final class GpuSamples {
    public static final String FIELDS = "index,uuid,utilization.gpu,utilization.memory,memory.used,memory.total";
    /** Milliseconds between samples ({@code -lms}). */
    public static final int PERIOD_MS = 500;
    public static final String COMMAND = "nvidia-smi --query-gpu=" + FIELDS + " --format=csv,noheader,nounits -lms " + PERIOD_MS;

    private GpuSamples() {}

    /** One line: a GPU at one instant. Utilisation is null where nvidia-smi says [N/A] (a MIG-enabled GPU, say). */
    public record Sample(int index, String uuid, Integer utilGpu, Integer utilMemory, Long memoryUsedMib, Long memoryTotalMib) {}

    /**
     * One GPU over the window.
     *
     * @param samples     how many lines nvidia-smi printed for it
     * @param utilMax     the highest utilization.gpu seen (%), null when never reported
     * @param utilMean    the mean utilization.gpu (%, rounded), null when never reported
     * @param memoryUsedMib the most memory used (MiB) in the window
     */
    public record Gpu(int index, String uuid, int samples, Integer utilMax, Integer utilMean, Long memoryUsedMib,
                      Long memoryTotalMib) {}

    /** What a sampling said: every sample, and lines that were no sample (nvidia-smi's failure, say), in words. */
    public record Window(List<Sample> samples, Optional<String> problem) {
        public Window {
            samples = List.copyOf(samples);
        }

        /** Per GPU (by UUID, in the order first seen): the samples summed up. */
        public List<Gpu> gpus() {
            Map<String, List<Sample>> by = new LinkedHashMap<>();
            for (Sample s : samples) by.computeIfAbsent(s.uuid(), k -> new ArrayList<>()).add(s);
            List<Gpu> out = new ArrayList<>();
            by.forEach((uuid, l) -> {
                Integer max = null;
                long sum = 0;
                int n = 0;
                Long mem = null, total = null;
                for (Sample s : l) {
                    if (s.utilGpu() != null) {
                        max = max == null ? s.utilGpu() : Math.max(max, s.utilGpu());
                        sum += s.utilGpu();
                        n++;
                    }
                    if (s.memoryUsedMib() != null) mem = mem == null ? s.memoryUsedMib() : Math.max(mem, s.memoryUsedMib());
                    if (s.memoryTotalMib() != null) total = s.memoryTotalMib();
                }
                out.add(new Gpu(l.get(0).index(), uuid, l.size(), max, n == 0 ? null : (int) Math.round((double) sum / n), mem, total));
            });
            return out;
        }
    }

    /** Reads {@link #COMMAND}'s output (stdout and stderr together). A line that is no sample is kept as the problem. */
    public static Window parse(String output) {
        List<Sample> out = new ArrayList<>();
        List<String> other = new ArrayList<>();
        for (String raw : output.split("\\R")) {
            String line = raw.strip();
            if (line.isEmpty()) continue;
            String[] v = line.split(",\\s*", -1);
            if (v.length == 6 && v[0].strip().matches("\\d{1,3}") && v[1].strip().startsWith("GPU-")) {
                out.add(new Sample(Integer.parseInt(v[0].strip()), v[1].strip(), integer(v[2]), integer(v[3]), number(v[4]), number(v[5])));
            } else {
                other.add(line);
            }
        }
        Optional<String> problem = other.isEmpty() ? Optional.empty() : Optional.of(String.join(" ", other.subList(0, Math.min(3, other.size()))));
        return new Window(out, problem);
    }

    private static Integer integer(String v) {
        Long n = number(v);
        return n == null ? null : (int) Math.min(Integer.MAX_VALUE, n);
    }

    private static Long number(String v) {
        String t = v.strip();
        return t.matches("\\d{1,15}") ? Long.valueOf(t) : null;
    }
}
