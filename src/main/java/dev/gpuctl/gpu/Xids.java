package dev.gpuctl.gpu;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Xid errors the NVIDIA driver writes to the kernel log, read and judged by their cause. The table below is the one
 * place that says what each code means and whose fault it is; it follows NVIDIA's "Xid Errors" catalogue
 * (docs.nvidia.com/deploy/xid-errors, its "Xid Error Listing" and "Causes" columns, and the GPU debug guidelines'
 * recommended actions). Application-caused Xids (the job's illegal address, its killed or faulted context) are the
 * job's to fix: a warning naming the process. Hardware and driver Xids (memory ECC, NVLink, fallen off the bus, GSP
 * firmware) make the GPU unfit for jobs: verify fails. Pure functions: kernel log text in, records and rows out.
 */
public final class Xids {
    private Xids() {}

    /** Whose fault an Xid is. */
    public enum Cause {
        /** The job's own: the GPU is fine; the job that ran then needs fixing. */
        APPLICATION,
        /** The GPU, its memory, its links, or the driver/firmware: the GPU is unfit for jobs until fixed. */
        HARDWARE,
        /** Not in the table: judged like a hardware Xid (a node is failed rather than trusted blindly). */
        UNLISTED
    }

    /** One row of the table: the code, NVIDIA's name for it, its cause and what to do. */
    public record Kind(int code, String name, Cause cause, String action) {}

    private static final String DRAIN = GpuHealth.DRAIN;
    private static final String JOB = "the GPU needs nothing; check that job (its log, its CUDA code, its inputs) and run it again";

    /** NVIDIA's Xid catalogue, the codes a GPU cluster meets (docs.nvidia.com/deploy/xid-errors). */
    private static final Map<Integer, Kind> TABLE = table(
        new Kind(13, "Graphics Engine Exception", Cause.APPLICATION, "usually the job's out-of-range access or illegal instruction: " + JOB),
        new Kind(31, "GPU memory page fault", Cause.APPLICATION, "the job accessed an illegal address (MMU fault): " + JOB),
        new Kind(43, "GPU stopped processing", Cause.APPLICATION, "the job's context faulted and was stopped: " + JOB),
        new Kind(45, "Preemptive cleanup, due to previous errors", Cause.APPLICATION,
            "the job was killed or its context torn down (Ctrl-C, OOM, an earlier Xid of the same job): " + JOB),
        new Kind(68, "NVDEC0 Exception", Cause.APPLICATION, "the job's video decode stream faulted: " + JOB),
        new Kind(69, "Graphics Engine class error", Cause.APPLICATION, "the job's engine use faulted: " + JOB),
        new Kind(48, "Double Bit ECC Error", Cause.HARDWARE, "uncorrectable memory error: " + DRAIN
            + ", reboot it (resets the GPU, applies the row remap), then see nvidia-smi -q -d ECC,ROW_REMAPPER; if it repeats, RMA"),
        new Kind(61, "Internal micro-controller breakpoint/warning", Cause.HARDWARE, "firmware fault: " + DRAIN + " and reboot it"),
        new Kind(62, "Internal micro-controller halt", Cause.HARDWARE, "firmware halt: " + DRAIN + " and reboot it; if it repeats, RMA"),
        new Kind(63, "ECC page retirement or row remapping recording event", Cause.HARDWARE,
            "a memory row was marked for remapping: " + DRAIN + ", reboot it to apply it (nvidia-smi -q -d ROW_REMAPPER)"),
        new Kind(64, "ECC page retirement or row remapper recording failure", Cause.HARDWARE,
            "the remap could not be recorded: " + DRAIN + ", reboot it; if it repeats, RMA"),
        new Kind(74, "NVLink Error", Cause.HARDWARE, "NVLink fault: " + DRAIN + ", reboot it; if it repeats, have the NVLink checked (nvidia-smi nvlink -s)"),
        new Kind(79, "GPU has fallen off the bus", Cause.HARDWARE,
            DRAIN + ", reboot it; if it repeats, check power, cooling and seating, then RMA"),
        new Kind(92, "High single-bit ECC error rate", Cause.HARDWARE, DRAIN + ", reboot it, then see nvidia-smi -q -d ECC; if it repeats, RMA"),
        new Kind(94, "Contained ECC error", Cause.HARDWARE, "an uncorrectable memory error was contained: " + DRAIN
            + ", reboot it (resets the GPU) and check nvidia-smi -q -d ECC,ROW_REMAPPER"),
        new Kind(95, "Uncontained ECC error", Cause.HARDWARE, "an uncorrectable memory error reached jobs: " + DRAIN
            + ", reboot it; jobs on this GPU may have computed with corrupted memory"),
        new Kind(119, "GSP RPC Timeout", Cause.HARDWARE, "GSP firmware did not answer: " + DRAIN + " and reboot it; if it repeats, update the driver"),
        new Kind(120, "GSP Error", Cause.HARDWARE, "GSP firmware error: " + DRAIN + " and reboot it; if it repeats, update the driver"),
        new Kind(121, "C2C Link corrected error", Cause.HARDWARE, "chip-to-chip link error: " + DRAIN + ", reboot it; if it repeats, RMA"),
        new Kind(140, "Unrecovered ECC Error", Cause.HARDWARE, "uncorrectable memory error at boot: " + DRAIN + ", reboot it; if it repeats, RMA"));

