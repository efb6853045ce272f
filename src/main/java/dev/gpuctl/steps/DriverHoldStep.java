package dev.gpuctl.steps;

import dev.gpuctl.hostfiles.DriverPackages;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
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

    /** What is held: the second probe's command; the first is {@link DriverPackages#DPKG_QUERY}. */
    static final String HOLDS = "apt-mark showhold";

    /** The installed driver (and kernel) packages of the host, learned by the first probe (and the apply's capture). */
    static String installedFact(HostContext ctx) { return "driverHold." + ctx.node().name() + ".installed"; }

    static Facts.Key<DriverPackages.Installed> installed(HostContext ctx) {
        return new Facts.Key<>(installedFact(ctx), DriverPackages.Installed.class, DriverPackages.Installed::parse);
    }

    static Map<String, String> learnInstalled(HostContext ctx, String dpkgQuery) {
        return Map.of(installedFact(ctx), DriverPackages.Installed.fromDpkgQuery(dpkgQuery, kernel(ctx)).words());
    }

    @Override public List<Probe> check(HostContext ctx) {
        boolean kernel = kernel(ctx);
        String what = kernel ? "NVIDIA driver and kernel" : "NVIDIA driver";
        return List.of(
            KernelStep.fileHolds(DriverPackages.APT_CONF, DriverPackages.aptConf(kernel), "unattended-upgrades leaves the " + what + " alone"),
            Probe.of("installed " + what + " packages (dpkg-query)", DriverPackages.DPKG_QUERY + " 2>/dev/null", r -> Optional.empty())
                .learning(r -> learnInstalled(ctx, r.stdout())),
            Probe.of("installed " + what + " packages held (apt-mark showhold)", HOLDS, r -> Optional.empty())
                .judgedWithFacts((r, facts) -> {
                    Optional<DriverPackages.Installed> installed = facts.get(installed(ctx));
                    if (installed.isEmpty()) return Optional.of("the installed packages are not known (dpkg-query was not asked before)");
                    List<String> missing = installed.get().notHeld(r.stdout());
                    return missing.isEmpty() ? Optional.empty()
                        : Optional.of("not held: " + String.join(", ", missing) + " (an apt upgrade would replace the driver under the loaded module)");
                }));
    }

    @Override public List<Op> apply(HostContext ctx) {
        boolean kernel = kernel(ctx);
        String fact = Facts.ref(installedFact(ctx));
        return List.of(
            Op.WriteFile.of("unattended-upgrades: leave the NVIDIA driver" + (kernel ? " and the kernel" : "") + " alone",
                DriverPackages.APT_CONF, DriverPackages.aptConf(kernel), "0644"),
            new Op.Capture("find the installed NVIDIA driver" + (kernel ? " and kernel" : "") + " packages",
                DriverPackages.DPKG_QUERY + " 2>/dev/null", out -> learnInstalled(ctx, out), false),
            Op.Run.of("hold them (apt-mark hold; each one not held yet is journalled)", "apt-mark hold " + fact + " >/dev/null")
                .journalling(Sh.journalHold(fact)).unless("test -z \"" + fact + "\""));
    }
}
