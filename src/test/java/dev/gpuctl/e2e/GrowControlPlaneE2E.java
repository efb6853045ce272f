package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.steps.LostMasterStep;
import dev.gpuctl.testbed.BedResult;
import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A single-master cluster grows into three masters behind a VIP by an inventory edit and a bootstrap: the VIP first,
 * the API server's certificate re-issued with the VIP, kubeadm-config, admin.conf, every kubelet.conf, cluster-info and
 * kube-proxy's kubeconfig pointed at the VIP (its pods made again, new UIDs), then the two new masters join; a pod
 * running on the worker is left alone (same UID, no restart); a re-run changes nothing (kube-proxy's pods the same); an inventory that drops the new masters is refused before any change.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GrowControlPlaneE2E {
    static final String KUBECTL = "kubectl --kubeconfig=/etc/kubernetes/admin.conf ";
    static TestBed bed;
    static Path single;
    static Path three;
    static String vip;
    static String master;
    static List<String> newMasters;
    static String worker;
    static String podBefore;
    /** Each node's kube-proxy pod (node -> "UID phase") before the grow, and after it. */
    static Map<String, String> proxiesBefore;
    static Map<String, String> proxiesGrown;

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() throws IOException {
        bed = TestBed.own("grow", 3);
        List<String> hosts = bed.hosts();
        master = hosts.get(0);
        newMasters = hosts.subList(1, 3);
        worker = hosts.get(3);
        Path generated = bed.inventory("docker", "flannel");
        String address = bed.address(master);
        vip = address.substring(0, address.lastIndexOf('.')) + ".203";
        String text = Files.readString(generated);
        String grown = text.replace("cluster:\n", "cluster:\n  controlPlaneEndpoint: { vip: " + vip + " }\n");
        String small = text;
        for (String m : newMasters) {
            String line = "{ name: " + m + ", address: " + bed.address(m) + ", role: worker }";
            assertTrue(text.contains(line), text);
            grown = grown.replace(line, "{ name: " + m + ", address: " + bed.address(m) + ", role: master, gpu: false }");
            small = small.lines().filter(l -> !l.contains(line)).reduce("", (a, l) -> a + l + "\n");
        }
        single = generated.resolveSibling("inventory.yaml");
        three = generated.resolveSibling("inventory-3.yaml");
        Files.writeString(single, small);
        Files.writeString(three, grown);
    }

    /** UID and restart count of the pod on the worker. */
    static String pod() {
        return bed.ok(master, KUBECTL + "get pod grow-probe -o json | python3 -c 'import json,sys; p=json.load(sys.stdin); "
            + "print(p[\"metadata\"][\"uid\"], p[\"status\"][\"containerStatuses\"][0][\"restartCount\"], p[\"status\"][\"phase\"], "
            + "p[\"spec\"][\"nodeName\"])'").strip();
    }

    /** node -> "UID phase" of each kube-proxy pod (the DaemonSet's, label k8s-app=kube-proxy), asked on the first master. */
    static Map<String, String> kubeProxies() {
        String out = bed.ok(master, KUBECTL + "-n kube-system get pods -l k8s-app=kube-proxy -o json | python3 -c 'import json,sys\n"
            + "for p in json.load(sys.stdin)[\"items\"]:\n"
            + "    print(p[\"spec\"][\"nodeName\"], p[\"metadata\"][\"uid\"], p[\"status\"].get(\"phase\"))'");
        Map<String, String> m = new TreeMap<>();
        for (String l : out.strip().split("\n")) {
            String[] f = l.strip().split(" ", 2);
            assertEquals(null, m.put(f[0], f[1]), "one kube-proxy pod per node: " + out);
        }
        return m;
    }

    @Test @Order(1) void aSingleMasterClusterWithAPodOnTheWorker() {
        Gpuctl.Run r = Gpuctl.run("bootstrap", single.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals("https://" + bed.address(master) + ":6443", bed.ok(worker, "sed -n 's/^ *server: *//p' /etc/kubernetes/kubelet.conf").strip());
        bed.ok(master, "cat <<'EOF' | " + KUBECTL + "apply -f -\napiVersion: v1\nkind: Pod\nmetadata: {name: grow-probe, namespace: default}\n"
            + "spec:\n  nodeName: " + worker + "\n  containers:\n  - name: sleep\n    image: registry.k8s.io/pause:3.10.1\nEOF");
        bed.ok(master, "for i in $(seq 60); do " + KUBECTL + "get pod grow-probe -o jsonpath='{.status.phase}' | grep -q Running && exit 0; sleep 1; done; exit 1");
        podBefore = pod();
        assertTrue(podBefore.endsWith(" 0 Running " + worker), podBefore);
        proxiesBefore = kubeProxies();
        assertEquals(List.of(master, worker), List.copyOf(new java.util.TreeSet<>(proxiesBefore.keySet())), proxiesBefore::toString);
    }

    @Test @Order(2) void bootstrapGrowsItToThreeMastersBehindTheVip() {
        Gpuctl.Run r = Gpuctl.run("bootstrap", three.toString());
        assertEquals(0, r.code(), r::toString);
        String url = "https://" + vip + ":8443";
        // the API server's certificate (on disk and as served) names the VIP
        assertTrue(bed.ok(master, "openssl x509 -noout -ext subjectAltName -in /etc/kubernetes/pki/apiserver.crt").contains("IP Address:" + vip));
        assertTrue(bed.ok(master, "echo | openssl s_client -connect " + bed.address(master) + ":6443 2>/dev/null | openssl x509 -noout -ext subjectAltName")
            .contains("IP Address:" + vip));
        assertTrue(bed.ok(master, KUBECTL + "-n kube-system get cm kubeadm-config -o jsonpath='{.data.ClusterConfiguration}'")
            .contains("controlPlaneEndpoint: " + vip + ":8443"));
        assertTrue(bed.ok(master, KUBECTL + "-n kube-public get cm cluster-info -o jsonpath='{.data.kubeconfig}'").contains("server: " + url));
        assertTrue(bed.ok(master, KUBECTL + "-n kube-system get cm kube-proxy -o jsonpath='{.data.kubeconfig\\.conf}'").contains("server: " + url));
        assertEquals(url, bed.ok(master, "sed -n 's/^ *server: *//p' /etc/kubernetes/admin.conf").strip());
        for (String h : List.of(master, worker)) {
            assertEquals(url, bed.ok(h, "sed -n 's/^ *server: *//p' /etc/kubernetes/kubelet.conf").strip(), h);
        }
        // three control-plane nodes, Ready, asked through the VIP from the worker with its kubelet's credentials
        String nodes = bed.ok(worker, "kubectl --kubeconfig=/etc/kubernetes/kubelet.conf get nodes -o json | python3 -c 'import json,sys\n"
            + "for n in json.load(sys.stdin)[\"items\"]:\n"
            + "    if \"node-role.kubernetes.io/control-plane\" in n[\"metadata\"].get(\"labels\", {}):\n"
            + "        print(n[\"metadata\"][\"name\"], [c[\"status\"] for c in n[\"status\"][\"conditions\"] if c[\"type\"] == \"Ready\"])'");
        for (String m : List.of(master, newMasters.get(0), newMasters.get(1))) assertTrue(nodes.contains(m + " ['True']"), nodes);
        assertEquals(3, nodes.strip().lines().count(), nodes);
        for (String m : newMasters) {
            assertTrue(bed.ok(m, "test -f /etc/kubernetes/manifests/kube-apiserver.yaml && echo yes").contains("yes"), m);
        }
        // the pod on the worker is the same pod and was not restarted
        assertEquals(podBefore, pod());
        // kube-proxy's pods were made again to load their ConfigMap's new server (bootstrap waited for them Running):
        // the first master's and the worker's have new UIDs, each node has one, Running
        proxiesGrown = kubeProxies();
        assertEquals(new java.util.TreeSet<>(List.of(master, newMasters.get(0), newMasters.get(1), worker)), proxiesGrown.keySet(), proxiesGrown::toString);
        for (String h : List.of(master, worker)) {
            String uidBefore = proxiesBefore.get(h).split(" ")[0];
            assertNotEquals(uidBefore, proxiesGrown.get(h).split(" ")[0], h + ": " + proxiesBefore + " -> " + proxiesGrown);
        }
        for (var e : proxiesGrown.entrySet()) assertTrue(e.getValue().endsWith(" Running"), e::toString);
    }

    @Test @Order(3) void aReRunChangesNothing() {
        Gpuctl.Run r = Gpuctl.run("bootstrap", three.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(0, r.count("changed"), r::toString);
        assertEquals(podBefore, pod());
        assertEquals(proxiesGrown, kubeProxies(), "a re-run restarts no kube-proxy pod");
    }

    @Test @Order(4) void droppingMastersFromTheInventoryIsRefusedBeforeAnyChange() throws IOException {
        String shrunk = Files.readString(three);
        for (String m : newMasters) {
            shrunk = shrunk.replace("{ name: " + m + ", address: " + bed.address(m) + ", role: master, gpu: false }",
                "{ name: " + m + ", address: " + bed.address(m) + ", role: worker }");
        }
        Path file = three.resolveSibling("inventory-shrunk.yaml");
        Files.writeString(file, shrunk);
        Gpuctl.Run r = Gpuctl.run("bootstrap", file.toString());
        assertNotEquals(0, r.code(), r::toString);
        assertTrue(r.toString().contains("that the inventory does not list as masters") && r.toString().contains("gpuctl remove-node "
            + newMasters.get(0)), r::toString);
        assertEquals(0, r.count("changed"), r::toString);
    }

    /**
     * The commands that need one master, on three: kubeconfig's server is the endpoint and kubectl works through it
     * (from the worker, which reaches the VIP); join-token --refresh prints a worker's join to the endpoint (no
     * --control-plane, no certificate key) whose token another master's {@code kubeadm token list} shows.
     */
    @Test @Order(5) void kubeconfigAndJoinTokenGoThroughTheEndpoint() {
        String url = "https://" + vip + ":8443";
        Gpuctl.Run kc = Gpuctl.run("kubeconfig", "-i", three.toString());
        assertEquals(0, kc.code(), kc::toString);
        assertEquals(List.of(url), kc.out().lines().map(String::strip).filter(l -> l.startsWith("server: "))
            .map(l -> l.substring("server: ".length())).toList(), kc::toString);
        bed.ok(worker, "umask 077; cat > /root/gpuctl-kubeconfig <<'EOF'\n" + kc.out() + "EOF");
        String nodes = bed.ok(worker, "kubectl --kubeconfig=/root/gpuctl-kubeconfig get nodes -o name; rm -f /root/gpuctl-kubeconfig");
        for (String m : List.of(master, newMasters.get(0), newMasters.get(1), worker)) assertTrue(nodes.contains("node/" + m), nodes);

        Gpuctl.Run jt = Gpuctl.run("join-token", "--refresh", "-i", three.toString());
        assertEquals(0, jt.code(), jt::toString);
        String join = jt.out().strip();
        assertTrue(join.startsWith("kubeadm join " + vip + ":8443 --token "), join);
        assertTrue(!join.contains("--control-plane") && !join.contains("--certificate-key"), join);
        String token = join.replaceAll(".*--token (\\S+).*", "$1");
        assertTrue(bed.ok(newMasters.get(0), "kubeadm token list").contains(token), "the new token on another master");
    }

    /** etcdctl on a master inside its etcd static pod, as HaControlPlaneE2E runs it, on this class's bed. */
    static BedResult etcdctl(String host, String args) {
        return bed.ssh(host, HaControlPlaneE2E.etcdctlCommand(args));
    }

    /** name -> hex ID, from {@code etcdctl member list} on the first master ("ID, started, NAME, PEER, CLIENT, IS LEARNER"). */
    static Map<String, String> members() {
        BedResult r = etcdctl(master, "member list");
        assertEquals(0, r.exit(), r.toString());
        Map<String, String> out = new TreeMap<>();
        for (String l : r.out().strip().split("\n")) {
            String[] f = l.split(", ");
            out.put(f[2], f[0]);
        }
        return out;
    }

    /**
     * The last case (three masters until here): a master's disk lost while it is an etcd member (its kubelet and
     * control plane stopped, /etc/kubernetes, /var/lib/etcd and /var/lib/kubelet gone, as a replaced disk leaves the
     * host). bootstrap removes the member it left (from the first master) and joins it again as a new member.
     */
    @Test @Order(10) void aMasterWhoseDiskWasLostJoinsAgainAsANewMember() throws InterruptedException, IOException {
        String lost = newMasters.get(1);
        Map<String, String> before = members();
        assertEquals(3, before.size(), before::toString);
        bed.ok(lost, "systemctl stop kubelet gpuctl-emu-apiserver.service; rm -rf /etc/kubernetes /var/lib/etcd /var/lib/kubelet");
        // its member is still listed and does not answer: every control-plane join would be refused by kubeadm's check-etcd
        assertEquals(before, members());
        assertNotEquals(0, etcdctl(master, "endpoint health --cluster").exit());
        // a command that needs one master, with the blank master listed first: it is passed over, named, and the next used
        List<String> lines = new java.util.ArrayList<>(Files.readString(three).lines().toList());
        int at = lines.indexOf(lines.stream().filter(l -> l.contains("name: " + master + ",")).findFirst().orElseThrow());
        String lostLine = lines.stream().filter(l -> l.contains("name: " + lost + ",")).findFirst().orElseThrow();
        lines.remove(lostLine);
        lines.add(at, lostLine);
        Path lostFirst = Files.writeString(three.resolveSibling("inventory-lost-first.yaml"), String.join("\n", lines) + "\n");
        Gpuctl.Run kc = Gpuctl.run("kubeconfig", "-i", lostFirst.toString());
        assertEquals(0, kc.code(), kc::toString);
        assertTrue(kc.err().contains(lost + ": no /etc/kubernetes/admin.conf") && kc.err().contains("using " + master), kc::toString);
        assertTrue(kc.out().contains("server: https://" + vip + ":8443"), kc::toString);

        Gpuctl.Run r = Gpuctl.run("bootstrap", three.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.err().lines().anyMatch(l -> l.matches(master + "\\s+" + LostMasterStep.ID + "\\s+changed .*")), r::toString);
        Map<String, String> after = members();
        assertEquals(before.keySet(), after.keySet(), after::toString);
        assertNotEquals(before.get(lost), after.get(lost), "a new member for " + lost);
        assertEquals(before.get(master), after.get(master));
        BedResult health = null;
        for (int i = 0; i < 30; i++) {
            health = etcdctl(newMasters.get(0), "endpoint health --cluster");
            if (health.exit() == 0) break;
            Thread.sleep(1000);
        }
        assertEquals(0, health.exit(), "3 of 3 members healthy again: " + health);
        String ready = "";
        for (int i = 0; i < 30; i++) {
            ready = bed.ok(master, KUBECTL + "get node " + lost + " -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}'").strip();
            if (ready.equals("True")) break;
            Thread.sleep(1000);
        }
        assertEquals("True", ready, lost + " Ready");
        assertTrue(bed.ok(lost, "test -f /etc/kubernetes/manifests/kube-apiserver.yaml && echo yes").contains("yes"));
        assertEquals(podBefore, pod());

        Gpuctl.Run again = Gpuctl.run("bootstrap", three.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
        assertEquals(after, members());
    }
}
