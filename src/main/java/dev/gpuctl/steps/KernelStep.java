package dev.gpuctl.steps;

import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Optional;

/** Step 3, kernel modules (overlay, br_netfilter) and the bridge/forwarding sysctls, live and at boot. */
public final class KernelStep implements Step {
    static final String MODULES_FILE = "/etc/modules-load.d/k8s.conf";
    static final String SYSCTL_FILE = "/etc/sysctl.d/k8s.conf";
    static final List<String> MODULES = List.of("overlay", "br_netfilter");
    static final List<String> SYSCTLS = List.of(
        "net.bridge.bridge-nf-call-iptables", "net.bridge.bridge-nf-call-ip6tables", "net.ipv4.ip_forward");

    static final String MODULES_CONTENT = "# Written by gpuctl: modules Kubernetes networking needs at boot.\n"
        + String.join("\n", MODULES) + "\n";
    static final String SYSCTL_CONTENT = "# Written by gpuctl: bridged traffic through iptables, and forwarding.\n"
        + String.join("", SYSCTLS.stream().map(k -> k + " = 1\n").toList());

    @Override public String id() { return "kernel"; }
    @Override public String title() { return "kernel modules and sysctl"; }
    @Override public boolean runsOn(HostContext ctx) { return true; }

    static String liveSysctls() { return "sysctl -n " + String.join(" ", SYSCTLS); }

    static String modulesLoaded() {
        return "mods=$(lsmod 2>/dev/null); for m in " + String.join(" ", MODULES) + "; do printf '%s\\n' \"$mods\" | grep -q \"^$m \" || [ -d /sys/module/$m ] || echo \"$m\"; done";
    }

    /** The modules are loaded now: the check, and what skips loading them. */
    static Probe modulesLive() {
        return Probe.of("modules loaded: " + String.join(", ", MODULES), modulesLoaded(),
            r -> r.stdout().isBlank() ? Optional.empty()
                : Optional.of("not loaded: " + String.join(", ", r.stdout().strip().split("\n"))));
    }

    /** The sysctls are 1 now: the check, and what skips applying them. */
    static Probe sysctlsLive() {
        return Probe.of("sysctls live: " + String.join(", ", SYSCTLS) + " = 1", liveSysctls() + " 2>&1",
            r -> r.ok() && r.stdout().strip().equals("1\n1\n1") ? Optional.empty()
                : Optional.of("read back: " + Probe.oneLine(r.stdout() + r.stderr())));
    }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(
            fileHolds(MODULES_FILE, MODULES_CONTENT, "modules listed for boot"),
            modulesLive(),
            fileHolds(SYSCTL_FILE, SYSCTL_CONTENT, "sysctls persisted"),
            sysctlsLive());
    }

    static Probe fileHolds(String path, String content, String what) {
        return Probe.of(what + " (" + path + ")", "cat " + path + " 2>/dev/null || true",
            r -> r.stdout().equals(content) ? Optional.empty()
                : Optional.of(r.stdout().isEmpty() ? path + " is missing" : path + " differs from what gpuctl writes"));
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(
            Op.WriteFile.of("modules to load at boot", MODULES_FILE, MODULES_CONTENT, "0644"),
            Op.Run.of("load the modules now", "modprobe overlay && modprobe br_netfilter").unlessRight(modulesLive()),
            Op.WriteFile.of("sysctls to set at boot", SYSCTL_FILE, SYSCTL_CONTENT, "0644"),
            Op.Run.of("apply sysctls now", "sysctl --system >/dev/null").unlessRight(sysctlsLive()));
    }
}
