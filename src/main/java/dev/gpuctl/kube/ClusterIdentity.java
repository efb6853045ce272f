package dev.gpuctl.kube;

import dev.gpuctl.text.HostConfException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Whether the hosts and this machine speak of one cluster, before bootstrap changes anything: the master's CA
 * (/etc/kubernetes/pki/ca.crt; none on a blank disk), the cluster each worker is joined to (its
 * /etc/kubernetes/kubelet.conf: server and CA), and the CA this machine recorded at the first bootstrap
 * (.gpuctl/CLUSTER/ca-cert-hash). A blank master beside joined workers, a master whose CA is not the recorded one,
 * or workers joined to another CA than the master's would make {@code kubeadm init} start a second cluster, or
 * leave workers in the old one. Pure: what the hosts said in, the problem out. Hashes are kubeadm's ({@link Kubeadm#caCertHash}).
 */
public final class ClusterIdentity {
    private ClusterIdentity() {}

    /** The cluster a worker is joined to, as its kubelet.conf says: the API server and the CA's hash. */
    public record Joined(String server, String caHash) {}

    /**
     * What the hosts and this machine say.
     *
     * @param master       the master's name
     * @param masterCa     the master's CA hash; empty when it has none (a blank or reset master)
     * @param workers      each worker asked (inventory order) and the cluster it is joined to, empty when none
     * @param recorded     the CA hash this machine recorded at the first bootstrap, empty when none
     * @param recordFile   where that record is kept (for the message)
     * @param newestBackup the newest backup archive on this machine, empty when none
     */
    public record Seen(String master, Optional<String> masterCa, Map<String, Optional<Joined>> workers, Optional<String> recorded,
                       String recordFile, Optional<String> newestBackup) {
        public Seen {
            workers = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(workers));
        }
    }

    /** Empty when bootstrap may go on (no cluster anywhere, or one cluster that every host and the record agree on). */
    public static Optional<String> problem(Seen s) {
        Map<String, List<String>> byCa = new LinkedHashMap<>();
        s.workers().forEach((name, joined) -> joined.ifPresent(j -> byCa.computeIfAbsent(j.caHash(), k -> new ArrayList<>()).add(name)));
        String restore = "restore it with `gpuctl restore BACKUP` (" + s.newestBackup().map(b -> "the newest is " + b)
            .orElse("no backup is kept on this machine under .gpuctl/backups/") + ")";
        if (s.masterCa().isEmpty()) {
            if (!byCa.isEmpty()) {
                List<String> groups = new ArrayList<>();
                byCa.forEach((ca, names) -> groups.add(names(names) + (names.size() == 1 ? " is" : " are") + " joined to one (CA " + ca
                    + (s.recorded().filter(ca::equals).isPresent() ? ", the one this machine recorded" : "") + ")"));
                return Optional.of(s.master() + " has no cluster, but " + String.join("; ", groups) + ": " + restore
                    + ", or take the workers out first (`gpuctl reset`) to start a new cluster. Nothing was changed.");
            }
            if (s.recorded().isPresent()) {
                return Optional.of(s.master() + " has no cluster, but this machine recorded one at the first bootstrap (CA " + s.recorded().get()
                    + ", " + s.recordFile() + "): " + restore + ", or, to start a new cluster, move " + s.recordFile()
                    + " away (`gpuctl reset` archives it). Nothing was changed.");
            }
            return Optional.empty();
        }
        String ca = s.masterCa().get();
        if (s.recorded().isPresent() && !s.recorded().get().equals(ca)) {
            return Optional.of(s.master() + "'s cluster CA is " + ca + ", not the one this machine recorded at the first bootstrap ("
                + s.recorded().get() + ", " + s.recordFile() + "): " + s.master() + " runs another cluster (rebuilt and initialised"
                + " again?). To get the recorded cluster back, " + restore.replaceFirst("^restore it", "restore it on " + s.master())
                + "; if " + s.master() + "'s cluster is the one to keep, move " + s.recordFile() + " away. Nothing was changed.");
        }
        List<String> foreign = new ArrayList<>();
        byCa.forEach((other, names) -> {
            if (!other.equals(ca)) foreign.add(names(names) + (names.size() == 1 ? " is" : " are") + " joined to a cluster with CA " + other);
        });
        if (!foreign.isEmpty()) {
            return Optional.of(String.join("; ", foreign) + ", not " + s.master() + "'s (CA " + ca + "): take them"
                + " out of that cluster first (`kubeadm reset -f` on each), then bootstrap joins them to "
                + s.master() + "'s. Nothing was changed.");
        }
        return Optional.empty();
    }

    private static String names(List<String> names) {
        return String.join(", ", names);
    }

    /**
     * A worker's kubelet.conf as its probe prints it: "server URL" and "ca-data BASE64" lines (what
     * {@code sed} pulls out of the file), nothing when the worker has no kubelet.conf.
     *
     * @throws HostConfException when the file names a server but its CA data is missing or not a certificate
     */
    public static Optional<Joined> parseKubeletConf(String probeOutput) {
        String server = "";
        String data = "";
        for (String line : probeOutput.split("\\R")) {
            String l = line.strip();
            if (l.startsWith("server ") && server.isEmpty()) server = l.substring(7).strip();
            if (l.startsWith("ca-data ") && data.isEmpty()) data = l.substring(8).strip();
        }
        if (server.isEmpty() && data.isEmpty()) return Optional.empty();
        if (data.isEmpty()) throw new HostConfException("kubelet.conf names server " + server + " but no certificate-authority-data");
        byte[] pem;
        try {
            pem = java.util.Base64.getMimeDecoder().decode(data);
        } catch (IllegalArgumentException e) {
            throw new HostConfException("kubelet.conf's certificate-authority-data is not base64: " + e.getMessage());
        }
        return Optional.of(new Joined(server, Kubeadm.caCertHash(new String(pem, java.nio.charset.StandardCharsets.US_ASCII))));
    }
}
