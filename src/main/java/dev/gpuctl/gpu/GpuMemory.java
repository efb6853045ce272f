package dev.gpuctl.gpu;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A GPU's memory health as {@code nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER} reports it: the report read per
 * GPU ({@link #parseQ}) and judged ({@link #memoryProblems}), each finding with its cause and the one fix
 * ({@link GpuHealth}'s other sources: the driver, the bootstrap record, Xids, persistence). Pure functions.
 */
public final class GpuMemory {
    private GpuMemory() {}

    /** One GPU's section of {@code nvidia-smi -q}: its bus id and each value by its heading path ("Remapped Rows/Pending"). */
    public record Section(String gpu, Map<String, String> values) {
        public Optional<String> get(String path) { return Optional.ofNullable(values.get(path)); }
    }

    private static final Pattern GPU_HEADING = Pattern.compile("^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\\.[0-9A-Fa-f])\\s*$");

    /**
     * Reads {@code nvidia-smi -q} output (whole or with {@code -d}): per GPU, every "key : value" line under its
     * headings, keyed by the headings' path joined with '/'. Indentation is four spaces per level.
     */
    public static List<Section> parseQ(String output) {
        List<Section> gpus = new ArrayList<>();
        Map<String, String> values = null;
        String gpu = null;
        List<String> path = new ArrayList<>();
        for (String raw : output.split("\\R")) {
            if (raw.isBlank()) continue;
            Matcher g = GPU_HEADING.matcher(raw);
            if (g.matches()) {
                if (gpu != null) gpus.add(new Section(gpu, values));
                gpu = g.group(1);
                values = new LinkedHashMap<>();
                path.clear();
                continue;
            }
            if (gpu == null) continue;
            int indent = raw.length() - raw.stripLeading().length();
            int level = Math.max(0, indent / 4 - 1);
            while (path.size() > level) path.remove(path.size() - 1);
            int colon = raw.indexOf(" : ");
            if (colon < 0) {
                path.add(raw.strip());
                continue;
            }
            String key = raw.substring(0, colon).strip();
            String value = raw.substring(Math.min(raw.length(), colon + 3)).strip();
            values.put(path.isEmpty() ? key : String.join("/", path) + "/" + key, value);
        }
        if (gpu != null) gpus.add(new Section(gpu, values));
        return gpus;
    }

    /**
     * Memory faults in {@code nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER} output, one line per finding with its
     * cause and fix: uncorrectable ECC errors since the driver loaded (volatile), memory the GPU cannot repair, a row
     * remapping or page retirement pending (takes effect at the next GPU reset), a remapping that failed, an SRAM
     * error threshold exceeded. Counters that are N/A (page retirement on Hopper) are skipped. An answer that is no
     * such report (nvidia-smi failed) is a finding too.
     */
    public static List<String> memoryProblems(String output) {
        List<Section> gpus = parseQ(output);
        List<String> out = new ArrayList<>();
        if (gpus.isEmpty()) {
            out.add("nvidia-smi -q gave no GPU: " + NvidiaSmi.parseList(GpuHealth.onlyFailures(output)).problem().orElse(GpuHealth.oneLine(output)));
            return out;
        }
        for (Section s : gpus) {
            String who = "GPU " + s.gpu() + ": ";
            long uncorrectable = 0;
            List<String> where = new ArrayList<>();
            for (var e : s.values().entrySet()) {
                String k = e.getKey();
                if (!k.startsWith("ECC Errors/Volatile/")) continue;
                boolean counts = k.contains("Uncorrectable") || k.equals("ECC Errors/Volatile/Double Bit/Total");
                Long n = number(e.getValue());
                if (counts && n != null && n > 0) {
                    uncorrectable += n;
                    where.add(k.substring("ECC Errors/Volatile/".length()) + " " + n);
                }
            }
            if (uncorrectable > 0) {
                out.add(who + uncorrectable + " uncorrectable ECC error(s) since the driver loaded (" + String.join(", ", where)
                    + "): jobs on this GPU may have computed with corrupted memory — fix: " + GpuHealth.DRAIN
                    + ", then reboot it (resets the GPU); if errors return, have the GPU replaced (RMA)");
            }
            if (yes(s, "ECC Errors/Unrepairable Memory")) {
                out.add(who + "memory the GPU cannot repair (Unrepairable Memory: Yes) — fix: " + GpuHealth.DRAIN + " and have the GPU replaced (RMA)");
            }
            if (yes(s, "ECC Errors/SRAM Threshold Exceeded") || yes(s, "ECC Errors/Aggregate/SRAM Threshold Exceeded")) {
                out.add(who + "SRAM error threshold exceeded — fix: " + GpuHealth.DRAIN + " and have the GPU replaced (RMA)");
            }
            for (String p : List.of("ECC Errors/Channel Repair Pending", "ECC Errors/TPC Repair Pending")) {
                if (yes(s, p)) out.add(who + p.substring(p.indexOf('/') + 1) + ": a repair waits for a GPU reset — fix: " + GpuHealth.DRAIN + ", then reboot it");
            }
            if (yes(s, "Retired Pages/Pending Page Blacklist") || yes(s, "Retired Pages/Pending Page Retirement")) {
                out.add(who + "pages with ECC errors wait to be retired at the next GPU reset — fix: " + GpuHealth.DRAIN + ", then reboot it");
            }
            if (yes(s, "Remapped Rows/Remapping Failure Occurred")) {
                out.add(who + "a row remapping failed (no spare rows left) — fix: " + GpuHealth.DRAIN + " and have the GPU replaced (RMA)");
            } else if (yes(s, "Remapped Rows/Pending")) {
                out.add(who + "a row remapping (after an uncorrectable memory error) waits for a GPU reset — fix: " + GpuHealth.DRAIN + ", then reboot it");
            }
        }
        return out;
    }

    private static boolean yes(Section s, String path) {
        return s.get(path).map(v -> v.equalsIgnoreCase("Yes")).orElse(false);
    }

    private static Long number(String v) {
        try {
            return Long.parseLong(v.strip());
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
