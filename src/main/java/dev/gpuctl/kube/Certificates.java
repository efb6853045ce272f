package dev.gpuctl.kube;

import dev.gpuctl.text.HostConfException;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Certificate expiry, read from what the tools print and from kubeconfig files: {@code kubeadm certs
 * check-expiration}'s two tables, {@code openssl x509 -noout -enddate}, and a kubeconfig's embedded client
 * certificate (read with java.security.cert). Pure: text in, records out.
 */
public final class Certificates {
    private Certificates() {}

    /** Under this much time left a certificate is a warning ({@link Standing#EXPIRING}). */
    public static final Duration WARN_BEFORE = Duration.ofDays(30);

    /** What a certificate is, for people and for {@code --json}. */
    public enum Kind {
        /** a control-plane certificate kubeadm manages (a file under /etc/kubernetes/pki or a kubeconfig's) */
        CONTROL_PLANE("control-plane certificate"),
        /** one of kubeadm's certificate authorities */
        CA("certificate authority"),
        /** the kubelet's client certificate on a host (/var/lib/kubelet/pki/kubelet-client-current.pem) */
        KUBELET("kubelet client certificate"),
        /** the client certificate in this machine's kubeconfig (.gpuctl/CLUSTER/admin.conf) */
        KUBECONFIG("kubeconfig client certificate");

        public final String what;

        Kind(String what) { this.what = what; }
    }

    public enum Standing { OK, EXPIRING, EXPIRED, MISSING }

    /** The kubeconfig only the master kubeadm init ran on has (Kubernetes 1.29+). */
    public static final String SUPER_ADMIN_CONF = "super-admin.conf";

    /**
     * One certificate's expiry.
     *
     * @param notAfter  null when kubeadm reported it missing
     * @param authority the CA that signed it, as kubeadm names it ("ca", "etcd-ca"); empty for CAs and kubeconfigs
     */
    public record Cert(String name, Kind kind, Instant notAfter, String authority, boolean externallyManaged) {
        /**
         * MISSING when kubeadm reported it missing, except super-admin.conf: kubeadm writes it only on the master kubeadm
         * init ran on, a joined master has none, and its absence "will not cause an error" (kubeadm-certs docs).
         */
        public Standing standing(Instant now) {
            if (notAfter == null) return optional() ? Standing.OK : Standing.MISSING;
            return Certificates.standing(notAfter, now);
        }

        /** Whether kubeadm may lawfully report it missing: super-admin.conf on a master that joined. */
        public boolean optional() { return kind == Kind.CONTROL_PLANE && name.equals(SUPER_ADMIN_CONF); }

        /** Whole days left (negative once expired). */
        public long daysLeft(Instant now) {
            return notAfter == null ? 0 : Math.floorDiv(Duration.between(now, notAfter).toSeconds(), 86_400L);
        }

        /** "apiserver (control-plane certificate) expires 2026-12-14 06:01 UTC, in 9 days". */
        public String describe(Instant now) {
            if (notAfter == null) return name + " (" + kind.what + ") is missing";
            long days = daysLeft(now);
            String when = DATE.format(notAfter);
            return switch (standing(now)) {
                case EXPIRED -> name + " (" + kind.what + ") expired " + when;
                default -> name + " (" + kind.what + ") expires " + when + ", in " + days + (days == 1 ? " day" : " days");
            };
        }
    }

