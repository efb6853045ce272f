package dev.gpuctl.gpu;

import dev.gpuctl.text.HostConfException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Judges a GPU host's health from what the NVIDIA driver and the kernel report: the loaded kernel module against the
 * NVML library ({@code nvidia-smi} and /proc/driver/nvidia/version), the GPUs nvidia-smi lists against
 * those recorded at bootstrap (the node annotation's record), Xid errors in the kernel log, and persistence mode;
 * memory errors ({@code nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER}) are {@link GpuMemory}'s. Every problem says its cause and the one fix. Pure functions.
 */
public final class GpuHealth {
    private GpuHealth() {}

    /** What to do with a node whose GPU hardware is at fault before anything else. */
    static final String DRAIN = "drain it first (gpuctl drain HOST), so that no job is scheduled onto the GPU";

    // ------------------------------------------------------------------ kernel module vs NVML library

    private static final Pattern NVML_LIBRARY = Pattern.compile("(?m)^NVML library version:\\s*(\\S+)\\s*$");

    /**
     * The kernel module against the user-space driver. {@code smiOutput} is stdout and stderr of
     * {@code nvidia-smi --query-gpu=driver_version --format=csv,noheader} and {@code smiExit} its exit status;
     * {@code procVersion} the text of /proc/driver/nvidia/version (empty when the file is absent). Empty when they
     * agree; a problem with its cause and fix otherwise ("Failed to initialize NVML: Driver/library version
     * mismatch": the driver package was upgraded under the loaded module).
     */
    public static Optional<String> driverMismatch(String smiOutput, int smiExit, String procVersion) {
        return driverMismatch(smiOutput, smiExit, KernelModule.parse(procVersion));
    }

    /**
     * The loaded kernel module's version as a probe learned it (/proc/driver/nvidia/version, the fact's text); empty
     * when no module is loaded or the file says no version.
     */
    public record KernelModule(Optional<String> version) {
        public static KernelModule parse(String procVersion) { return new KernelModule(NvidiaSmi.driverVersion(procVersion)); }
    }

    /** As {@link #driverMismatch(String, int, String)}, with the kernel module already read. */
    public static Optional<String> driverMismatch(String smiOutput, int smiExit, KernelModule kernelModule) {
        Optional<String> module = kernelModule.version();
        String moduleText = module.map(v -> "the loaded kernel module is " + v).orElse("the kernel module version is unknown");
        if (smiOutput.contains("Driver/library version mismatch")) {
            Matcher m = NVML_LIBRARY.matcher(smiOutput);
            String library = m.find() ? ", the NVML library is " + m.group(1) : "";
            return Optional.of("Driver/library version mismatch: " + moduleText + library
                + " (the driver package was upgraded without a reboot); every CUDA container fails with"
                + " \"Failed to initialize NVML: Driver/library version mismatch\" — fix: reboot the node (drain it first:"
                + " gpuctl drain HOST), or, when no process uses a GPU, reload the module"
                + " (rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia; modprobe nvidia)");
        }
        if (smiExit != 0) {
            var scan = NvidiaSmi.parseList(onlyFailures(smiOutput));
            return Optional.of(scan.problem().orElse("nvidia-smi failed (exit " + smiExit + "): " + oneLine(smiOutput)));
        }
        Set<String> reported = new LinkedHashSet<>();
        smiOutput.lines().map(String::strip).filter(l -> !l.isEmpty()).forEach(reported::add);
        if (module.isPresent() && !reported.isEmpty() && !(reported.size() == 1 && reported.contains(module.get()))) {
            return Optional.of(moduleText + " but nvidia-smi reports driver " + String.join(", ", reported)
                + " — fix: reboot the node (drain it first: gpuctl drain HOST)");
        }
        return Optional.empty();
    }

    /**
     * The NVML library's answer about the driver, read from preflight's one {@code nvidia-smi --query-gpu=}
     * {@link NvidiaSmi#QUERY_FIELDS} (so that no second nvidia-smi is started for it): its exit status and its output
     * as {@code nvidia-smi --query-gpu=driver_version --format=csv,noheader} would have printed it, which is what
     * {@link #driverMismatch} judges. A CSV row of the query becomes its driver_version value; every other line (a
     * failure such as "Failed to initialize NVML: Driver/library version mismatch", which nvidia-smi prints whatever
     * the query asks) is kept as it is.
     */
    public record DriverAnswer(int exit, String output) {
        private static final int DRIVER_COLUMN = List.of(NvidiaSmi.QUERY_FIELDS.split(",")).indexOf("driver_version");
        private static final int COLUMNS = NvidiaSmi.QUERY_FIELDS.split(",").length;

        /** From the exit status and output of {@link NvidiaSmi#QUERY_FIELDS}' query (no header, no units). */
        public static DriverAnswer ofQuery(int exit, String queryOutput) {
            List<String> lines = new ArrayList<>();
            for (String line : queryOutput.split("\\R", -1)) {
                String[] values = line.split(", ", -1);
                // counted from the end: a GPU's name before it could hold ", ", the fields after it cannot
                lines.add(values.length >= COLUMNS ? values[values.length - COLUMNS + DRIVER_COLUMN].strip() : line);
            }
            return new DriverAnswer(exit, String.join("\n", lines));
        }

        /** The fact's text: the exit status on the first line, the output after it. */
        public String text() { return exit + "\n" + output; }

        /** Reads {@link #text()}. */
        public static DriverAnswer parse(String text) {
            int nl = text.indexOf('\n');
            String head = nl < 0 ? text : text.substring(0, nl);
            try {
                return new DriverAnswer(Integer.parseInt(head.strip()), nl < 0 ? "" : text.substring(nl + 1));
            } catch (NumberFormatException e) {
                throw new HostConfException("not an nvidia-smi answer (no exit status first): " + head);
            }
        }
    }

    static String onlyFailures(String output) {
        StringBuilder b = new StringBuilder();
        for (String l : output.split("\\R")) {
            if (!l.isBlank() && !l.startsWith("GPU ")) b.append(l).append('\n');
        }
        return b.toString();
    }

    // ------------------------------------------------------------------ GPUs recorded at bootstrap (node annotation)

    /** One GPU of the record: its index then, and its UUID. */
    public record Recorded(int index, String uuid) {}

    /**
     * The record of GPUs kept in the node annotation: "INDEX:UUID" per GPU, comma-separated ("0:GPU-01bc...,1:GPU-6a9b...").
     * A UUID keeps only letters, digits and '-' (what NVIDIA's UUIDs are made of), so the value is safe in a command line.
     */
    public static String record(List<NvidiaSmi.Gpu> gpus) {
        List<String> parts = new ArrayList<>();
        for (NvidiaSmi.Gpu g : gpus) {
            if (g.uuid() != null) parts.add(g.index() + ":" + g.uuid().replaceAll("[^A-Za-z0-9-]", ""));
        }
        return String.join(",", parts);
    }

    /** Reads {@link #record}'s text back; entries that are not "INDEX:UUID" are skipped. */
    public static List<Recorded> parseRecord(String record) {
        List<Recorded> out = new ArrayList<>();
        for (String part : record.split(",")) {
            String[] iu = part.strip().split(":", 2);
            if (iu.length == 2 && iu[0].matches("\\d{1,4}") && !iu[1].isBlank()) out.add(new Recorded(Integer.parseInt(iu[0]), iu[1].strip()));
        }
        return out;
    }

    /**
     * The GPUs recorded at bootstrap (the node annotation's {@link #record}) against those nvidia-smi lists now (the
     * same form; empty text: it listed none). Empty when every recorded GPU is still there, by UUID (a renumbering is
     * fine); otherwise how many are recorded and listed, and each missing GPU by index and UUID, with the fix.
     */
    public static Optional<String> missingFromRecord(String recorded, String current, String problemNow) {
        List<Recorded> then = parseRecord(recorded);
        List<Recorded> now = parseRecord(current);
        if (now.isEmpty()) {
            return Optional.of(then.size() + " GPU(s) recorded at bootstrap, none listed now"
                + (problemNow.isBlank() ? "" : ": " + oneLine(problemNow)) + " — fix: " + DRAIN
                + ", reboot it; if the GPUs stay missing, check them (lspci, the kernel log) and the driver");
        }
        Set<String> present = new LinkedHashSet<>();
        now.forEach(g -> present.add(g.uuid()));
        List<String> gone = then.stream().filter(g -> !present.contains(g.uuid())).map(g -> "GPU " + g.index() + " (" + g.uuid() + ")").toList();
        if (gone.isEmpty()) return Optional.empty();
        return Optional.of(now.size() + " GPU(s) listed by nvidia-smi, " + then.size() + " recorded at bootstrap; missing: "
            + String.join(", ", gone) + " (fallen off the bus, or failed) — fix: " + DRAIN
            + ", reboot it; if the GPU stays missing, check it (lspci, the kernel log) and have it replaced (RMA)");
    }

    // ------------------------------------------------------------------ Xid errors

    /**
     * Hardware, driver and unlisted Xids in kernel log text (they fail verify): empty without any; else how many,
     * and a row per code and GPU ({@link Xids#rows}) with what to do. Application-caused Xids are left to
     * {@link #xidWarning}.
     */
    public static Optional<String> xidProblem(String kernelLog, List<Xids.Gpu> gpus) {
        List<Xids.Xid> found = Xids.parse(kernelLog);
        List<String> rows = Xids.rows(found, gpus, true);
        if (rows.isEmpty()) return Optional.empty();
        long n = found.stream().filter(x -> x.kind().cause() != Xids.Cause.APPLICATION).count();
        return Optional.of(n + " hardware/driver Xid error(s) in the kernel log since boot:\n" + String.join("\n", rows));
    }

    /** Application-caused Xids in kernel log text (the jobs' own faults): "" without any; else a row each ({@link Xids#rows}). */
    public static String xidWarning(String kernelLog, List<Xids.Gpu> gpus) {
        List<Xids.Xid> found = Xids.parse(kernelLog);
        List<String> rows = Xids.rows(found, gpus, false);
        if (rows.isEmpty()) return "";
        long n = found.stream().filter(x -> x.kind().cause() == Xids.Cause.APPLICATION).count();
        return n + " application Xid error(s) in the kernel log since boot (a job's fault, not the GPU's):\n" + String.join("\n", rows);
    }

    // ------------------------------------------------------------------ persistence mode

    /**
     * GPUs whose persistence mode is not {@code want} ("Enabled"/"Disabled"), from
     * {@code nvidia-smi --query-gpu=index,persistence_mode --format=csv,noheader}; empty when all are.
     */
    public static Optional<String> persistenceProblem(String output, boolean want) {
        String wanted = want ? "Enabled" : "Disabled";
        List<String> wrong = new ArrayList<>();
        int seen = 0;
        for (String line : output.split("\\R")) {
            String[] v = line.split(",\\s*");
            if (v.length != 2 || !v[0].strip().matches("\\d+")) continue;
            seen++;
            if (!v[1].strip().equals(wanted)) wrong.add("GPU " + v[0].strip() + " " + v[1].strip());
        }
        if (seen == 0) return Optional.of("nvidia-smi gave no persistence mode: " + oneLine(output));
        if (wrong.isEmpty()) return Optional.empty();
        return Optional.of("persistence mode should be " + wanted + ": " + String.join(", ", wrong) + " — fix: "
            + (want ? "systemctl enable --now nvidia-persistenced (or nvidia-smi -pm 1)" : "systemctl disable --now nvidia-persistenced; nvidia-smi -pm 0"));
    }

    static String oneLine(String s) {
        String t = s.strip().replaceAll("\\s*\\R\\s*", " ");
        return t.length() > 160 ? t.substring(0, 157) + "..." : t;
    }
}
