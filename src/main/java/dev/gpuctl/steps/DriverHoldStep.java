package dev.gpuctl.steps;

import dev.gpuctl.hostconf.DriverPackages;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The NVIDIA driver held against silent upgrades, on GPU nodes: the installed driver packages (and, with
 * {@code cluster.gpuDriver.holdKernel}, the kernel's) are {@code apt-mark hold}, and unattended-upgrades is told to
 * leave them alone (its Package-Blacklist, in an apt.conf.d file of gpuctl's). An upgrade of the driver package
 * under the loaded module is what makes every CUDA container fail with "Driver/library version mismatch" until a
 * reboot; with the hold, a driver change is a deliberate act (drain, upgrade, reboot, verify, uncordon).
 * {@code cluster.gpuDriver.hold: false} turns this off (what is held stays held).
 */
public final class DriverHoldStep implements Step {
    @Override public String id() { return "driver-hold"; }
    @Override public String title() { return "NVIDIA driver held against silent upgrades"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.gpu() && ctx.cluster().gpuDriver().hold(); }

    static boolean kernel(HostContext ctx) { return ctx.cluster().gpuDriver().holdKernel(); }

    /** Installed packages, then what is held: what the probe and the capture read. */
    static final String PACKAGES_AND_HOLDS = DriverPackages.DPKG_QUERY + " 2>/dev/null; echo @@@; apt-mark showhold";

    static String unheldFact(HostContext ctx) { return "driverHold." + ctx.node().name() + ".unheld"; }

    /** Of the installed driver (and kernel) packages, those not held, from {@link #PACKAGES_AND_HOLDS}'s output. */
    static List<String> unheld(String out, boolean kernel) {
        String[] parts = out.split("(?m)^@@@\\R", 2);
        return DriverPackages.notHeld(DriverPackages.installed(parts[0], kernel), parts.length > 1 ? parts[1] : "");
    }

    @Override public List<Probe> check(HostContext ctx) {
        boolean kernel = kernel(ctx);
        String what = kernel ? "NVIDIA driver and kernel" : "NVIDIA driver";
        return List.of(
            KernelStep.fileHolds(DriverPackages.APT_CONF, DriverPackages.aptConf(kernel), "unattended-upgrades leaves the " + what + " alone"),
            Probe.of("installed " + what + " packages held (apt-mark showhold)", PACKAGES_AND_HOLDS, r -> {
                List<String> missing = unheld(r.stdout(), kernel);
                return missing.isEmpty() ? Optional.empty()
                    : Optional.of("not held: " + String.join(", ", missing) + " (an apt upgrade would replace the driver under the loaded module)");
            }));
    }

    @Override public List<Op> apply(HostContext ctx) {
        boolean kernel = kernel(ctx);
        String fact = Facts.ref(unheldFact(ctx));
        return List.of(
            Op.WriteFile.of("unattended-upgrades: leave the NVIDIA driver" + (kernel ? " and the kernel" : "") + " alone",
                DriverPackages.APT_CONF, DriverPackages.aptConf(kernel), "0644"),
            new Op.Capture("find the installed NVIDIA driver" + (kernel ? " and kernel" : "") + " packages not held yet",
                PACKAGES_AND_HOLDS, out -> Map.of(unheldFact(ctx), String.join(" ", unheld(out, kernel))), false),
            Op.Run.of("hold them (apt-mark hold)", "apt-mark hold " + fact + " >/dev/null").journalling(Sh.journalHold(fact)).unless("test -z \"" + fact + "\""));
    }
}