    private static final DateTimeFormatter DATE = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT).withZone(ZoneOffset.UTC);

    /** OK with more than {@link #WARN_BEFORE} left, EXPIRING under it, EXPIRED at or after notAfter. */
    public static Standing standing(Instant notAfter, Instant now) {
        if (!now.isBefore(notAfter)) return Standing.EXPIRED;
        return Duration.between(now, notAfter).compareTo(WARN_BEFORE) < 0 ? Standing.EXPIRING : Standing.OK;
    }

    /** kubeadm's EXPIRES column: Go's "Jan 02, 2006 15:04 MST", always UTC. */
    private static final DateTimeFormatter KUBEADM = DateTimeFormatter.ofPattern("MMM dd, yyyy HH:mm 'UTC'", Locale.ENGLISH);

    /**
     * The certificates and CAs in {@code kubeadm certs check-expiration}'s output: the table headed "CERTIFICATE
     * EXPIRES RESIDUAL TIME CERTIFICATE AUTHORITY EXTERNALLY MANAGED", then the one headed "CERTIFICATE AUTHORITY
     * EXPIRES RESIDUAL TIME EXTERNALLY MANAGED". A row "!MISSING! NAME" is a certificate kubeadm expected and did not
     * find. The "[check-expiration]" lines before them are skipped.
     *
     * @throws HostConfException when neither table is there, or a row does not read
     */
    public static List<Cert> parseCheckExpiration(String out) {
        List<Cert> certs = new ArrayList<>();
        List<String> lines = out.lines().toList();
        boolean leaves = false;
        boolean cas = false;
        for (int i = 0; i < lines.size(); i++) {
            String header = lines.get(i);
            Kind kind;
            if (header.matches("CERTIFICATE\\s+EXPIRES\\s+RESIDUAL TIME\\s+CERTIFICATE AUTHORITY\\s+EXTERNALLY MANAGED\\s*")) {
                kind = Kind.CONTROL_PLANE;
                leaves = true;
            } else if (header.matches("CERTIFICATE AUTHORITY\\s+EXPIRES\\s+RESIDUAL TIME\\s+EXTERNALLY MANAGED\\s*")) {
                kind = Kind.CA;
                cas = true;
            } else {
                continue;
            }
            int expires = header.indexOf("EXPIRES");
            int residual = header.indexOf("RESIDUAL TIME");
            int authority = kind == Kind.CA ? -1 : header.indexOf("CERTIFICATE AUTHORITY", residual);
            int external = header.indexOf("EXTERNALLY MANAGED");
            for (i = i + 1; i < lines.size() && !lines.get(i).isBlank(); i++) {
                String row = lines.get(i);
                if (row.startsWith("!MISSING!")) {
                    certs.add(new Cert(row.substring("!MISSING!".length()).strip(), kind, null, "", false));
                    continue;
                }
                if (row.length() <= external) throw bad(row, "it is shorter than the header's columns");
                String name = row.substring(0, expires).strip();
                String date = row.substring(expires, residual).strip();
                String ca = authority < 0 ? "" : row.substring(authority, external).strip();
                String ext = row.substring(external).strip();
                if (name.isEmpty() || !(ext.equals("yes") || ext.equals("no"))) throw bad(row, "no name, or EXTERNALLY MANAGED is not yes/no");
                Instant notAfter;
                try {
                    notAfter = LocalDateTime.parse(date, KUBEADM).toInstant(ZoneOffset.UTC);
                } catch (DateTimeParseException e) {
                    throw bad(row, "EXPIRES '" + date + "' is not a date like 'Dec 30, 2027 23:36 UTC'");
                }
                certs.add(new Cert(name, kind, notAfter, ca, ext.equals("yes")));
            }
        }
        if (!leaves && !cas) {
            throw new HostConfException("kubeadm certs check-expiration printed no certificate table (expected a header"
                + " 'CERTIFICATE  EXPIRES  RESIDUAL TIME  CERTIFICATE AUTHORITY  EXTERNALLY MANAGED'): "
                + out.strip().lines().reduce((a, b) -> b).orElse("(nothing)"));
        }
        return certs;
    }

    private static HostConfException bad(String row, String why) {
        return new HostConfException("kubeadm certs check-expiration: cannot read the row '" + row.strip() + "': " + why);
    }

    /** openssl's date in {@code -enddate}: "notAfter=Dec 30 23:36:00 2027 GMT" (the day space-padded). */
    private static final DateTimeFormatter OPENSSL = DateTimeFormatter.ofPattern("MMM ppd HH:mm:ss yyyy 'GMT'", Locale.ENGLISH);

    /** The date in {@code openssl x509 -noout -enddate}'s line "notAfter=Dec 30 23:36:00 2027 GMT". */
    public static Instant parseOpensslEndDate(String out) {
        String line = out.strip();
        if (!line.startsWith("notAfter=")) throw new HostConfException("openssl x509 -enddate printed '" + line + "', expected 'notAfter=DATE'");
        try {
            return LocalDateTime.parse(line.substring("notAfter=".length()).strip(), OPENSSL).toInstant(ZoneOffset.UTC);
        } catch (DateTimeParseException e) {
            throw new HostConfException("openssl x509 -enddate printed '" + line + "', expected a date like 'Dec 30 23:36:00 2027 GMT'");
        }
    }

    /** The first certificate in PEM or DER bytes. */
    public static X509Certificate x509(byte[] pemOrDer, String what) {
        try {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(pemOrDer));
        } catch (CertificateException | ClassCastException e) {
            throw new HostConfException(what + " is not an X.509 certificate: " + e.getMessage());
        }
    }

    /**
     * The expiry of the client certificate of a kubeconfig's current user ({@code client-certificate-data}, as
     * kubeadm's admin.conf embeds it); empty when that user authenticates otherwise (a token, a file path).
     */
    public static Optional<Instant> kubeconfigClientNotAfter(String kubeconfig, String what) {
        Optional<String> data = Kubeconfig.currentClientCertificateData(kubeconfig);
        if (data.isEmpty()) return Optional.empty();
        byte[] pem;
        try {
            pem = Base64.getMimeDecoder().decode(data.get().getBytes(StandardCharsets.US_ASCII));
        } catch (IllegalArgumentException e) {
            throw new HostConfException(what + ": client-certificate-data is not base64");
        }
        return Optional.of(x509(pem, what + "'s client-certificate-data").getNotAfter().toInstant());
    }
}
