package dev.gpuctl.hostfiles;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The NVIDIA driver's packages, held against silent upgrades: which installed packages belong to the driver (and,
 * when asked, the kernel), and the unattended-upgrades configuration that leaves them alone. The same patterns serve
 * both, so what is held and what unattended-upgrades skips cannot drift apart. Pure functions.
 *
 * <p>unattended-upgrades reads {@code Unattended-Upgrade::Package-Blacklist} entries as Python regular expressions
 * matched at the start of the package name (its 50unattended-upgrades: "Python regular expressions, matching
 * packages to exclude from upgrading"); apt appends list entries from every apt.conf.d file.
 */
public final class DriverPackages {
    private DriverPackages() {}

    /** The driver's packages on Debian, Ubuntu and NVIDIA's CUDA repository; the container toolkit is not the driver. */
    public static final List<String> DRIVER_PATTERNS = List.of(
        "^nvidia-(?!container-)", "^libnvidia-(?!container)", "^linux-(modules|objects|signatures)-nvidia-",
        "^cuda-drivers", "^firmware-nvidia-", "^xserver-xorg-video-nvidia");

    /** The kernel's packages (held only when the inventory asks): a new kernel needs the driver's module rebuilt. */
    public static final List<String> KERNEL_PATTERNS = List.of("^linux-(image|headers|modules)-", "^linux-(generic|signed-)");

    /** The apt.conf.d file gpuctl writes (read after 50unattended-upgrades). */
    public static final String APT_CONF = "/etc/apt/apt.conf.d/51gpuctl-hold-nvidia-driver";

    private static final Pattern PACKAGE_NAME = Pattern.compile("[a-z0-9][a-z0-9+.-]+");

    public static List<String> patterns(boolean kernel) {
        List<String> p = new ArrayList<>(DRIVER_PATTERNS);
        if (kernel) p.addAll(KERNEL_PATTERNS);
        return p;
    }

    /** Whether a package name is one of those held. */
    public static boolean held(String pkg, boolean kernel) {
        return patterns(kernel).stream().anyMatch(p -> Pattern.compile(p).matcher(pkg).lookingAt());
    }

    /** The {@code dpkg-query} command whose output {@link #installed} reads. */
    public static final String DPKG_QUERY = "dpkg-query -W -f='${Package} ${db:Status-Status}\\n'";

    /**
     * Installed packages to hold, from {@link #DPKG_QUERY} output ("NAME STATUS" lines; only "installed" counts;
     * an arch-qualified name "libnvidia-ml1:amd64" keeps its qualifier, as apt-mark takes it).
     */
    public static List<String> installed(String dpkgQuery, boolean kernel) {
        Set<String> out = new LinkedHashSet<>();
        for (String line : dpkgQuery.split("\\R")) {
            String[] f = line.strip().split("\\s+");
            if (f.length != 2 || !f[1].equals("installed")) continue;
            String name = f[0].contains(":") ? f[0].substring(0, f[0].indexOf(':')) : f[0];
            if (PACKAGE_NAME.matcher(name).matches() && held(name, kernel)) out.add(f[0]);
        }
        return List.copyOf(out);
    }

    /**
     * The installed driver (and kernel) packages of a host, as a probe learns them: {@link #words()} is the fact's
     * text (the names space-separated, as apt-mark takes them), {@link #parse} reads it back.
     */
    public record Installed(List<String> packages) {
        public Installed { packages = List.copyOf(packages); }

        /** From {@link #DPKG_QUERY} output: the installed packages to hold ({@link DriverPackages#installed}). */
        public static Installed fromDpkgQuery(String dpkgQuery, boolean kernel) { return new Installed(installed(dpkgQuery, kernel)); }

        /** From the fact's text ({@link #words()}). */
        public static Installed parse(String words) {
            return new Installed(words.isBlank() ? List.of() : List.of(words.strip().split("\\s+")));
        }

        public String words() { return String.join(" ", packages); }

        /** Those {@code apt-mark showhold} does not list. */
        public List<String> notHeld(String showhold) { return DriverPackages.notHeld(packages, showhold); }
    }

    /** Of {@code wanted}, those {@code apt-mark showhold} does not list. */
    public static List<String> notHeld(List<String> wanted, String showhold) {
        Set<String> holds = new LinkedHashSet<>();
        showhold.lines().map(String::strip).forEach(h -> {
            holds.add(h);
            if (h.contains(":")) holds.add(h.substring(0, h.indexOf(':')));
        });
        return wanted.stream().filter(p -> !holds.contains(p) && !holds.contains(p.replaceFirst(":.*", ""))).toList();
    }

    /** The apt.conf.d file telling unattended-upgrades to leave the driver (and the kernel) alone. */
    public static String aptConf(boolean kernel) {
        StringBuilder b = new StringBuilder();
        b.append("// Written by gpuctl: unattended-upgrades leaves the NVIDIA driver").append(kernel ? " and the kernel" : "")
            .append(" alone.\n// A driver upgrade under a loaded module breaks every CUDA container until a reboot")
            .append(" (\"Driver/library version mismatch\").\n// Change the driver deliberately: gpuctl drain HOST, upgrade,")
            .append(" reboot, gpuctl verify, gpuctl uncordon HOST.\n")
            .append("Unattended-Upgrade::Package-Blacklist {\n");
        for (String p : patterns(kernel)) b.append("    \"").append(p).append("\";\n");
        return b.append("};\n").toString();
    }
}
