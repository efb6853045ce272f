package dev.gpuctl.steps;

import dev.gpuctl.kube.Certificates.Cert;
import dev.gpuctl.kube.Certificates.Kind;
import dev.gpuctl.kube.Certificates.Standing;
import dev.gpuctl.kube.Certificates;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.kube.Kubeconfig;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Certificate expiry, for {@code gpuctl verify} (and again at the end of {@code gpuctl certs renew}): on the master
 * every control-plane certificate and CA ({@code kubeadm certs check-expiration}) and the client certificate of this
 * machine's kubeconfig (.gpuctl/CLUSTER/admin.conf, read here with java.security.cert); on every host that the
 * kubelet rotates its client certificate and that the current one is valid. Expired (or missing) is a failure;
 * under {@link Certificates#WARN_BEFORE} left is a warning ({@link #warnings}). Read-only: bootstrap does not run it,
 * {@code gpuctl certs renew} is what renews.
 */
public final class CertificatesStep implements Step {
    static final String KUBELET_CONFIG = "/var/lib/kubelet/config.yaml";
    public static final String KUBELET_CURRENT = "/var/lib/kubelet/pki/kubelet-client-current.pem";

    private final Clock clock;

    public CertificatesStep() { this(Clock.systemUTC()); }

    public CertificatesStep(Clock clock) { this.clock = clock; }

    public static final String ID = "certs";

    @Override public String id() { return ID; }
    @Override public String fix(Probe probe, boolean failed, String host, String inventory) { return fix(inventory); }
    @Override public String title() { return "certificates: expiry, kubelet rotation"; }
    @Override public boolean runsOn(HostContext ctx) { return true; }
    @Override public List<Op> apply(HostContext ctx) { return List.of(); }

    /** The facts each probe learns: the tool's text, read into records by {@link #certificates}. */
    static String kubeadmFact(String host) { return "certs.kubeadm." + host; }
    static String kubeconfigFact(String host) { return "certs.kubeconfig." + host; }
    static String kubeletFact(String host) { return "certs.kubelet." + host; }

    @Override public List<Probe> check(HostContext ctx) {
        String host = ctx.node().name();
        List<Probe> probes = new ArrayList<>();
        if (ctx.node().isMaster()) {
            probes.add(new Probe("control-plane certificates and CAs not expired (kubeadm certs check-expiration)",
                "kubeadm certs check-expiration 2>&1",
                (r, f) -> r.ok() ? controlPlaneProblem(r.stdout(), clock.instant())
                    : Optional.of("kubeadm certs check-expiration: exit " + r.exit() + ": " + Probe.oneLine(r.stdout())),
                r -> r.ok() ? Map.of(kubeadmFact(host), r.stdout()) : Map.of(), Duration.ZERO));
            Path local = ctx.inventory().localKubeconfig();
            String shown = ".gpuctl/" + ctx.cluster().name() + "/admin.conf";
            probes.add(new Probe("this machine's kubeconfig client certificate not expired (" + shown + ")", "true",
                (r, f) -> kubeconfigProblem(local, clock.instant()),
                r -> kubeconfigNotAfter(local).map(i -> Map.of(kubeconfigFact(host), i.toString())).orElse(Map.of()),
                Duration.ZERO));
        }
        probes.add(Probe.of("kubelet rotates its client certificate (rotateCertificates, kubelet-client-current.pem a link)",
            "if grep -Eq '^rotateCertificates:[[:space:]]*true[[:space:]]*$' " + KUBELET_CONFIG + " 2>/dev/null; then echo rotate=on;"
                + " else echo rotate=off; fi; l=" + KUBELET_CURRENT + "; if [ -L \"$l\" ]; then echo \"link=$(readlink \"$l\")\";"
                + " elif [ -e \"$l\" ]; then echo link=file; else echo link=none; fi",
            r -> rotationProblem(r.stdout())));
        probes.add(new Probe("kubelet client certificate valid (" + KUBELET_CURRENT + ")",
            "openssl x509 -noout -enddate -in " + KUBELET_CURRENT + " 2>&1",
            (r, f) -> kubeletProblem(r.exit(), r.stdout(), clock.instant()),
            r -> r.ok() ? Map.of(kubeletFact(host), r.stdout()) : Map.of(), Duration.ZERO));
        return probes;
    }

    /**
     * Expired or missing control-plane certificates and CAs, each with its date; empty when none (super-admin.conf is never one: kubeadm writes it only where init ran, a joined master has none, and its docs
     * say its absence causes no error: {@link Certificates.Cert#optional()}).
     */
    static Optional<String> controlPlaneProblem(String out, Instant now) {
        List<Cert> certs;
        try {
            certs = Certificates.parseCheckExpiration(out);
        } catch (HostConfException e) {
            return Optional.of(e.getMessage());
        }
        List<String> bad = certs.stream().filter(c -> c.standing(now) == Standing.EXPIRED || c.standing(now) == Standing.MISSING)
            .map(c -> c.describe(now)).toList();
        return bad.isEmpty() ? Optional.empty() : Optional.of(String.join("\n", bad));
    }

    static Optional<Instant> kubeconfigNotAfter(Path local) {
        try {
            return Certificates.kubeconfigClientNotAfter(Files.readString(local), local.toString());
        } catch (IOException | HostConfException | Kubeconfig.Invalid e) {
            return Optional.empty();
        }
    }

    static Optional<String> kubeconfigProblem(Path local, Instant now) {
        Optional<Instant> end;
        try {
            end = Certificates.kubeconfigClientNotAfter(Files.readString(local), local.toString());
        } catch (NoSuchFileException e) {
            return Optional.of(local + " is missing");
        } catch (IOException e) {
            return Optional.of("cannot read " + local + ": " + e.getMessage());
        } catch (HostConfException | Kubeconfig.Invalid e) {
            return Optional.of(e.getMessage());
        }
        if (end.isEmpty()) return Optional.empty(); // no client certificate: nothing of gpuctl's that expires
        Cert c = new Cert(local.toString(), Kind.KUBECONFIG, end.get(), "", false);
        return c.standing(now) == Standing.EXPIRED ? Optional.of(c.describe(now)) : Optional.empty();
    }

    /** The rotation probe's answer "rotate=on|off" and "link=TARGET|file|none", judged. */
    static Optional<String> rotationProblem(String out) {
        List<String> wrong = new ArrayList<>();
        if (!out.contains("rotate=on")) wrong.add(KUBELET_CONFIG + " does not set rotateCertificates: true");
        if (out.contains("link=none")) wrong.add(KUBELET_CURRENT + " is missing");
        else if (out.contains("link=file")) wrong.add(KUBELET_CURRENT + " is a plain file, not the link the kubelet's certificate manager keeps");
        return wrong.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", wrong));
    }

    static Optional<String> kubeletProblem(int exit, String out, Instant now) {
        if (exit != 0) return Optional.of("openssl x509 -enddate -in " + KUBELET_CURRENT + ": exit " + exit + ": " + Probe.oneLine(out));
        try {
            Cert c = new Cert(KUBELET_CURRENT, Kind.KUBELET, Certificates.parseOpensslEndDate(out), "", false);
            return c.standing(now) == Standing.EXPIRED ? Optional.of(c.describe(now)) : Optional.empty();
        } catch (HostConfException e) {
            return Optional.of(e.getMessage());
        }
    }

    /** Every certificate date this step's probes learned on one host, in probe order. */
    public static List<Cert> certificates(Facts facts, String host) {
        List<Cert> certs = new ArrayList<>();
        facts.get(kubeadmFact(host)).ifPresent(t -> {
            try {
                certs.addAll(Certificates.parseCheckExpiration(t));
            } catch (HostConfException e) {
                // its check failed and says why
            }
        });
        facts.get(kubeconfigFact(host)).ifPresent(t -> certs.add(new Cert(".gpuctl/admin.conf", Kind.KUBECONFIG, Instant.parse(t), "", false)));
        facts.get(kubeletFact(host)).ifPresent(t -> {
            try {
                certs.add(new Cert("kubelet-client-current.pem", Kind.KUBELET, Certificates.parseOpensslEndDate(t), "", false));
            } catch (HostConfException e) {
                // its check failed and says why
            }
        });
        return certs;
    }

    /**
     * The warning one of this step's checks carries on a host: its certificates with under {@link
     * Certificates#WARN_BEFORE} left, each named with its date; empty when none.
     */
    @Override public String warning(Probe probe, Facts facts, String host) {
        Instant now = clock.instant();
        Kind kind = probe.what().startsWith("control-plane") ? Kind.CONTROL_PLANE
            : probe.what().startsWith("this machine's kubeconfig") ? Kind.KUBECONFIG
            : probe.what().startsWith("kubelet client certificate valid") ? Kind.KUBELET : null;
        if (kind == null) return "";
        return String.join("\n", certificates(facts, host).stream()
            .filter(c -> c.kind() == kind || (kind == Kind.CONTROL_PLANE && c.kind() == Kind.CA))
            .filter(c -> c.standing(now) == Standing.EXPIRING).map(c -> c.describe(now)).toList());
    }

    /**
     * What makes a certificate check right: {@code gpuctl certs renew} renews the control plane's and refreshes the
     * kubeconfigs; a kubelet's client certificate is the kubelet's to rotate (rotateCertificates: true, which kubeadm
     * sets), and a kubelet whose certificate expired must join again.
     */
    public static String fix(String inventory) {
        return "gpuctl certs renew " + inventory + " (control plane, kubeconfigs); a kubelet rotates its own with"
            + " rotateCertificates: true in " + KUBELET_CONFIG;
    }
}
