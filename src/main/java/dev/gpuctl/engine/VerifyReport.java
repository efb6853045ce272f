package dev.gpuctl.engine;

import java.util.List;

/**
 * What a run in {@link Runner.Mode#VERIFY} found: per host, whether it was reached and each check's answer (the steps'
 * verify probes, preflight's checks and the cross-host checks), and the certificate dates the certificate checks read.
 * {@code gpuctl verify} prints it ({@link VerifyText}, or as JSON: schema gpuctl.verify/v1), as does
 * {@code gpuctl certs check}.
 */
public record VerifyReport(List<HostReport> hosts) {
    public VerifyReport { hosts = List.copyOf(hosts); }

    public boolean ok() { return hosts.stream().allMatch(HostReport::ok); }

    /** Every check passed, and at least one of them warned. */
    public boolean warned() { return hosts.stream().flatMap(h -> h.checks().stream()).anyMatch(Check::warned); }

    public List<HostReport> unreachable() { return hosts.stream().filter(h -> !h.reachable()).toList(); }

    /**
     * One check's answer. fix is the command that makes it right. warning: set on a check that passed but names
     * something that soon will not (a certificate with under 30 days left); empty otherwise. detail: what a check
     * found, for people, whether it passed or not (the HA control plane: each master's etcd member, the quorum, the
     * VIP's holder); empty for most checks.
     */
    public record Check(String step, String check, boolean ok, String problem, String fix, String warning, String detail) {
        public Check(String step, String check, boolean ok, String problem, String fix) {
            this(step, check, ok, problem, fix, "", "");
        }

        public Check(String step, String check, boolean ok, String problem, String fix, String warning) {
            this(step, check, ok, problem, fix, warning, "");
        }

        public boolean warned() { return ok && !warning.isEmpty(); }
    }

    /**
     * One certificate's expiry as verify read it (JSON: {@code certificates}).
     *
     * @param kind     control-plane | ca | kubelet | kubeconfig
     * @param expires  ISO-8601 UTC, empty when kubeadm reported it missing
     * @param standing ok | expiring (under 30 days left) | expired | missing
     */
    public record CertificateDate(String name, String kind, String expires, long daysLeft, String standing) {}

    /**
     * A node's last {@code gpuctl repair} (JSON: {@code lastRepair}, null for a node never repaired), from its annotation.
     *
     * @param at       when it began, ISO-8601 UTC
     * @param remedies what it tried (reboot, reset_gpu, reload_modules, restart_plugin, restart_persistenced)
     */
    public record LastRepair(String at, boolean proved, List<String> remedies) {
        public LastRepair { remedies = List.copyOf(remedies); }
    }

    public record HostReport(String name, String address, boolean reachable, String error, List<Check> checks,
                             List<CertificateDate> certificates, LastRepair lastRepair) {
        public HostReport(String name, String address, boolean reachable, String error, List<Check> checks) {
            this(name, address, reachable, error, checks, List.of(), null);
        }

        public HostReport(String name, String address, boolean reachable, String error, List<Check> checks, List<CertificateDate> certificates) {
            this(name, address, reachable, error, checks, certificates, null);
        }

        public boolean ok() { return reachable && checks.stream().allMatch(Check::ok); }
    }
}
