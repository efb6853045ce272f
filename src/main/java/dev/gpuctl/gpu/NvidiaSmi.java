package dev.gpuctl.gpu;

import dev.gpuctl.text.HostConfException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads what the NVIDIA driver reports: {@code nvidia-smi -L}, {@code nvidia-smi --query-gpu=...}
 * (CSV without header, with or without units) and /proc/driver/nvidia/version.
 *
 * <p>A host whose driver cannot answer is a result, not an exception: "No devices were found",
 * "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver", "Failed to
 * initialize NVML: Driver/library version mismatch" and "Unable to determine the device handle"
 * give a {@link GpuScan} with the GPUs that did answer (often none) and the reason in words.
 * Pass nvidia-smi's stdout and stderr together.
 */
public final class NvidiaSmi {

    /** The {@code --query-gpu=} list gpuctl runs (with {@code --format=csv,noheader,nounits}). */
    public static final String QUERY_FIELDS =
            "index,name,uuid,memory.total,driver_version,mig.mode.current,compute_mode,pci.bus_id";

    /** The full command line gpuctl runs for {@link #parseQuery(String)}. */
    public static final String QUERY_COMMAND =
            "nvidia-smi --query-gpu=" + QUERY_FIELDS + " --format=csv,noheader,nounits";

    /**
     * One GPU. Fields not asked for, or that nvidia-smi reports as {@code [N/A]},
     * {@code [Not Supported]} and the like, are {@code null}.
     *
     * @param memoryTotalMib total memory in MiB
     * @param migMode        {@code Enabled} / {@code Disabled}
     * @param computeMode    {@code Default}, {@code Exclusive_Process}, {@code Prohibited}
     * @param pciBusId       like {@code 00000000:00:06.0}
     */
    public record Gpu(int index, String name, String uuid, Long memoryTotalMib, String driverVersion,
                      String migMode, String computeMode, String pciBusId) {
    }

    /**
     * What a host's nvidia-smi said: the GPUs it listed and, when it could not answer (fully),
     * why, in words for a person.
     */
    public record GpuScan(List<Gpu> gpus, Optional<String> problem) {
        public GpuScan {
            gpus = List.copyOf(gpus);
        }

        /** True when GPUs were listed and nothing went wrong. */
        public boolean ok() {
            return problem.isEmpty() && !gpus.isEmpty();
        }
    }

    private static final Pattern LIST_LINE =
            Pattern.compile("^GPU (\\d+): (.*?) \\(UUID: ([^)]+)\\)\\s*$");
    private static final Pattern MIG_LINE = Pattern.compile("^\\s+MIG .*\\(UUID: MIG-[^)]*\\)\\s*$");
    private static final Pattern DRIVER_VERSION = Pattern.compile("\\s(\\d+\\.\\d+(?:\\.\\d+)?)\\s");

    private NvidiaSmi() {
    }

    /**
     * Parses {@code nvidia-smi -L}: {@code GPU 0: NVIDIA H200 (UUID: GPU-...)} lines. MIG device
     * lines under a GPU are not separate GPUs and are skipped. Only index, name and uuid are set.
     *
     * @throws HostConfException for a line that is neither a GPU, a MIG device nor a known failure
     */
    public static GpuScan parseList(String output) {
        List<Gpu> gpus = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (String raw : output.split("\\R")) {
            if (raw.isBlank() || MIG_LINE.matcher(raw).matches()) continue;
            if (isFailure(raw)) {
                problems.add(raw.strip());
                continue;
            }
            Matcher m = LIST_LINE.matcher(raw.stripLeading());
            if (!m.matches()) {
                throw new HostConfException("nvidia-smi -L printed a line gpuctl does not understand: " + raw.strip());
            }
            gpus.add(new Gpu(Integer.parseInt(m.group(1)), m.group(2).strip(), m.group(3).strip(),
                    null, null, null, null, null));
        }
        return new GpuScan(gpus, explain(problems, output));
    }

    /** Parses the output of {@link #QUERY_COMMAND} (fields {@link #QUERY_FIELDS}, no header, no units). */
    public static GpuScan parseQuery(String output) {
        return parseQuery(output, QUERY_FIELDS);
    }

    /**
     * Parses {@code --query-gpu=<queryFields> --format=csv,noheader[,nounits]}: one line per GPU,
     * values separated by {@code ", "} in the order of queryFields. Known fields: index, name,
     * uuid, memory.total, driver_version, mig.mode.current, compute_mode, pci.bus_id; others are
     * read and ignored. A {@code " MiB"} unit on memory.total is accepted.
     *
     * @throws HostConfException when a line has another number of values than fields were asked
     *                           for, or index or memory.total is not a number
     */
    public static GpuScan parseQuery(String output, String queryFields) {
        List<String> fields = Arrays.stream(queryFields.split(",")).map(String::strip).toList();
        return parseCsvRows(output, fields);
    }

