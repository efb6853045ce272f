package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Hostile hosts and secrets on real hosts: the bootstrap lock's place made by another user (refused, nothing
 * written), a kubelet that registers its Node late (waited for), a join configuration left by a killed run (removed
 * by the next), a pod whose environment holds a secret (in no file under .gpuctl/ and no output), and addresses
 * that are host names.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HardeningE2E {
    static TestBed bed;
    static Path inventory;
    static String master;
    static String w1;

    /** What the first steps change on a host: equal before and after proves a refused run changed nothing. */
    static final String FINGERPRINT = "sha256sum /etc/fstab /proc/swaps 2>&1; dpkg-query -W -f='${Status}' chrony 2>&1; "
        + "ls /etc/chrony/sources.d /etc/modules-load.d /etc/sysctl.d 2>&1";

    /** Every path under the lock's place and the decoy, with its type, owner, mode, mtime (ns), size and content hash. */
    static final String LOCK_PLACE = "for p in /run/gpuctl /run/gpuctl/* /root/decoy /root/decoy/*; do [ -e \"$p\" ] || [ -L \"$p\" ] || continue;"
        + " stat -c '%n %F %U %a %.9Y %s' \"$p\"; [ -f \"$p\" ] && [ ! -L \"$p\" ] && sha256sum \"$p\"; done; true";

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() {
        bed = TestBed.own("hard", 1);
        inventory = bed.inventory("docker", "flannel");
        master = bed.master();
        w1 = bed.workers().get(0);
    }

    /** Runs bootstrap with the lock's place as {@code setup} left it; asserts it is refused and nothing was written. */
    static void refusedAndUntouched(String setup, String why) {
        bed.ok(master, "rm -rf /run/gpuctl /root/decoy; " + setup);
        String place = bed.ok(master, LOCK_PLACE);
        Map<String, String> hosts = bed.fingerprints(FINGERPRINT);
        try {
            Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
            assertEquals(3, r.code(), r::toString);
            assertTrue(r.err().contains(master + ": refusing the bootstrap lock: /run/gpuctl") && r.err().contains(why), r::toString);
            assertTrue(r.err().contains("rm -r /run/gpuctl") && r.err().contains("nothing was changed"), r::toString);
            assertEquals(place, bed.ok(master, LOCK_PLACE), "the lock's place and what it points to: content, owner, mode and mtime unchanged");
            assertEquals(hosts, bed.fingerprints(FINGERPRINT), "a refused run changed a host");
        } finally {
            bed.ok(master, "rm -rf /run/gpuctl /root/decoy");
        }
    }

    @Test @Order(1) void theLocksPlaceMadeByAnotherUserIsRefusedAndNothingIsWritten() {
        String decoy = "mkdir -m 700 /root/decoy && printf 'root only\\n' > /root/decoy/bootstrap.holder && chmod 600 /root/decoy/bootstrap.holder && ";
        // a directory that an unprivileged user owns (and could fill with links at any time)
        refusedAndUntouched("mkdir /run/gpuctl && printf 'x\\n' > /run/gpuctl/bootstrap.holder && chown -R nobody /run/gpuctl",
            "is owned by uid 65534");
        // a symbolic link that user planted, pointing at a root-only directory: root must not write through it
        refusedAndUntouched(decoy + "ln -s /root/decoy /run/gpuctl && chown -h nobody /run/gpuctl", "is a symbolic link");
        // root's directory, but others may write into it
        refusedAndUntouched("mkdir -m 777 /run/gpuctl", "has mode 777");
        // root's directory, with the holder file a link to a root-only file
        refusedAndUntouched(decoy + "mkdir -m 700 /run/gpuctl && ln -s /root/decoy/bootstrap.holder /run/gpuctl/bootstrap.holder",
            "/run/gpuctl/bootstrap.holder is a symbolic link");
    }

    @Test @Order(2) void aNodeTheKubeletRegistersLateIsWaitedForBeforeItIsLabelled() throws IOException {
        // kubeadm join returns once the kubelet has its credentials; this kubelet registers its Node 40 s later
        bed.ok(w1, "echo 40 > /etc/gpuctl-testbed/kubelet-register-delay");
        try {
            Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
            assertEquals(0, r.code(), r::toString);
        } finally {
            bed.ok(w1, "rm -f /etc/gpuctl-testbed/kubelet-register-delay");
        }
        assertTrue(bed.ok(master, "kubectl --kubeconfig=/etc/kubernetes/admin.conf get node " + w1 + " -o jsonpath='{.metadata.labels}'")
            .contains("\"nvidia.com/gpu.present\":\"true\""), "labelled");
        // the join step asked for the Node with the kubelet's credentials, found it missing, and asked again until it was there
        String log = newestLog(w1);
        String ask = "$ kubectl --kubeconfig=/etc/kubernetes/kubelet.conf get node " + w1 + " -o name\n";
        assertTrue(log.contains(ask + "  exit 1 (asked in the batch above)\n  stderr:\n    Error from server (NotFound): nodes \"" + w1 + "\" not found"),
            "not there right after the join: without the wait, labelling it would have failed");
        assertTrue(log.split(java.util.regex.Pattern.quote(ask + "  exit 1"), -1).length > 5, "asked again while the kubelet had not registered it");
        assertTrue(log.contains(ask + "  exit 0"), "and then found");
        assertEquals("", bed.ok(w1, "ls -A /etc/kubernetes/gpuctl | grep -E '^(kubeadm-join.yaml|join\\.)' || true"),
            "no file holding the token is left after a join");
        Gpuctl.Run again = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
    }

    @Test @Order(3) void aJoinConfigurationLeftByAKilledRunIsRemovedByTheNextRun() {
        // what a run killed outright leaves: the uploaded file, and the private directory the join command moved it to
        bed.ok(w1, "umask 077; printf 'token: abcdef.0123456789abcdef\\n' > /etc/kubernetes/gpuctl/kubeadm-join.yaml"
            + " && mkdir /etc/kubernetes/gpuctl/join.Ab12Cd34 && cp /etc/kubernetes/gpuctl/kubeadm-join.yaml /etc/kubernetes/gpuctl/join.Ab12Cd34/");
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.err().lines().anyMatch(l -> l.matches(w1 + "\\s+join\\s+changed .*")), r::toString);
        assertEquals("", bed.ok(w1, "ls -A /etc/kubernetes/gpuctl | grep -E '^(kubeadm-join.yaml|join\\.)' || true"));
        Gpuctl.Run again = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
    }

    @Test @Order(4) void aSecretInAPodsEnvironmentReachesNoFileUnderGpuctlAndNoOutput() throws IOException {
        String secret = "hunter2-" + HexFormat.of().formatHex(java.security.SecureRandom.getSeed(8));
        String pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"holds-a-secret\",\"namespace\":\"default\"},"
            + "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
            + "\"env\":[{\"name\":\"DB_PASSWORD_PLAIN\",\"value\":\"" + secret + "\"}],"
            + "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}";
        String deployment = "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"app\",\"namespace\":\"default\"},"
            + "\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{\"app\":\"app\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"app\"}},"
            + "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"env\":[{\"name\":\"API_KEY\",\"value\":\"" + secret + "\"}]}]}}}}";
        String kubectl = "kubectl --kubeconfig=/etc/kubernetes/admin.conf ";
        bed.ok(master, "printf '%s\\n' '" + pod + "' > /root/secret-pod.json && printf '%s\\n' '" + deployment + "' > /root/secret-deploy.json && "
            + kubectl + "apply -f /root/secret-pod.json && " + kubectl + "apply -f /root/secret-deploy.json && rm /root/secret-*.json");
        try {
            assertTrue(bed.ok(master, kubectl + "get pods -A -o json").contains(secret), "the cluster holds the secret where -o json shows it");

            List<Gpuctl.Run> runs = new ArrayList<>();
            runs.add(Gpuctl.run("bootstrap", inventory.toString()));
            runs.add(Gpuctl.run("verify", inventory.toString()));
            runs.add(Gpuctl.run("verify", "--json", inventory.toString()));
            runs.add(Gpuctl.run("gpus", inventory.toString()));
            runs.add(Gpuctl.run("gpus", "--json", inventory.toString()));
            assertEquals(0, runs.get(0).code(), runs.get(0)::toString);
            assertEquals(0, runs.get(1).code(), runs.get(1)::toString);
            assertEquals(0, runs.get(3).code(), runs.get(3)::toString);
            assertTrue(runs.get(3).out().contains("holds-a-secret"), () -> "gpus read the pod:\n" + runs.get(3));
            for (Gpuctl.Run r : runs) assertFalse(r.out().contains(secret) || r.err().contains(secret), r::toString);

            Path state = inventory.resolveSibling(".gpuctl");
            List<Path> files;
            try (Stream<Path> s = Files.walk(state)) {
                files = s.filter(Files::isRegularFile).toList();
            }
            assertTrue(files.stream().anyMatch(f -> f.toString().endsWith(master + ".log")), files::toString);
            for (Path f : files) {
                assertFalse(Files.readString(f, StandardCharsets.ISO_8859_1).contains(secret), "the secret is in " + f);
                assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(f)), f::toString);
            }
        } finally {
            bed.ssh(master, kubectl + "delete pod holds-a-secret; " + kubectl + "delete deployment app");
        }
    }

    /**
     * The inventory with names for addresses: this machine resolves them through a hosts file of the test's own
     * (a gpuctl JVM started with jdk.net.hosts.file), the hosts through /etc/hosts. The node IPs gpuctl finds at
     * preflight are the bed's: a bootstrap of the running cluster by names changes nothing (same advertise address,
     * node-ip and join endpoint), verify passes, and a name a host cannot resolve stops preflight naming that host.
     */
    @Test @Order(5) void addressesThatAreNamesAreResolvedToTheSameNodeIpsAtPreflight() throws Exception {
        Path dir = Files.createTempDirectory("gpuctl-names");
        String m = master + ".gpu.test";
        String w = w1 + ".gpu.test";
        Path hostsFile = dir.resolve("hosts");
        Files.writeString(hostsFile, bed.address(master) + " " + m + "\n" + bed.address(w1) + " " + w + "\n");
        Path knownHosts = dir.resolve("known_hosts");
        Files.writeString(knownHosts, Files.readString(bed.knownHosts()).replaceAll("(?m)^(\\S+),(h\\d+) ", "$1,$2,$2.gpu.test "));
        // beside the other inventory: the same local state (.gpuctl/, the admin.conf copy)
        Path named = inventory.resolveSibling("inventory-names.yaml");
        Files.writeString(named, Files.readString(inventory)
            .replace("address: " + bed.address(master) + ",", "address: " + m + ",")
            .replace("address: " + bed.address(w1) + ",", "address: " + w + ",")
            .replace(bed.knownHosts().toString(), knownHosts.toString()));
        assertFalse(Files.readString(named).contains(bed.address(w1)), "no IP left in the inventory");
        Gpuctl.Run plan = Gpuctl.run("plan", "--details", named.toString());
        assertEquals(0, plan.code(), plan::toString);
        assertTrue(plan.out().contains("[" + w1 + " " + w + " worker] (address is a name: the node IP, unless nodeIp gives it, is resolved at preflight)"),
            plan::toString);
        String hostsLine = "printf '%s %s\\n' " + bed.address(master) + " " + m + " >> /etc/hosts";
        for (String h : List.of(master, w1)) bed.ok(h, hostsLine);
        try {
            Gpuctl.Run again = gpuctlResolving(hostsFile, "bootstrap", named.toString());
            assertEquals(0, again.code(), again::toString);
            assertEquals(0, again.count("changed"), () -> "the names led to other node IPs:\n" + again);
            Gpuctl.Run verify = gpuctlResolving(hostsFile, "verify", named.toString());
            assertEquals(0, verify.code(), verify::toString);
            assertEquals(bed.address(w1), bed.ok(master, "kubectl --kubeconfig=/etc/kubernetes/admin.conf get node " + w1
                + " -o jsonpath='{.status.addresses[?(@.type==\"InternalIP\")].address}'").strip());

            bed.ok(w1, "sed -i '/ " + m + "$/d' /etc/hosts");
            Map<String, String> before = bed.fingerprints(FINGERPRINT);
            Gpuctl.Run refused = gpuctlResolving(hostsFile, "bootstrap", named.toString());
            assertEquals(3, refused.code(), refused::toString);
            assertTrue(refused.err().contains("the master's address '" + m + "' does not resolve here") && refused.err().contains(w1),
                refused::toString);
            assertEquals(before, bed.fingerprints(FINGERPRINT), "a refused run changed a host");
        } finally {
            for (String h : List.of(master, w1)) bed.ok(h, "sed -i '/ " + m + "$/d' /etc/hosts");
        }
    }

    /**
     * A control plane at another minor than the inventory's (its kube-apiserver image, as kubeadm writes it, says
     * v1.34.2): bootstrap refuses at preflight and changes nothing; verify names it.
     */
    @Test @Order(6) void aClusterRunningAnotherMinorIsNeverChangedByBootstrap() {
        String manifest = "/etc/kubernetes/manifests/kube-apiserver.yaml";
        bed.ok(master, "cp -p " + manifest + " /root/kube-apiserver.yaml.keep && sed -i 's#\\(kube-apiserver:\\)v[0-9.]*#\\1v1.34.2#' " + manifest
            + " && grep -q 'kube-apiserver:v1.34.2' " + manifest);
        try {
            Map<String, String> before = bed.fingerprints(FINGERPRINT + "; dpkg-query -W kubelet kubeadm kubectl; apt-mark showhold");
            Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
            assertEquals(3, r.code(), r::toString);
            assertTrue(r.err().contains("the cluster runs v1.34.2; the inventory asks for 1.35: run `gpuctl upgrade`"),
                r::toString);
            assertEquals(before, bed.fingerprints(FINGERPRINT + "; dpkg-query -W kubelet kubeadm kubectl; apt-mark showhold"),
                "a refused run changed a host");
            Gpuctl.Run verify = Gpuctl.run("verify", inventory.toString());
            assertEquals(4, verify.code(), verify::toString);
            assertTrue(verify.out().contains("the cluster runs v1.34.2"), verify::toString);
        } finally {
            bed.ok(master, "cp -p /root/kube-apiserver.yaml.keep " + manifest + " && rm /root/kube-apiserver.yaml.keep");
        }
    }

    /**
     * A worker known only by its ~/.ssh/config alias, reached through the master as its ProxyJump, with the key the
     * config names: verify passes and bootstrap changes nothing; the worker's sshd saw the connection come from the
     * master; plan says how each host is reached.
     */
    @Test @Order(7) void aWorkerReachedThroughAnSshConfigAliasAndProxyJump() throws IOException {
        // (the test's own ssh to the worker comes from the bed's gateway; gpuctl's, through the jump, from the master)
        Path home = Files.createTempDirectory("gpuctl-home");
        Files.createDirectories(home.resolve(".ssh"));
        Files.writeString(home.resolve(".ssh/config"), "Host gpu-worker-1\n  HostName " + bed.address(w1) + "\n  ProxyJump root@"
            + bed.address(master) + "\n\nHost *\n  IdentityFile " + bed.clientKey() + "\n");
        Path aliased = inventory.resolveSibling("inventory-alias.yaml");
        String text = Files.readString(inventory).replaceAll("(?m)^  identityFile: .*\n", "")
            .replace("address: " + bed.address(w1) + ",", "address: gpu-worker-1,");
        assertFalse(text.contains("identityFile") || text.contains(bed.address(w1)), text);
        Files.writeString(aliased, text);
        Map<String, String> env = Map.of("HOME", home.toString());

        Gpuctl.Run plan = Gpuctl.run(env, "plan", aliased.toString());
        assertEquals(0, plan.code(), plan::toString);
        assertTrue(plan.out().contains(w1 + "  ssh root@" + bed.address(w1) + ":22 (root), key " + bed.clientKey() + " (from ~/.ssh/config), via root@"
            + bed.address(master) + ":22"), plan::toString);
        String mark = bed.ok(w1, "date +%s").strip();
        Gpuctl.Run verify = Gpuctl.run(env, "verify", aliased.toString());
        assertEquals(0, verify.code(), verify::toString);
        Gpuctl.Run again = Gpuctl.run(env, "bootstrap", aliased.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
        String accepted = bed.ok(w1, "journalctl -q --no-pager --since @" + mark + " -t sshd -t sshd-session 2>/dev/null | grep 'Accepted publickey for root' || true");
        assertTrue(accepted.contains("from " + bed.address(master) + " "), () -> "the worker's sshd saw: " + accepted);
    }

    /** gpuctl in a JVM of its own that resolves names only through {@code hostsFile}, with its stdout and stderr. */
    static Gpuctl.Run gpuctlResolving(Path hostsFile, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Djdk.net.hosts.file=" + hostsFile, "-cp", System.getProperty("java.class.path"), "dev.gpuctl.cli.Main"));
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile(hostsFile.getParent(), "out", ".txt");
        Path err = Files.createTempFile(hostsFile.getParent(), "err", ".txt");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        if (!p.waitFor(15, java.util.concurrent.TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("gpuctl " + String.join(" ", args) + " ran over 15 minutes");
        }
        return new Gpuctl.Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    /** The newest log of a host under .gpuctl/logs (the last run's). */
    static String newestLog(String host) throws IOException {
        Path logs = inventory.resolveSibling(".gpuctl").resolve("logs");
        try (Stream<Path> s = Files.list(logs)) {
            Path dir = s.filter(d -> Files.exists(d.resolve(host + ".log")) && !d.getFileName().toString().contains("verify"))
                .max(java.util.Comparator.comparing(d -> d.toFile().lastModified())).orElseThrow();
            return Files.readString(dir.resolve(host + ".log"));
        }
    }
}
