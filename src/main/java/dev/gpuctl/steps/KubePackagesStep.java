package dev.gpuctl.steps;

import dev.gpuctl.inventory.PackageSource;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Step 5, kubelet, kubeadm and kubectl at the inventory's minor version: pinned with an apt preference (so the
 * same command works with upstream's repository and with a site mirror), installed, held, kubelet enabled.
 */
public final class KubePackagesStep implements Step {
    static final List<String> PACKAGES = List.of("kubelet", "kubeadm", "kubectl");
    static final String PIN_FILE = "/etc/apt/preferences.d/gpuctl-kubernetes";
    static final String REPO_FILE = "/etc/apt/sources.list.d/kubernetes.list";

    @Override public String id() { return "packages"; }
    @Override public String title() { return "kubelet, kubeadm, kubectl pinned and held"; }
    @Override public boolean runsOn(HostContext ctx) { return true; }

    static String pin(String minor) {
        return "# Written by gpuctl: Kubernetes packages stay at the inventory's minor version.\n"
            + "Package: " + String.join(" ", PACKAGES) + "\n"
            + "Pin: version " + minor + ".*\n"
            + "Pin-Priority: 1001\n";
    }

    static String versionsCommand() {
        return "dpkg-query -W -f='${Package} ${Version} ${db:Status-Status}\\n' " + String.join(" ", PACKAGES) + " 2>&1 || true";
    }

    /** Each package installed at minor.x; returns what is wrong. */
    static Optional<String> versionProblems(String dpkgOut, String minor) {
        List<String> wrong = new ArrayList<>();
        for (String p : PACKAGES) {
            var line = dpkgOut.lines().filter(l -> l.startsWith(p + " ")).findFirst();
            if (line.isEmpty() || !line.get().endsWith(" installed")) { wrong.add(p + " not installed"); continue; }
            String version = line.get().split(" ")[1];
            if (!version.startsWith(minor + ".")) wrong.add(p + " " + version + ", expected " + minor + ".x");
        }
        return wrong.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", wrong));
    }

    @Override public List<Probe> check(HostContext ctx) {
        String minor = ctx.cluster().kubernetesVersion();
        return List.of(
            KernelStep.fileHolds(PIN_FILE, pin(minor), "apt pins Kubernetes to " + minor),
            Probe.of("kubelet, kubeadm, kubectl installed at " + minor + ".x", versionsCommand(),
                r -> versionProblems(r.stdout(), minor)),
            Probe.of("kubelet, kubeadm, kubectl held (apt-mark showhold)", "apt-mark showhold", r -> {
                var notHeld = PACKAGES.stream().filter(p -> r.stdout().lines().noneMatch(p::equals)).toList();
                return notHeld.isEmpty() ? Optional.empty() : Optional.of("not held: " + String.join(", ", notHeld));
            }),
            Probe.equals("kubelet enabled at boot", "systemctl is-enabled kubelet 2>&1 || true", "enabled"));
    }

    @Override public List<Op> apply(HostContext ctx) {
        String minor = ctx.cluster().kubernetesVersion();
        List<Op> ops = new ArrayList<>();
        if (ctx.cluster().packages() == PackageSource.UPSTREAM) {
            ops.add(Upstream.prerequisites());
            ops.add(Upstream.kubernetesKey(minor));
            ops.add(Op.WriteFile.of("Kubernetes " + minor + " apt repository", REPO_FILE, Upstream.kubernetesRepoLine(minor), "0644"));
        }
        ops.add(Op.WriteFile.of("pin the Kubernetes minor", PIN_FILE, pin(minor), "0644"));
        ops.add(Sh.aptInstall("install " + String.join(", ", PACKAGES) + " " + minor + ".x", PACKAGES, "--allow-change-held-packages")
            .unless("test \"$(dpkg-query -W -f='${Version} ${db:Status-Status}\\n' " + String.join(" ", PACKAGES)
                + " 2>/dev/null | grep -c '^" + minor.replace(".", "\\.") + "\\..* installed$')\" = " + PACKAGES.size()));
        ops.add(Op.Run.of("hold them", "apt-mark hold " + String.join(" ", PACKAGES) + " >/dev/null").journalling(Sh.journalHold(String.join(" ", PACKAGES)))
            .unless("test \"$(apt-mark showhold | grep -cxE '" + String.join("|", PACKAGES) + "')\" = " + PACKAGES.size()));
        ops.add(Op.Run.of("enable kubelet at boot", "systemctl enable kubelet").journalling(Sh.journalEnable(List.of("kubelet"))).unless("systemctl is-enabled -q kubelet"));
        return ops;
    }
}
