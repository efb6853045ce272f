package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.gpuctl.testbed.BedResult;
import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A control plane of three masters behind a VIP, and a worker: bootstrap initialises the first master with the shared
 * certificates uploaded under a certificate key, the other two join with kubeadm join --control-plane (the key and the
 * token only in 0600 files, never in a log), the worker joins through the VIP; the VIP holder's host going down leaves
 * kubectl through the VIP working (the other two masters are a majority of etcd); with the host back a re-run changes
 * nothing. Day 2 (bootstrapped at 1.34): upgrade to 1.35 (kubeadm upgrade apply on the first master, kubeadm upgrade node
 * on the others one at a time, each master's kubelet and API server asked on its host), certs renew on every master
 * (each master's certificate asked on its host), a backup from the first healthy etcd member with the member list.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HaControlPlaneE2E {
    static TestBed bed;
    static Path inventory;
    static String vip;
    static List<String> masters;
    static String worker;

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() throws IOException {
        bed = TestBed.own("hacp", 3);
        List<String> hosts = bed.hosts();
        masters = hosts.subList(0, 3);
        worker = hosts.get(3);
        Path generated = bed.inventory("docker", "flannel");
        String address = bed.address(bed.master());
        vip = address.substring(0, address.lastIndexOf('.')) + ".202";
        inventory = generated.resolveSibling("inventory.yaml");
        String text = Files.readString(generated).replace("cluster:\n", "cluster:\n  controlPlaneEndpoint: { vip: " + vip + " }\n");
        assertTrue(text.contains("kubernetesVersion: \"1.35\""), text);
        text = text.replace("kubernetesVersion: \"1.35\"", "kubernetesVersion: \"1.34\""); // day 2 upgrades it one minor
        for (String m : masters.subList(1, 3)) {
            text = text.replace("{ name: " + m + ", address: " + bed.address(m) + ", role: worker }",
                "{ name: " + m + ", address: " + bed.address(m) + ", role: master, gpu: false }");
        }
        Files.writeString(inventory, text);
    }

    static String holder() throws InterruptedException {
        for (int i = 0; i < 60; i++) {
            List<String> now = masters.stream().filter(h -> bed.ssh(h, "ip -o -4 addr show").out().contains(" " + vip + "/")).toList();
            if (now.size() == 1) return now.get(0);
            Thread.sleep(1000);
        }
        return fail("no single master holds the VIP " + vip);
    }

    static String nodesThroughTheVip(String from) {
        return bed.ok(from, "kubectl --kubeconfig=/etc/kubernetes/admin.conf get nodes -o name");
    }

    @Test @Order(1) void bootstrapMakesThreeControlPlanesAndAWorker() throws IOException {
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        String nodes = nodesThroughTheVip(worker.equals(masters.get(0)) ? masters.get(1) : masters.get(0));
        for (String h : bed.hosts()) assertTrue(nodes.contains("node/" + h + "\n"), nodes);
        // kubeadm init got the VIP (from VipE2E, merged here): the endpoint in kubeadm-config and the laptop's admin.conf,
        // and a SAN of every master's API server certificate
        assertTrue(bed.ok(masters.get(0), "kubectl --kubeconfig=/etc/kubernetes/admin.conf get configmap -n kube-system kubeadm-config"
            + " -o jsonpath='{.data.ClusterConfiguration}'").contains("controlPlaneEndpoint: " + vip + ":8443"));
        assertTrue(Files.readString(inventory.resolveSibling(".gpuctl/gpu-bed/admin.conf")).contains("server: https://" + vip + ":8443"));
        for (String m : masters) {
            assertTrue(bed.ok(m, "openssl x509 -in /etc/kubernetes/pki/apiserver.crt -noout -ext subjectAltName").contains("IP Address:" + vip), m);
            assertTrue(bed.ok(m, "grep server: /etc/kubernetes/admin.conf").contains("https://" + vip + ":8443"), m);
            assertEquals("", bed.ok(m, "test -f /etc/kubernetes/manifests/kube-apiserver.yaml && test -f /etc/kubernetes/manifests/etcd.yaml"
                + " && test -f /etc/kubernetes/pki/ca.key && find /etc/kubernetes/gpuctl -name 'kubeadm-join*' -o -name 'kubeadm-upload*'"), m);
            // each master's own API server answers, and serves the one cluster (the same nodes)
            assertTrue(bed.ok(m, "kubectl --kubeconfig=/etc/kubernetes/admin.conf --server=https://" + bed.address(m)
                + ":6443 get nodes -o name").contains("node/" + worker + "\n"), m);
            assertTrue(bed.ok(masters.get(0), "kubectl --kubeconfig=/etc/kubernetes/admin.conf get node " + m
                + " -o jsonpath='{.metadata.labels}'").contains("node-role.kubernetes.io/control-plane"), m);
        }
        // the same CA everywhere: downloaded from kubeadm-certs, not made anew
        String ca = bed.ok(masters.get(0), "sha256sum < /etc/kubernetes/pki/ca.key");
        for (String m : masters) assertEquals(ca, bed.ok(m, "sha256sum < /etc/kubernetes/pki/ca.key"), m);
        // the certificate key never in a log: the upload and the joins show it masked
        String logs = bed.ok(masters.get(0), "kubectl --kubeconfig=/etc/kubernetes/admin.conf get secret -n kube-system kubeadm-certs -o name");
        assertEquals("secret/kubeadm-certs\n", logs);
        try (var files = Files.walk(inventory.resolveSibling(".gpuctl"))) {
            for (Path f : files.filter(Files::isRegularFile).filter(f -> f.toString().endsWith(".log")).toList()) {
                String log = Files.readString(f);
                assertFalse(log.matches("(?s).*certificateKey: \"[0-9a-f]{64}\".*"), f + " shows a certificate key");
            }
        }
    }

    @Test @Order(2) void theVipHolderDownKubectlThroughTheVipStillWorks() throws InterruptedException {
        String first = holder();
        BedResult stop = bed.bed("stop", first);
        assertEquals(0, stop.exit(), stop.toString());
        try {
            stillWorks(first);
        } finally {
            BedResult back = bed.bed("up", "3");
            assertEquals(0, back.exit(), back.toString());
        }
    }

    static void stillWorks(String first) throws InterruptedException {
        List<String> rest = masters.stream().filter(m -> !m.equals(first)).toList();
        String next = holder();
        assertTrue(rest.contains(next), next);
        String nodes = "";
        for (int i = 0; i < 30; i++) {  // haproxy marks the stopped master's API server down after its failed checks
            BedResult r = bed.ssh(worker, "kubectl --kubeconfig=/etc/kubernetes/kubelet.conf get nodes -o name");
            nodes = r.out();
            if (r.exit() == 0 && nodes.contains("node/" + worker + "\n")) break;
            Thread.sleep(1000);
        }
        for (String h : bed.hosts()) assertTrue(nodes.contains("node/" + h + "\n"), nodes);
        assertEquals("", bed.ok(rest.get(0), "kubectl --kubeconfig=/etc/kubernetes/admin.conf label node " + worker
            + " gpuctl.test/written=yes --overwrite >/dev/null"), "a write with one master of three down");
    }

    @Test @Order(3) void withTheHostBackAReRunChangesNothing() throws InterruptedException {
        // the VIP settled: the first master (keepalived's highest priority) takes it back once its API server answers,
        // and while it moves the endpoint does not answer for a few seconds; a re-run in that gap sees kubectl fail
        String first = masters.get(0);
        for (long deadline = System.nanoTime() + 180_000_000_000L; ; Thread.sleep(1000)) {
            if (holder().equals(first) && bed.ssh(worker, "kubectl --kubeconfig=/etc/kubernetes/kubelet.conf get nodes -o name").exit() == 0) break;
            assertTrue(System.nanoTime() < deadline, () -> "the first master holds the VIP again and it answers: holder " + bed.ssh(first, "ip -o -4 addr show"));
        }
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(0, r.count("changed"), r::toString);
    }

    // ---- day 2: see and shrink the control plane (@Order 10..19) ----

    /** etcdctl on a master as kubeadm's docs run it, inside the etcd static pod (kubeadm puts no etcdctl on the host). */
    static BedResult etcdctl(String master, String args) {
        return bed.ssh(master, etcdctlCommand(args));
    }

    /** The shell command of {@link #etcdctl}: the running etcd container's etcdctl with kubeadm's etcd certificates. */
    static String etcdctlCommand(String args) {
        return "id=$(crictl ps --name '^etcd$' --state running -q | head -n 1); crictl exec \"$id\" etcdctl"
            + " --endpoints=https://127.0.0.1:2379 --cacert=/etc/kubernetes/pki/etcd/ca.crt --cert=/etc/kubernetes/pki/etcd/server.crt"
            + " --key=/etc/kubernetes/pki/etcd/server.key " + args;
    }

    /** name -> hex ID, from {@code etcdctl member list} (simple: "ID, started, NAME, PEER, CLIENT, IS LEARNER"). */
    static java.util.Map<String, String> members(String master) {
        BedResult r = etcdctl(master, "member list");
        assertEquals(0, r.exit(), r.toString());
        java.util.Map<String, String> out = new java.util.TreeMap<>();
        for (String l : r.out().strip().split("\n")) {
            String[] f = l.split(", ");
            out.put(f[2], f[0]);
        }
        return out;
    }

    /** The control-plane checks of one host in {@code verify --json}: check -> [ok, detail]. */
    static java.util.Map<String, List<String>> controlPlane(Gpuctl.Run r, String host) throws IOException {
        java.util.Map<String, List<String>> out = new java.util.LinkedHashMap<>();
        for (var h : new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out()).path("hosts")) {
            if (!h.path("name").asText().equals(host)) continue;
            for (var c : h.path("checks")) {
                if (c.path("step").asText().equals("control-plane")) {
                    out.put(c.path("check").asText(), List.of(c.path("ok").asText(), c.path("detail").asText(), c.path("problem").asText()));
                }
            }
        }
        return out;
    }

    static List<String> check(java.util.Map<String, List<String>> checks, String prefix) {
        return checks.entrySet().stream().filter(e -> e.getKey().startsWith(prefix)).map(java.util.Map.Entry::getValue).findFirst()
            .orElseGet(() -> fail("no check '" + prefix + "' in " + checks));
    }

    /** Every member healthy again, as the first master's etcdctl sees it: bounded, then asserted. */
    static void allMembersHealthy() throws InterruptedException {
        BedResult r = null;
        for (int i = 0; i < 60; i++) {
            r = etcdctl(masters.get(0), "endpoint health --cluster");
            if (r.exit() == 0) break;
            Thread.sleep(1000);
        }
        assertEquals(0, r.exit(), "etcd's members healthy again: " + r);
    }

    /** chrony on each host has a source again after `bed up` restarted the bed's network: bounded, then asserted. */
    static void clocksSynchronised(List<String> hosts) throws InterruptedException {
        String synced = "chronyc -n tracking 2>/dev/null | grep -q '^Leap status *: Normal' || [ \"$(timedatectl show -p NTPSynchronized --value)\" = yes ]";
        for (String h : hosts) {
            BedResult r = null;
            for (int i = 0; i < 90; i++) {
                r = bed.ssh(h, synced);
                if (r.exit() == 0) break;
                Thread.sleep(1000);
            }
            assertEquals(0, r.exit(), h + ": clock synchronised again: " + r);
        }
    }

    @Test @Order(10) void verifyShowsEachMembersEtcdTheQuorumAndTheVipHolder() throws Exception {
        String holder = holder();
        java.util.Map<String, String> ids = members(masters.get(0));
        assertEquals(new java.util.TreeSet<>(masters), ids.keySet(), ids.toString());
        Gpuctl.Run r = Gpuctl.run("verify", "--json", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        for (String m : masters) {
            var checks = controlPlane(r, m);
            List<String> member = check(checks, "this master's etcd member");
            assertEquals("true", member.get(0), checks.toString());
            assertTrue(member.get(1).startsWith("member " + m + " (id " + ids.get(m) + ", https://" + bed.address(m) + ":2379), "), member.get(1));
            assertTrue(member.get(1).endsWith(", healthy"), member.get(1));
            List<String> quorum = check(checks, "etcd quorum");
            assertEquals(List.of("true"), quorum.subList(0, 1), checks.toString());
            assertTrue(quorum.get(1).startsWith("3 of 3 members healthy (quorum 2); leader "), quorum.get(1));
            assertEquals("true", check(checks, "this master's API server is ready").get(0), checks.toString());
            assertEquals(m.equals(holder) ? "holds the VIP" : "does not hold the VIP (backup)", check(checks, "the VIP is held").get(1), m);
        }
        long leaders = masters.stream().filter(m -> {
            try {
                return check(controlPlane(r, m), "this master's etcd member").get(1).contains(", leader, ");
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }).count();
        assertEquals(1, leaders, r::toString);
    }

    /** How long a command may try to reach the stopped master before it is reported down. */
    static final String DOWN_CONNECT_TIMEOUT = "5s";

    @Test @Order(11) void aMasterIsNotRemovedWhileAnotherIsDown() throws Exception {
        String down = masters.get(1);
        String leaving = masters.get(2);
        BedResult stop = bed.bed("stop", down);
        assertEquals(0, stop.exit(), stop.toString());
        try {
            // the stopped host answers nothing: a short connect timeout (each host of the bed connects in well under a second)
            Gpuctl.Run r = Gpuctl.run("remove-node", "--connect-timeout", DOWN_CONNECT_TIMEOUT, "-i", inventory.toString(), leaving);
            assertEquals(1, r.code(), r::toString);
            assertTrue(r.err().contains("remove-node " + leaving + " refused: another master is down: " + down), r::toString);
            assertTrue(r.err().contains("2 of 3 members healthy (quorum 2)"), r::toString);
            assertEquals(new java.util.TreeSet<>(masters), members(masters.get(0)).keySet(), "no member removed");
            assertEquals("active\n", bed.ssh(leaving, "systemctl is-active kubelet").out(), "the leaving master untouched");
            // verify names the master that is down; the others' quorum check passes
            // no wait: with a master down its node stays NotReady, which verify would otherwise wait for (2 min) to fail anyway
            Gpuctl.Run v = Gpuctl.run("verify", "--json", "--wait-timeout", "0", "--connect-timeout", DOWN_CONNECT_TIMEOUT, inventory.toString());
            assertEquals(6, v.code(), v::toString);
            for (String m : List.of(masters.get(0), leaving)) {
                List<String> quorum = check(controlPlane(v, m), "etcd quorum");
                assertEquals("true", quorum.get(0), v::toString);
                assertTrue(quorum.get(1).startsWith("2 of 3 members healthy (quorum 2)") && quorum.get(1).contains("; down: " + down + " ("),
                    quorum.get(1));
            }
        } finally {
            BedResult back = bed.bed("up", "3");
            assertEquals(0, back.exit(), back.toString());
        }
        allMembersHealthy();
    }

    /**
     * Last of this range on purpose: the master leaves and comes back (bootstrap joins it again as a new member), so
     * the tests after it find three masters again.
     */
    @Test @Order(12) void aMasterIsRemovedItsMemberFirstAndBootstrapBringsItBack() throws Exception {
        String leaving = masters.get(2);
        List<String> stay = masters.subList(0, 2);
        Gpuctl.Run r = Gpuctl.run("remove-node", "-i", inventory.toString(), leaving);
        assertEquals(0, r.code(), r::toString);
        java.util.Map<String, String> left = members(masters.get(0));
        assertEquals(new java.util.TreeSet<>(stay), left.keySet(), left.toString());
        assertFalse(nodesThroughTheVip(masters.get(0)).contains("node/" + leaving + "\n"));
        assertEquals("", bed.ok(leaving, "find /etc/kubernetes/manifests /var/lib/etcd -mindepth 1 2>/dev/null; true"),
            "reset: no static pods, no etcd data");
        clocksSynchronised(List.of(stay.get(0), stay.get(1), worker));
        Gpuctl.Run v = Gpuctl.run("verify", "--json", "--hosts", String.join(",", stay) + "," + worker, inventory.toString());
        for (String m : stay) {
            List<String> quorum = check(controlPlane(v, m), "etcd quorum");
            assertEquals("true", quorum.get(0), v::toString);
            assertTrue(quorum.get(1).startsWith("2 of 2 members healthy (quorum 2)"), quorum.get(1));
        }
        assertEquals(0, v.code(), v::toString);
        Gpuctl.Run again = Gpuctl.run("remove-node", "-i", inventory.toString(), leaving);
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);

        Gpuctl.Run back = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, back.code(), back::toString);
        java.util.Map<String, String> now = members(masters.get(0));
        assertEquals(new java.util.TreeSet<>(masters), now.keySet(), now.toString());
        assertTrue(nodesThroughTheVip(masters.get(0)).contains("node/" + leaving + "\n"));
        allMembersHealthy();
    }

    // ------------------------------------------------------------------ day 2 (@Order 20..29)

    /** This master's own API server's version (not the VIP's: that is any master's), asked on the master's host. */
    static String apiServerVersion(String m) {
        return bed.ok(m, "kubectl --kubeconfig=/etc/kubernetes/admin.conf --server=https://" + bed.address(m) + ":6443 version -o json"
            + " | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"serverVersion\"][\"gitVersion\"])'").strip();
    }

    @Test @Order(20) void upgradeAppliesOnTheFirstMasterThenUpgradesEachOtherMasterInTurn() throws IOException {
        for (String m : masters) assertTrue(apiServerVersion(m).startsWith("v1.34."), m);
        Files.writeString(inventory, Files.readString(inventory).replace("kubernetesVersion: \"1.34\"", "kubernetesVersion: \"1.35\""));
        Gpuctl.Run r = Gpuctl.run("upgrade", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        // apply on the first master, then each other master's readiness check and upgrade node, in inventory order
        int at = r.err().indexOf("control plane to 1.35 (on " + masters.get(0) + ")");
        assertTrue(at >= 0, r::toString);
        for (String m : masters.subList(1, 3)) {
            int ready = r.err().indexOf("the other masters' API servers ready before " + m + " goes down", at);
            int node = r.err().indexOf("control plane instance on " + m + " to 1.35 (kubeadm upgrade node)", at);
            assertTrue(ready > at && node > ready, m + " out of order:\n" + r);
            at = node;
        }
        assertTrue(r.err().indexOf("batch 1/1 (" + worker + ")", at) > at, "the worker after every master:\n" + r);
        for (String m : masters) {
            assertTrue(apiServerVersion(m).startsWith("v1.35."), m);
            assertTrue(bed.ok(m, "kubelet --version").startsWith("Kubernetes v1.35."), m);
            assertTrue(bed.ok(m, "grep -h 'image:' /etc/kubernetes/manifests/kube-apiserver.yaml /etc/kubernetes/manifests/kube-scheduler.yaml")
                .lines().allMatch(l -> l.contains(":v1.35.")), m);
        }
        assertTrue(bed.ok(worker, "kubelet --version").startsWith("Kubernetes v1.35."));
        for (String h : bed.hosts()) {
            assertFalse(bed.ok(masters.get(0), "kubectl --kubeconfig=/etc/kubernetes/admin.conf get node " + h
                + " -o jsonpath='{.spec.unschedulable}'").contains("true"), h + " left cordoned");
        }
        Gpuctl.Run again = Gpuctl.run("upgrade", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
        assertTrue(again.out().contains("nothing to upgrade"), again::toString);
    }

    /** The API server certificate's serial and end date on a master's host. */
    static String apiServerCert(String m) {
        return bed.ok(m, "openssl x509 -noout -serial -enddate -in /etc/kubernetes/pki/apiserver.crt");
    }

    @Test @Order(21) void certsRenewRenewsOnEveryMasterOneAtATime() {
        java.util.Map<String, String> before = new java.util.LinkedHashMap<>();
        for (String m : masters) before.put(m, apiServerCert(m));
        Gpuctl.Run r = Gpuctl.run("certs", "renew", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        int at = -1;
        for (String m : masters) {
            int renewed = r.err().indexOf("control-plane certificates renewed on " + m);
            assertTrue(renewed > at, m + " out of order:\n" + r);
            at = renewed;
            String now = apiServerCert(m);
            assertFalse(now.equals(before.get(m)), m + " kept its certificate: " + now);
            assertTrue(now.contains("notAfter="), now);
        }
    }

    /** The backup of @Order(22), restored by @Order(23). */
    static Path archive;
    static final String KUBECTL = "kubectl --kubeconfig=/etc/kubernetes/admin.conf ";

    @Test @Order(22) void backupTakesTheSnapshotFromTheFirstHealthyMemberAndRecordsTheMembers() throws Exception {
        archive = Files.createTempDirectory("gpuctl-ha-backup").resolve("ha.tar.gz");
        configMap("before-backup");
        // a training job on the worker, running across the restore (it is in the backup)
        bed.ok(masters.get(0), "cat > /root/train.yaml <<'EOF'\n"
            + "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: default}\n"
            + "spec:\n  backoffLimit: 0\n  template:\n    spec:\n      nodeName: " + worker + "\n      restartPolicy: Never\n"
            + "      containers:\n      - name: train\n        image: registry.internal/trainer:cu118\n        command: [sleep, \"1800\"]\n"
            + "        resources: {limits: {nvidia.com/gpu: 1}}\nEOF\n" + KUBECTL + "apply -f /root/train.yaml >/dev/null");
        jobPod = runningJobPod(masters.get(0));
        Gpuctl.Run r = Gpuctl.run("backup", "--out", archive.toString(), inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("etcd member: " + masters.get(0) + " "), r::toString);
        Process p = new ProcessBuilder("tar", "-xzOf", archive.toString(), "etc/kubernetes/gpuctl/backup-etcd-members.txt")
            .redirectErrorStream(true).start();
        String members = new String(p.getInputStream().readAllBytes());
        for (String m : masters) assertTrue(members.contains(", " + m + ", https://" + bed.address(m) + ":2380"), members);
    }

    static void configMap(String name) {
        bed.ok(masters.get(0), "printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: " + name + ", namespace: default}\\ndata: {k: v}\\n'"
            + " >/root/" + name + ".yaml && " + KUBECTL + "apply -f /root/" + name + ".yaml >/dev/null");
    }

    /** The training job's pod, Running on the worker (uid name), as the master's own API server shows it. */
    static String jobPod;

    static String runningJobPod(String master) throws Exception {
        String seen = "";
        for (long deadline = System.nanoTime() + 90_000_000_000L; ; Thread.sleep(1000)) {
            BedResult r = throughOwnApiServer(master, "get pods -n default -l job-name=train -o json");
            if (r.exit() == 0) {
                var items = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out()).path("items");
                seen = items.toString();
                if (items.size() == 1 && items.get(0).path("status").path("phase").asText().equals("Running")) {
                    assertEquals(worker, items.get(0).path("spec").path("nodeName").asText(), seen);
                    return items.get(0).path("metadata").path("name").asText() + " " + items.get(0).path("metadata").path("uid").asText();
                }
            } else {
                seen = r.toString();
            }
            if (System.nanoTime() >= deadline) return fail(master + ": the job's pod is not Running on " + worker + ": " + seen);
        }
    }

    /** This master's own API server (its address, not the VIP) asked on its host. */
    static BedResult throughOwnApiServer(String m, String args) {
        return bed.ssh(m, KUBECTL + "--server=https://" + bed.address(m) + ":6443 " + args);
    }

    @Test @Order(23) void restoreOfTheWholeControlPlaneRestoresEveryMemberFromTheBackup() throws Exception {
        configMap("after-backup");
        Gpuctl.Run refused = Gpuctl.run("restore", archive.toString(), inventory.toString());
        assertEquals(3, refused.code(), "a healthy control plane is not replaced without --force:\n" + refused);
        Gpuctl.Run r = Gpuctl.run("restore", "--force", archive.toString(), inventory.toString());
        assertEquals(0, r.code(), r::toString);
        String cluster = String.join(",", masters.stream().map(m -> m + "=https://" + bed.address(m) + ":2380").toList());
        assertTrue(r.out().contains("etcd members " + cluster + ", all healthy"), r::toString);
        // every master stopped before any member was restored
        List<String> lines = r.err().lines().toList();
        int firstRestore = java.util.stream.IntStream.range(0, lines.size()).filter(i -> lines.get(i).matches("\\S+\\s+restore-etcd\\s+changed .*"))
            .findFirst().orElseGet(() -> fail("no member restored:\n" + r));
        for (String m : masters) {
            int stopped = java.util.stream.IntStream.range(0, lines.size()).filter(i -> lines.get(i).matches(m + "\\s+restore-stop\\s+changed .*"))
                .findFirst().orElseGet(() -> fail(m + " not stopped:\n" + r));
            assertTrue(stopped < firstRestore, m + " stopped before any member was restored:\n" + r);
        }
        java.util.Map<String, String> ids = members(masters.get(0));
        assertEquals(new java.util.TreeSet<>(masters), ids.keySet(), ids.toString());
        for (String m : masters) {
            assertEquals(ids, members(m), m + " sees the same members");
            assertEquals(0, etcdctl(m, "endpoint health --cluster").exit(), m + ": every member healthy");
            assertEquals("ok", throughOwnApiServer(m, "get --raw=/readyz").out().strip(), m);
            assertEquals(0, throughOwnApiServer(m, "get configmap before-backup -n default -o name").exit(), m + ": made before the backup");
            BedResult after = throughOwnApiServer(m, "get configmap after-backup -n default -o name");
            assertEquals(1, after.exit(), m + ": made after the backup: " + after);
            assertTrue(after.err().contains("NotFound") || after.err().contains("not found"), after.toString());
            assertTrue(bed.ok(m, "ls /var/backups/").contains("gpuctl-before-restore-"), m + ": the data it had is kept aside");
            assertEquals(jobPod, runningJobPod(m), m + ": the training job's pod (in the backup) runs on, the same pod");
        }
        Gpuctl.Run again = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
    }
}