    /**
     * The driver version from /proc/driver/nvidia/version ({@code NVRM version: NVIDIA UNIX Open
     * Kernel Module for x86_64  580.159.04  Release Build ...}); empty when the file holds none.
     */
    public static Optional<String> driverVersion(String procDriverNvidiaVersion) {
        for (String line : procDriverNvidiaVersion.split("\\R")) {
            if (!line.startsWith("NVRM version:")) continue;
            Matcher m = DRIVER_VERSION.matcher(line + " ");
            if (m.find()) return Optional.of(m.group(1));
        }
        return Optional.empty();
    }

    private static GpuScan parseCsvRows(String output, List<String> fields) {
        List<Gpu> gpus = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        String what = "nvidia-smi --format=csv,noheader";
        for (String raw : output.split("\\R")) {
            if (raw.isBlank()) continue;
            if (isFailure(raw)) {
                problems.add(raw.strip());
                continue;
            }
            String[] values = raw.split(",", -1);
            if (values.length != fields.size()) {
                throw new HostConfException(what + " printed " + values.length + " values where " + fields.size()
                        + " fields (" + String.join(",", fields) + ") were asked for: " + raw.strip());
            }
            gpus.add(gpu(fields, values, raw, what));
        }
        return new GpuScan(gpus, explain(problems, output));
    }

    private static Gpu gpu(List<String> fields, String[] values, String raw, String what) {
        Integer index = null;
        String name = null, uuid = null, driver = null, mig = null, compute = null, bus = null;
        Long memory = null;
        for (int i = 0; i < fields.size(); i++) {
            String v = value(values[i]);
            switch (fields.get(i).toLowerCase(Locale.ROOT)) {
                case "index" -> index = number(v, "index", raw, what).map(Long::intValue).orElse(null);
                case "name", "gpu_name" -> name = v;
                case "uuid", "gpu_uuid" -> uuid = v;
                case "memory.total" -> memory = number(v == null ? null : v.replaceFirst("\\s*MiB$", ""),
                        "memory.total", raw, what).orElse(null);
                case "driver_version" -> driver = v;
                case "mig.mode.current" -> mig = v;
                case "compute_mode" -> compute = v;
                case "pci.bus_id", "gpu_bus_id" -> bus = v;
                default -> {
                    // asked for but not kept
                }
            }
        }
        if (index == null) {
            throw new HostConfException(what + " gave no GPU index (the query must start with index): " + raw.strip());
        }
        return new Gpu(index, name, uuid, memory, driver, mig, compute, bus);
    }

    /** A value, or null for nvidia-smi's bracketed non-values ([N/A], [Not Supported], ...). */
    private static String value(String raw) {
        String v = raw.strip();
        return v.isEmpty() || (v.startsWith("[") && v.endsWith("]")) ? null : v;
    }

    private static Optional<Long> number(String v, String field, String raw, String what) {
        if (v == null) return Optional.empty();
        try {
            return Optional.of(Long.parseLong(v));
        } catch (NumberFormatException e) {
            throw new HostConfException(what + " gave " + field + " \"" + v + "\", not a number: " + raw.strip());
        }
    }

    private static boolean isFailure(String line) {
        String s = line.strip();
        return s.startsWith("No devices were found")
                || s.startsWith("NVIDIA-SMI has failed")
                || s.startsWith("Failed to initialize NVML")
                || s.startsWith("NVML library version")
                || s.startsWith("Unable to determine the device handle")
                || s.startsWith("Make sure that the latest NVIDIA driver is installed and running");
    }

    private static Optional<String> explain(List<String> problems, String output) {
        if (!problems.isEmpty()) {
            String said = String.join(" ", problems);
            String hint;
            if (said.contains("No devices were found")) {
                hint = "nvidia-smi found no GPU: the driver is loaded but sees no device (check `lspci | grep -i nvidia`, "
                        + "a GPU passed through or bound to vfio-pci is not visible)";
            } else if (said.contains("version mismatch")) {
                hint = "the NVIDIA kernel module and the user-space driver differ (after a driver upgrade): reboot the node";
            } else if (said.contains("couldn't communicate with the NVIDIA driver")) {
                hint = "nvidia-smi cannot reach the NVIDIA driver: it is not installed or not loaded "
                        + "(a reboot after installing it is often needed; check `lsmod | grep nvidia`)";
            } else if (said.contains("Unable to determine the device handle")) {
                hint = "a GPU does not answer (fallen off the bus or in an error state): check `dmesg` for Xid errors";
            } else {
                hint = "nvidia-smi reported an error";
            }
            return Optional.of(hint + " (nvidia-smi said: " + said + ")");
        }
        if (output.isBlank()) return Optional.of("nvidia-smi printed nothing");
        return Optional.empty();
    }
}
