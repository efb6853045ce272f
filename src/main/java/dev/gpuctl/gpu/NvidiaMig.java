package dev.gpuctl.gpu;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * MIG as nvidia-smi reports it: each GPU's MIG mode ({@code --query-gpu=index,name,mig.mode.current,mig.mode.pending
 * --format=csv,noheader}; {@code [N/A]} on a GPU without MIG), the GPU instance profiles it offers ({@code nvidia-smi
 * mig -lgip}) and the GPU instances it has ({@code nvidia-smi mig -lgi}); and what an inventory's {@link Mig} asks of
 * them: whether the GPUs can, which instances each GPU must have, and what the device plugin then advertises.
 */
public final class NvidiaMig {
    /** The MIG-mode query gpuctl runs. */
    public static final String MODES = "nvidia-smi --query-gpu=index,name,mig.mode.current,mig.mode.pending --format=csv,noheader";
    /** What nvidia-smi mig -lgip answers on a host whose GPUs have no MIG. */
    public static final String NO_MIG_DEVICES = "No MIG-supported devices found";

    private NvidiaMig() {}

    /** One GPU's MIG mode: Enabled or Disabled, current and pending (after a reset or reboot); [N/A] without MIG. */
    public record GpuMode(int index, String name, String current, String pending) {
        public boolean supported() { return !current.equals("[N/A]") && !current.equals("[Not Supported]"); }

        public boolean enabled() { return current.equals("Enabled"); }

        /** MIG mode was switched but only takes effect after the GPU is reset (or the host rebooted). */
        public boolean pendingChange() { return supported() && !current.equals(pending); }
    }

    /** A GPU instance profile offered by GPU {@code gpu}: {@code nvidia-smi mig -lgip}'s "MIG 1g.18gb  19  7/7". */
    public record Profile(int gpu, String name, int id, int free, int total) {}

    /** A GPU instance on GPU {@code gpu}: {@code nvidia-smi mig -lgi}'s "MIG 1g.18gb  19  11  0:1". */
    public record Instance(int gpu, String profile, int profileId, int id, String placement) {}

    /**
     * Each GPU's MIG mode as a probe learned it ({@link #MODES}' output, the fact's text): the modes parsed, and the
     * text itself for a problem that quotes it.
     */
    public record Modes(List<GpuMode> gpus, String text) {
        public Modes { gpus = List.copyOf(gpus); }

        public static Modes parse(String csv) { return new Modes(parseModes(csv), csv); }

        /** The GPUs' indexes, in nvidia-smi's order. */
        public List<Integer> indexes() { return gpus.stream().map(GpuMode::index).toList(); }
    }

    /** Lines "0, NVIDIA H200, Disabled, Disabled"; lines that are not that (an error text) are left out. */
    public static List<GpuMode> parseModes(String csv) {
        List<GpuMode> out = new ArrayList<>();
        for (String line : csv.strip().split("\n")) {
            String[] f = line.split(",\\s*");
            if (f.length != 4 || !f[0].strip().matches("[0-9]{1,3}")) continue;
            out.add(new GpuMode(Integer.parseInt(f[0].strip()), f[1].strip(), f[2].strip(), f[3].strip()));
        }
        return out;
    }

    private static final Pattern PROFILE_ROW = Pattern.compile("^\\|\\s+(\\d+)\\s+MIG\\s+(\\S+)\\s+(\\d+)\\s+(\\d+)/(\\d+)\\s");
    private static final Pattern INSTANCE_ROW = Pattern.compile("^\\|\\s+(\\d+)\\s+MIG\\s+(\\S+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+:\\d+)\\s+\\|");

    /** The profiles of {@code nvidia-smi mig -lgip}'s table; none for "No MIG-supported devices found." */
    public static List<Profile> parseProfiles(String lgip) {
        List<Profile> out = new ArrayList<>();
        for (String line : lgip.split("\n")) {
            Matcher m = PROFILE_ROW.matcher(line);
            if (m.find()) {
                out.add(new Profile(Integer.parseInt(m.group(1)), m.group(2), Integer.parseInt(m.group(3)),
                    Integer.parseInt(m.group(4)), Integer.parseInt(m.group(5))));
            }
        }
        return out;
    }