    private static Map<Integer, Kind> table(Kind... kinds) {
        Map<Integer, Kind> t = new LinkedHashMap<>();
        for (Kind k : kinds) {
            if (t.put(k.code(), k) != null) throw new IllegalStateException("Xid " + k.code() + " twice in the table");
        }
        return Map.copyOf(t);
    }

    /** What the table says of {@code code}; an unlisted code is {@link Cause#UNLISTED}, to be looked up by a person. */
    public static Kind kind(int code) {
        Kind k = TABLE.get(code);
        if (k != null) return k;
        return new Kind(code, "not in gpuctl's table", Cause.UNLISTED,
            "look it up in NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors); " + DRAIN + " if the GPU misbehaves");
    }

    /**
     * One Xid line of the kernel log.
     *
     * @param when    the line's time as logged ("Dec 03 13:27:50", "2026-12-03T13:27:50+0000", or "1234.567 s after boot"
     *                from dmesg); "" when the line has none
     * @param pci     the GPU's PCI address as the driver logs it ("0000:3b:00")
     * @param code    the Xid number
     * @param pid     the process the driver names, empty when it logs none or "'&lt;unknown&gt;'"
     * @param process the process's name, empty when unknown
     * @param message the rest of the line
     */
    public record Xid(String when, String pci, int code, Optional<Integer> pid, Optional<String> process, String message) {
        public Kind kind() { return Xids.kind(code); }
    }

    private static final Pattern LINE = Pattern.compile(
        "NVRM: Xid \\((?:PCI:)?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\\.[0-9A-Fa-f])?)\\): (\\d{1,5}),\\s*(.*)$");
    private static final Pattern PID = Pattern.compile("^pid=([^,]*),\\s*");
    private static final Pattern NAME = Pattern.compile("^name=([^,]*),\\s*");
    private static final Pattern SYSLOG_TIME = Pattern.compile("^([A-Z][a-z]{2} [ 0-9]\\d \\d\\d:\\d\\d:\\d\\d)\\s");
    private static final Pattern ISO_TIME = Pattern.compile("^(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\S*)\\s");
    private static final Pattern DMESG_TIME = Pattern.compile("^\\[\\s*(\\d+\\.\\d+)]");

    /**
     * Every Xid line of kernel log text ({@code journalctl -k}, its {@code -o short-iso}, or {@code dmesg}), in order:
     * {@code NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.} (older drivers log
     * no pid/name, or {@code pid='<unknown>', name=<unknown>}).
     */
    public static List<Xid> parse(String kernelLog) {
        List<Xid> out = new ArrayList<>();
        for (String line : kernelLog.split("\\R")) {
            Matcher m = LINE.matcher(line);
            if (!m.find()) continue;
            String rest = m.group(3).strip();
            Optional<Integer> pid = Optional.empty();
            Optional<String> name = Optional.empty();
            Matcher p = PID.matcher(rest);
            if (p.find()) {
                String v = p.group(1).strip();
                if (v.matches("\\d{1,9}")) pid = Optional.of(Integer.parseInt(v));
                rest = rest.substring(p.end());
            }
            Matcher n = NAME.matcher(rest);
            if (n.find()) {
                String v = n.group(1).strip();
                if (!v.isEmpty() && !v.contains("unknown")) name = Optional.of(v);
                rest = rest.substring(n.end());
            }
            out.add(new Xid(when(line.substring(0, m.start())), m.group(1).toLowerCase(Locale.ROOT), Integer.parseInt(m.group(2)),
                pid, name, rest.strip()));
        }
        return out;
    }

    private static String when(String prefix) {
        for (Pattern t : List.of(SYSLOG_TIME, ISO_TIME)) {
            Matcher m = t.matcher(prefix);
            if (m.find()) return m.group(1);
        }
        Matcher d = DMESG_TIME.matcher(prefix.strip());
        return d.find() ? d.group(1) + " s after boot" : "";
    }

    /** A GPU as nvidia-smi names it: index, UUID and PCI bus id ("00000000:3B:00.0"). */
    public record Gpu(int index, String uuid, String pciBusId) {}