    /** The instances of {@code nvidia-smi mig -lgi}'s table; none for "No MIG-enabled devices found." or "No GPU instances found". */
    public static List<Instance> parseInstances(String lgi) {
        List<Instance> out = new ArrayList<>();
        for (String line : lgi.split("\n")) {
            Matcher m = INSTANCE_ROW.matcher(line);
            if (m.find()) {
                out.add(new Instance(Integer.parseInt(m.group(1)), m.group(2), Integer.parseInt(m.group(3)),
                    Integer.parseInt(m.group(4)), m.group(5)));
            }
        }
        return out;
    }

    /** Each profile's instance count on one GPU ("1g.18gb" → 7): what the first GPU listed offers. */
    public static Map<String, Integer> totals(List<Profile> profiles) {
        Map<String, Integer> t = new LinkedHashMap<>();
        int first = profiles.isEmpty() ? 0 : profiles.get(0).gpu();
        for (Profile p : profiles) if (p.gpu() == first) t.putIfAbsent(p.name(), p.total());
        return t;
    }

    /** {@link #totals} as one fact: "1g.18gb=7,2g.35gb=3". */
    public static String encode(Map<String, Integer> totals) {
        return totals.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(","));
    }

    public static Map<String, Integer> decode(String fact) {
        Map<String, Integer> t = new LinkedHashMap<>();
        for (String kv : fact.split(",")) {
            String[] p = kv.split("=", 2);
            if (p.length == 2 && p[1].matches("[0-9]{1,3}")) t.put(p[0], Integer.parseInt(p[1]));
        }
        return t;
    }

    /**
     * Why {@code host}'s GPUs cannot take {@code mig}, in words that name the host, the GPU model and the profiles it
     * offers; empty when they can. {@code modes} from {@link #MODES}, {@code lgip} nvidia-smi mig -lgip's output.
     */
    public static Optional<String> supportProblem(String host, List<GpuMode> modes, String lgip, Mig mig) {
        if (modes.isEmpty()) return Optional.of("nvidia-smi reported no GPU's MIG mode on " + host);
        List<GpuMode> without = modes.stream().filter(g -> !g.supported()).toList();
        if (!without.isEmpty()) {
            GpuMode g = without.get(0);
            return Optional.of(host + ": MIG is asked for (gpuSharing.mig: " + mig + "), but its GPU " + g.index() + ", "
                + g.name() + ", does not support MIG (nvidia-smi: mig.mode.current " + g.current()
                + (lgip.contains(NO_MIG_DEVICES) ? "; nvidia-smi mig -lgip: " + NO_MIG_DEVICES : "") + ")"
                + " — remove mig from this node's gpuSharing (time-slicing or MPS share a GPU without MIG)");
        }
        Map<String, Integer> totals = totals(parseProfiles(lgip));
        String model = modes.get(0).name();
        if (totals.isEmpty()) {
            return Optional.of(host + ": nvidia-smi mig -lgip listed no GPU instance profile for its " + model + ": "
                + firstLine(lgip) + " — check the driver (nvidia-smi mig -lgip as root)");
        }
        String offered = String.join(", ", totals.keySet());
        for (Map.Entry<String, Integer> e : mig.counts().entrySet()) {
            Integer total = totals.get(e.getKey());
            if (total == null) {
                return Optional.of(host + ": its GPUs (" + model + ") offer no MIG profile " + e.getKey() + "; they offer "
                    + offered + " (nvidia-smi mig -lgip) — set gpuSharing.mig.profile to one of these");
            }
            if (mig.strategy() == Mig.Strategy.MIXED && e.getValue() > total) {
                return Optional.of(host + ": its GPUs (" + model + ") fit at most " + total + " instance" + (total == 1 ? "" : "s")
                    + " of " + e.getKey() + ", the inventory asks " + e.getValue() + " per GPU (profiles offered: " + offered + ")");
            }
        }
        int most = totals.keySet().stream().map(Mig.PROFILE::matcher).filter(Matcher::lookingAt)
            .mapToInt(m -> Integer.parseInt(m.group(1))).max().orElse(Mig.MAX_SLICES);
        int asked = mig.strategy() == Mig.Strategy.MIXED ? mig.profiles().stream().mapToInt(Mig::slices).sum() : 0;
        if (asked > most) {
            return Optional.of(host + ": the profiles " + String.join(", ", mig.profiles()) + " take " + asked + " compute slices,"
                + " its GPUs (" + model + ") have " + most + " (profiles offered: " + offered + ")");
        }
        return Optional.empty();
    }

    /** Larger instances first (then by name): the order in which they are made, so that small ones do not split a GPU's slices. */
    static final Comparator<String> LARGEST_FIRST = Comparator.<String>comparingInt(p -> {
        Matcher m = Mig.PROFILE.matcher(p);
        return m.lookingAt() ? -Integer.parseInt(m.group(1)) : 0;
    }).thenComparing(Comparator.naturalOrder());

    /** The instances each GPU must have, largest first: single, as many of the profile as one GPU fits; mixed, the listed ones. */
    public static List<String> layout(Mig mig, Map<String, Integer> totals) {
        List<String> want = new ArrayList<>();
        if (mig.strategy() == Mig.Strategy.SINGLE) {
            want.addAll(Collections.nCopies(totals.getOrDefault(mig.profiles().get(0), 0), mig.profiles().get(0)));
        } else {
            want.addAll(mig.profiles());
        }
        want.sort(LARGEST_FIRST);
        return want;
    }

    /** Per GPU index, the profiles of its instances, largest first. */
    public static Map<Integer, List<String>> byGpu(List<Instance> instances) {
        Map<Integer, List<String>> by = new TreeMap<>();
        for (Instance i : instances) by.computeIfAbsent(i.gpu(), k -> new ArrayList<>()).add(i.profile());
        by.values().forEach(l -> l.sort(LARGEST_FIRST));
        return by;
    }

    /** What differs between the instances each GPU has and {@code want}; empty when every GPU has exactly those. */
    public static Optional<String> layoutProblem(List<Integer> gpus, List<String> want, List<Instance> have) {
        Map<Integer, List<String>> by = byGpu(have);
        List<String> wrong = new ArrayList<>();
        for (int g : gpus) {
            List<String> h = by.getOrDefault(g, List.of());
            if (!h.equals(want)) wrong.add("GPU " + g + " has " + (h.isEmpty() ? "no GPU instance" : summary(h)));
        }
        return wrong.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", wrong) + ", expected " + summary(want) + " each");
    }

    /** "7 × 1g.18gb", "1g.18gb + 3g.71gb". */
    static String summary(List<String> profiles) {
        Map<String, Long> c = profiles.stream().collect(Collectors.groupingBy(p -> p, TreeMap::new, Collectors.counting()));
        return c.entrySet().stream().map(e -> e.getValue() == 1 ? e.getKey() : e.getValue() + " × " + e.getKey())
            .collect(Collectors.joining(" + "));
    }

    /**
     * What the device plugin advertises on a node of {@code gpus} GPUs cut this way: single, nvidia.com/gpu = every
     * instance; mixed, nvidia.com/mig-PROFILE = that profile's instances.
     */
    public static Map<String, Integer> resources(Mig mig, int gpus, Map<String, Integer> totals) {
        Map<String, Integer> r = new TreeMap<>();
        for (String p : layout(mig, totals)) r.merge(mig.resource(p), gpus, Integer::sum);
        return r;
    }

    private static String firstLine(String s) {
        return s.strip().lines().findFirst().orElse("(nothing)");
    }
}