    /**
     * The GPU an Xid's PCI address names, among those nvidia-smi listed: the driver logs "0000:3b:00" (domain, bus,
     * device) and nvidia-smi "00000000:3B:00.0"; matched as numbers.
     */
    public static Optional<Gpu> gpuOf(String pci, List<Gpu> gpus) {
        Optional<long[]> want = address(pci);
        if (want.isEmpty()) return Optional.empty();
        for (Gpu g : gpus) {
            Optional<long[]> have = address(g.pciBusId());
            if (have.isPresent() && java.util.Arrays.equals(have.get(), want.get())) return Optional.of(g);
        }
        return Optional.empty();
    }

    private static Optional<long[]> address(String pci) {
        if (pci == null) return Optional.empty();
        String[] f = pci.strip().replaceFirst("^PCI:", "").split("[:.]");
        if (f.length < 3) return Optional.empty();
        try {
            return Optional.of(new long[] {Long.parseLong(f[0], 16), Long.parseLong(f[1], 16), Long.parseLong(f[2], 16)});
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** "GPU 0 (GPU-01bc..., PCI 0000:3b:00)" when nvidia-smi listed it, else "the GPU at PCI 0000:3b:00". */
    static String gpuName(String pci, List<Gpu> gpus) {
        return gpuOf(pci, gpus).map(g -> "GPU " + g.index() + " (" + g.uuid() + ", PCI " + pci + ")").orElse("the GPU at PCI " + pci);
    }

    /**
     * The rows verify shows for the Xids of one cause: one per code and GPU (and, for an application's, per process),
     * saying which Xid, when (the first and, when repeated, the last time), on which GPU, by which process, what it
     * means and what to do. {@code hardware} true: hardware, driver and unlisted Xids (they fail verify); false: the
     * application-caused ones (a warning).
     */
    public static List<String> rows(List<Xid> xids, List<Gpu> gpus, boolean hardware) {
        Map<String, List<Xid>> groups = new LinkedHashMap<>();
        for (Xid x : xids) {
            boolean app = x.kind().cause() == Cause.APPLICATION;
            if (app == hardware) continue;
            String key = x.code() + "|" + x.pci() + (app ? "|" + x.pid().map(String::valueOf).orElse("") + "|" + x.process().orElse("") : "");
            groups.computeIfAbsent(key, k -> new ArrayList<>()).add(x);
        }
        List<String> rows = new ArrayList<>();
        for (List<Xid> g : groups.values()) {
            Xid first = g.get(0);
            Xid last = g.get(g.size() - 1);
            Kind k = first.kind();
            StringBuilder sb = new StringBuilder("Xid ").append(first.code()).append(" (").append(k.name()).append(')');
            if (!first.when().isEmpty()) {
                sb.append(g.size() > 1 ? " " + g.size() + " times, first at " + first.when() + ", last at " + last.when() : " at " + first.when());
            } else if (g.size() > 1) {
                sb.append(' ').append(g.size()).append(" times");
            }
            sb.append(" on ").append(gpuName(first.pci(), gpus));
            if (k.cause() == Cause.APPLICATION) sb.append(", by ").append(process(first));
            String message = GpuHealth.oneLine(first.message());
            if (!message.isEmpty()) sb.append(": \"").append(message).append('"');
            sb.append(" — ").append(k.cause() == Cause.APPLICATION ? "the job's own fault: " : "").append(k.action());
            rows.add(sb.toString());
        }
        return rows;
    }

    /** "process python3 (pid 4242)", or what the driver left unknown. */
    static String process(Xid x) {
        if (x.process().isPresent() && x.pid().isPresent()) return "process " + x.process().get() + " (pid " + x.pid().get() + ")";
        if (x.pid().isPresent()) return "pid " + x.pid().get();
        return x.process().map(n -> "process " + n).orElse("a process the driver did not name");
    }

    /**
     * The GPUs of an {@code nvidia-smi --query-gpu=index,...,uuid,...,pci.bus_id} record as gpuctl keeps it in a fact:
     * one "INDEX UUID BUSID" per line; lines that are not are skipped.
     */
    public static List<Gpu> parseGpus(String text) {
        List<Gpu> out = new ArrayList<>();
        for (String line : text.split("\\R")) {
            String[] f = line.strip().split("\\s+");
            if (f.length == 3 && f[0].matches("\\d{1,4}")) out.add(new Gpu(Integer.parseInt(f[0]), f[1], f[2]));
        }
        return out;
    }

    /** The fact text {@link #parseGpus} reads, from nvidia-smi's GPUs. */
    public static String gpusText(List<NvidiaSmi.Gpu> gpus) {
        StringBuilder sb = new StringBuilder();
        for (NvidiaSmi.Gpu g : gpus) {
            if (g.uuid() == null || g.pciBusId() == null) continue;
            sb.append(g.index()).append(' ').append(g.uuid().replaceAll("[^A-Za-z0-9-]", "")).append(' ')
                .append(g.pciBusId().replaceAll("[^A-Za-z0-9:.]", "")).append('\n');
        }
        return sb.toString();
    }
}
