package dev.gpuctl.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The cluster bootstrap done by hand on the bed's hosts, with the real command lines from the
 * Kubernetes, Docker and NVIDIA docs, against the emulator packages: each step works, and each
 * classic mistake fails the way the real tools fail. Runs as one ordered scenario on a shared bed
 * (master + 2 GPU workers); set GPUCTL_BED to use a bed of your own.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EmulatorFlowE2E {
    static final String CRI = "unix:///var/run/cri-dockerd.sock";
    static TestBed bed;
    static String master;
    static List<String> workers;
    static String masterIp;
    static String joinCommand;

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll
    static void bed() {
        bed = TestBed.own("emu", 2); // its by-hand cluster must not meet the other tests
        List<String> hosts = bed.hosts();
        assertTrue(hosts.size() >= 3, "needs a master and two workers, got " + hosts);
        master = hosts.get(0);
        workers = hosts.subList(1, 3);
        masterIp = bed.address(master);
    }

    // ------------------------------------------------------------------ helpers
    static String sh(String host, String cmd) {
        var r = bed.ssh(host, cmd);
        if (r.exit() != 0) {
            fail(host + ": `" + cmd + "` exited " + r.exit() + "\nstdout:\n" + r.out() + "\nstderr:\n" + r.err());
        }
        return r.out();
    }

    static void put(String host, String path, String content) {
        String b64 = Base64.getEncoder().encodeToString(content.getBytes(StandardCharsets.UTF_8));
        sh(host, "mkdir -p \"$(dirname " + path + ")\" && echo " + b64 + " | base64 -d > " + path);
    }

    static String manifest(String name) throws IOException {
        for (Path p : List.of(Path.of("testbed/manifests", name), Path.of("../shared/fixtures/manifests", name),
                Path.of("/work/shared/fixtures/manifests", name))) {
            if (Files.exists(p)) {
                return Files.readString(p);
            }
        }
        throw new IOException("manifest " + name + " not found");
    }

    static String kubectl(String args) {
        return sh(master, "KUBECONFIG=/etc/kubernetes/admin.conf kubectl " + args);
    }

    static void eventually(String what, int seconds, java.util.function.BooleanSupplier ok) throws InterruptedException {
        long end = System.currentTimeMillis() + seconds * 1000L;
        while (System.currentTimeMillis() < end) {
            if (ok.getAsBoolean()) {
                return;
            }
            Thread.sleep(1000);
        }
        fail("not within " + seconds + "s: " + what);
    }

    static String joinConfig(String endpoint, String token, String hash) {
        return "apiVersion: kubeadm.k8s.io/v1beta4\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n"
                + "    apiServerEndpoint: " + endpoint + "\n    token: " + token + "\n    caCertHashes:\n    - " + hash + "\n"
                + "nodeRegistration:\n  criSocket: " + CRI + "\ntimeouts:\n  discovery: 6s\n";
    }

    // ------------------------------------------------------------------ the flow
    @Test
    @Order(1)
    void installPackagesFromTheBedRepository() {
        for (String h : bed.hosts().subList(0, 3)) {
            sh(h, "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubelet kubeadm kubectl docker-ce cri-dockerd >/dev/null");
            sh(h, "apt-mark hold kubelet kubeadm kubectl >/dev/null");
            assertEquals("v1.35", sh(h, "kubeadm version -o short").trim().replaceAll("\\.\\d+$", ""));
            assertTrue(sh(h, "systemctl is-active docker cri-docker").contains("active"));
        }
        for (String w : workers) {
            sh(w, "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nvidia-container-toolkit >/dev/null");
            // the GPU workers' driver (the bed preinstalls it; install it where it is missing)
            sh(w, "command -v nvidia-smi >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nvidia-driver-emu >/dev/null");
            String ids = sh(w, "nvidia-smi --query-gpu=index,uuid --format=csv,noheader");
            assertTrue(ids.startsWith("0, GPU-"), ids);
        }
        assertNotEquals(sh(workers.get(0), "nvidia-smi -L"), sh(workers.get(1), "nvidia-smi -L"), "GPU UUIDs differ per host");
    }

    @Test
    @Order(2)
    void dockerRefusesAnInvalidDaemonJson() {
        String h = workers.get(0);
        put(h, "/etc/docker/daemon.json", "{\n  \"exec-opts\": [\"native.cgroupdriver=systemd\"],\n}\n");
        var r = bed.ssh(h, "systemctl restart docker");
        assertNotEquals(0, r.exit(), "docker must not start");
        String log = sh(h, "journalctl -u docker --no-pager -n 30");
        assertTrue(log.contains("unable to configure the Docker daemon with file /etc/docker/daemon.json: "
                + "invalid character '}' looking for beginning of object key string"), log);
    }

    @Test
    @Order(3)
    void dockerRefusesAnUndefinedDefaultRuntime() {
        String h = workers.get(0);
        put(h, "/etc/docker/daemon.json", "{\"default-runtime\": \"nvidia\"}\n");
        sh(h, "systemctl reset-failed docker docker.socket 2>/dev/null || true");
        var r = bed.ssh(h, "systemctl restart docker");
        assertNotEquals(0, r.exit(), "docker must not start");
        String log = sh(h, "journalctl -u docker --no-pager -n 30");
        assertTrue(log.contains("specified default runtime 'nvidia' does not exist"), log);
    }

    @Test
    @Order(4)
    void dockerWithSystemdCgroupsAndTheNvidiaDefaultRuntime() {
        String base = "{\"exec-opts\": [\"native.cgroupdriver=systemd\"], \"log-driver\": \"json-file\", "
                + "\"log-opts\": {\"max-size\": \"100m\"}, \"storage-driver\": \"overlay2\"}\n";
        put(master, "/etc/docker/daemon.json", base);
        sh(master, "systemctl restart docker && systemctl restart cri-docker");
        for (String w : workers) {
            put(w, "/etc/docker/daemon.json", base);
            sh(w, "nvidia-ctk runtime configure --runtime=docker --set-as-default");
            sh(w, "systemctl reset-failed docker 2>/dev/null || true; systemctl restart docker && systemctl restart cri-docker");
            assertEquals("nvidia", sh(w, "docker info --format '{{.DefaultRuntime}}'").trim());
            assertTrue(sh(w, "docker info --format '{{json .Runtimes}}'").contains("\"nvidia\":{\"path\":\"nvidia-container-runtime\""));
        }
        assertEquals("systemd", sh(master, "docker info --format '{{.CgroupDriver}}'").trim());
        assertEquals("runc", sh(master, "docker info --format '{{.DefaultRuntime}}'").trim());
    }

    @Test
    @Order(5)
    void initFailsOnTwoCriSocketsAndOnIpForwardOff() {
        // docker-ce pulls in containerd.io: its socket and cri-dockerd's both exist
        var r = bed.ssh(master, "kubeadm init --apiserver-advertise-address=" + masterIp + " --pod-network-cidr=10.244.0.0/16");
        assertEquals(1, r.exit(), r.err());
        assertTrue(r.err().contains("ound multiple CRI endpoints on the host. Please define which one do you wish to use by setting "
                + "the 'criSocket' field in the kubeadm configuration file: unix:///var/run/containerd/containerd.sock, "
                + "unix:///var/run/cri-dockerd.sock"), r.err());
        sh(master, "swapoff -a && sysctl -qw net.ipv4.ip_forward=0");
        r = bed.ssh(master, "kubeadm init --apiserver-advertise-address=" + masterIp + " --pod-network-cidr=10.244.0.0/16 --cri-socket " + CRI);
        assertEquals(2, r.exit(), r.err());
        assertTrue(r.err().contains("[ERROR FileContent--proc-sys-net-ipv4-ip_forward]: /proc/sys/net/ipv4/ip_forward contents are not set to 1"), r.err());
        assertTrue(r.err().contains("error execution phase preflight: preflight checks failed"), r.err());
    }

    @Test
    @Order(6)
    void initWithSwapOnWarnsAndTheKubeletRefusesToRun() {
        sh(master, "sysctl -qw net.ipv4.ip_forward=1 && swapon -a && test $(wc -l < /proc/swaps) -gt 1");
        put(master, "/root/kubeadm-swap.yaml", "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n"
                + "localAPIEndpoint:\n  advertiseAddress: " + masterIp + "\nnodeRegistration:\n  criSocket: " + CRI + "\n"
                + "timeouts:\n  kubeletHealthCheck: 15s\n---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"
                + "networking:\n  podSubnet: 10.244.0.0/16\n");
        var r = bed.ssh(master, "kubeadm init --config /root/kubeadm-swap.yaml");
        assertEquals(1, r.exit(), r.out() + r.err());
        assertTrue(r.err().contains("[WARNING Swap]"), r.err());
        assertTrue(r.out().contains("[kubelet-check] The kubelet is not healthy after 15s"), r.out());
        String log = sh(master, "journalctl -u kubelet --no-pager -n 50");
        assertTrue(log.contains("running with swap on is not supported, please disable swap"), log);
        sh(master, "kubeadm reset -f --cri-socket " + CRI + " >/dev/null && swapoff -a");
    }

    @Test
    @Order(7)
    void initWithAKubeadmConfigFile() {
        for (String h : bed.hosts().subList(0, 3)) {
            sh(h, "swapoff -a && sysctl -qw net.ipv4.ip_forward=1");
        }
        put(master, "/root/kubeadm.yaml", "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n"
                + "localAPIEndpoint:\n  advertiseAddress: " + masterIp + "\n  bindPort: 6443\n"
                + "nodeRegistration:\n  criSocket: " + CRI + "\n---\n"
                + "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.35.1\n"
                + "networking:\n  podSubnet: 10.244.0.0/16\n  serviceSubnet: 10.96.0.0/12\n---\n"
                + "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n");
        String out = sh(master, "kubeadm init --config /root/kubeadm.yaml");
        assertTrue(out.contains("Your Kubernetes control-plane has initialized successfully!"), out);
        Matcher m = Pattern.compile("kubeadm join (\\S+) --token (\\S+) \\\\\\s+--discovery-token-ca-cert-hash (sha256:[0-9a-f]{64})").matcher(out);
        assertTrue(m.find(), out);
        assertEquals(masterIp + ":6443", m.group(1));
        assertTrue(sh(master, "cat /etc/kubernetes/admin.conf").contains("server: https://" + masterIp + ":6443"));
        String hash = sh(master, "openssl x509 -pubkey -in /etc/kubernetes/pki/ca.crt | openssl rsa -pubin -outform der 2>/dev/null"
                + " | openssl dgst -sha256 -hex | sed 's/^.* //'").trim();
        assertEquals("sha256:" + hash, m.group(3), "the join hash is the CA's SPKI hash");
        sh(master, "test -s /etc/kubernetes/kubelet.conf && test -s /var/lib/kubelet/config.yaml && test -s /etc/kubernetes/manifests/kube-apiserver.yaml");
        // a real TLS client (openssl) verifies the API server against the cluster CA
        String tls = sh(master, "openssl s_client -connect " + masterIp + ":6443 -CAfile /etc/kubernetes/pki/ca.crt </dev/null 2>/dev/null");
        assertTrue(tls.contains("Verify return code: 0 (ok)"), tls);
    }

    @Test
    @Order(8)
    void secondInitFailsPreflight() {
        var r = bed.ssh(master, "kubeadm init --config /root/kubeadm.yaml");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("[ERROR FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml]: "
                + "/etc/kubernetes/manifests/kube-apiserver.yaml already exists"), r.err());
        assertTrue(r.err().contains("[ERROR Port-6443]: Port 6443 is in use"), r.err());
    }

    @Test
    @Order(9)
    void masterIsNotReadyBeforeTheCni() throws InterruptedException {
        eventually("master registered", 30, () -> bed.ssh(master, "KUBECONFIG=/etc/kubernetes/admin.conf kubectl get node " + master).exit() == 0);
        String s = kubectl("get nodes");
        assertTrue(s.contains(master) && s.contains("NotReady"), s);
        String why = kubectl("get node " + master + " -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].message}'");
        assertTrue(why.contains("cni plugin not initialized"), why);
    }

    @Test
    @Order(10)
    void joinFailsWithAWrongTokenAnExpiredTokenAndAWrongCaHash() throws InterruptedException {
        String w = workers.get(1);
        String hash = sh(master, "kubeadm token create --print-join-command").replaceAll("(?s).*(sha256:[0-9a-f]{64}).*", "$1").trim();
        put(w, "/root/join-wrong.yaml", joinConfig(masterIp + ":6443", "abcdef.0123456789abcdef", hash));
        var r = bed.ssh(w, "kubeadm join --config /root/join-wrong.yaml");
        assertEquals(1, r.exit());
        assertTrue(r.err().contains("couldn't validate the identity of the API Server: could not find a JWS signature in the "
                + "cluster-info ConfigMap for token ID \"abcdef\""), r.err());

        String expired = sh(master, "kubeadm token create --ttl 2s").trim();
        Thread.sleep(3500);
        put(w, "/root/join-expired.yaml", joinConfig(masterIp + ":6443", expired, hash));
        r = bed.ssh(w, "kubeadm join --config /root/join-expired.yaml");
        assertEquals(1, r.exit());
        assertTrue(r.err().contains("could not find a JWS signature in the cluster-info ConfigMap for token ID \""
                + expired.substring(0, 6) + "\""), r.err());

        String good = sh(master, "kubeadm token create --ttl 10m").trim();
        put(w, "/root/join-hash.yaml", joinConfig(masterIp + ":6443", good, "sha256:" + "0".repeat(64)));
        r = bed.ssh(w, "kubeadm join --config /root/join-hash.yaml");
        assertEquals(1, r.exit());
        assertTrue(r.err().contains("cluster CA found in cluster-info ConfigMap is invalid: none of the public keys \"" + hash
                + "\" are pinned"), r.err());
        sh(w, "rm -f /root/join-*.yaml");
    }

    @Test
    @Order(11)
    void workersJoin() throws InterruptedException {
        joinCommand = sh(master, "kubeadm token create --print-join-command").trim();
        assertTrue(joinCommand.startsWith("kubeadm join " + masterIp + ":6443 --token "), joinCommand);
        // worker 1: the printed command plus the CRI socket
        String out = sh(workers.get(0), joinCommand + " --cri-socket " + CRI);
        assertTrue(out.contains("This node has joined the cluster"), out);
        // worker 2: a JoinConfiguration file, so that the token never shows in argv
        Matcher m = Pattern.compile("--token (\\S+) --discovery-token-ca-cert-hash (\\S+)").matcher(joinCommand);
        assertTrue(m.find());
        put(workers.get(1), "/root/join.yaml", joinConfig(masterIp + ":6443", m.group(1), m.group(2)));
        sh(workers.get(1), "chmod 600 /root/join.yaml && kubeadm join --config /root/join.yaml && rm -f /root/join.yaml");
        for (String w : workers) {
            sh(w, "test -s /etc/kubernetes/kubelet.conf && test ! -e /etc/kubernetes/bootstrap-kubelet.conf");
        }
        eventually("3 nodes registered", 30, () -> kubectl("get nodes -o name").lines().count() == 3);
        String list = kubectl("get nodes -o json");
        assertTrue(list.contains("\"kind\": \"List\"") && list.contains("\"items\""), list);
    }

    @Test
    @Order(12)
    void nodesGetReadyOnceTheCniIsApplied() throws Exception {
        put(master, "/root/kube-flannel.yml", manifest("kube-flannel-v0.28.9.yml"));
        String out = kubectl("apply -f /root/kube-flannel.yml");
        assertTrue(out.contains("daemonset.apps/kube-flannel-ds created"), out);
        String wait = kubectl("wait --for=condition=Ready node --all --timeout=90s");
        assertEquals(3, wait.lines().filter(l -> l.endsWith("condition met")).count(), wait);
        for (String h : bed.hosts().subList(0, 3)) {
            sh(h, "test -s /etc/cni/net.d/10-flannel.conflist");
        }
        assertTrue(kubectl("apply -f /root/kube-flannel.yml").contains("daemonset.apps/kube-flannel-ds unchanged"));
    }

    @Test
    @Order(13)
    void gpuNodesOfferTheirGpusThroughTheDevicePlugin() throws Exception {
        for (String w : workers) {
            assertTrue(kubectl("label node " + w + " nvidia.com/gpu.present=true").contains("node/" + w + " labeled"));
        }
        var again = bed.ssh(master, "KUBECONFIG=/etc/kubernetes/admin.conf kubectl label node " + workers.get(0) + " nvidia.com/gpu.present=false");
        assertEquals(1, again.exit());
        assertTrue(again.err().contains("already has a value (true), and --overwrite is false"), again.err());
        put(master, "/root/nvidia-device-plugin.yml", manifest("nvidia-device-plugin-v0.20.0.yml"));
        kubectl("apply -f /root/nvidia-device-plugin.yml");
        for (String w : workers) {
            String want = String.valueOf(sh(w, "nvidia-smi -L").lines().count());
            eventually(w + " allocatable nvidia.com/gpu = " + want, 60, () -> want.equals(
                    kubectl("get node " + w + " -o jsonpath='{.status.allocatable.nvidia\\.com/gpu}'").trim()));
        }
        String onMaster = kubectl("get pods -n kube-system -o wide --field-selector spec.nodeName=" + master);
        assertTrue(!onMaster.contains("nvidia-device-plugin"), "the plugin does not tolerate the control-plane taint: " + onMaster);
    }

    @Test
    @Order(14)
    void devicePluginCrashLoopsWhenNvidiaIsNotTheDefaultRuntime() throws InterruptedException {
        String w = workers.get(1);
        put(w, "/etc/docker/daemon.json", "{\"exec-opts\": [\"native.cgroupdriver=systemd\"], "
                + "\"runtimes\": {\"nvidia\": {\"args\": [], \"path\": \"nvidia-container-runtime\"}}}\n");
        sh(w, "systemctl restart docker && systemctl restart cri-docker");
        assertEquals("runc", sh(w, "docker info --format '{{.DefaultRuntime}}'").trim());
        String pod = kubectl("get pods -n kube-system -l name=nvidia-device-plugin-ds --field-selector spec.nodeName=" + w + " -o name").trim();
        kubectl("delete -n kube-system " + pod);
        eventually("device plugin on " + w + " in CrashLoopBackOff", 60, () -> kubectl(
                "get pods -n kube-system -l name=nvidia-device-plugin-ds --field-selector spec.nodeName=" + w).contains("CrashLoopBackOff"));
        String name = kubectl("get pods -n kube-system -l name=nvidia-device-plugin-ds --field-selector spec.nodeName=" + w + " -o name").trim();
        assertNotEquals(pod, name, "the DaemonSet made a new pod");
        String logs = kubectl("logs -n kube-system " + name);
        assertTrue(logs.contains("If this is a GPU node, did you configure the NVIDIA Container Toolkit?"), logs);
        assertTrue(logs.contains("platform detection failed"), logs);
        assertEquals("", kubectl("get node " + w + " -o jsonpath='{.status.allocatable.nvidia\\.com/gpu}'").trim());
    }

    /**
     * The emulated kubeadm's upload-certs, as kubeadm's copycerts.go does it: what an HA join downloads (from VipE2E,
     * merged here: the by-hand master of this flow is a kubeadm-initialised control plane like any other).
     */
    @Test
    @Order(15)
    void uploadCertsEncryptsTheSharedCertificatesUnderTheKey() {
        String key = sh(master, "kubeadm certs certificate-key").strip();
        assertTrue(key.matches("[0-9a-f]{64}"), key);
        assertEquals("[upload-certs] Storing the certificates in Secret \"kubeadm-certs\" in the \"kube-system\" Namespace\n"
                + "[upload-certs] Using certificate key:\n" + key + "\n",
                sh(master, "kubeadm init phase upload-certs --upload-certs --certificate-key " + key));
        // decrypted with the key by the cryptography library itself: nonce(12) || ciphertext || tag, AES-256-GCM
        String decrypt = "kubectl --kubeconfig=/etc/kubernetes/admin.conf get secret -n kube-system kubeadm-certs -o json | python3 -c '"
                + "import sys, json, base64\nfrom cryptography.hazmat.primitives.ciphers.aead import AESGCM\n"
                + "d = json.load(sys.stdin)[\"data\"]\nb = base64.b64decode(d[\"ca.crt\"])\n"
                + "print(\" \".join(sorted(d)))\nsys.stdout.write(AESGCM(bytes.fromhex(sys.argv[1])).decrypt(b[:12], b[12:], None).decode())' " + key;
        assertEquals("ca.crt ca.key etcd-ca.crt etcd-ca.key front-proxy-ca.crt front-proxy-ca.key sa.key sa.pub\n"
                + sh(master, "cat /etc/kubernetes/pki/ca.crt"), sh(master, decrypt));
        assertTrue(sh(master, "kubeadm token list").contains("Proxy for managing TTL for the kubeadm-certs secret"));
        // owned by that token: the garbage collector deletes the certificates with it
        assertEquals("Secret True True\n", sh(master, "kubectl --kubeconfig=/etc/kubernetes/admin.conf get secret -n kube-system"
                + " kubeadm-certs -o json | python3 -c 'import sys, json\no = json.load(sys.stdin)[\"metadata\"][\"ownerReferences\"][0]\n"
                + "print(o[\"kind\"], o[\"name\"].startswith(\"bootstrap-token-\"), o[\"controller\"])'"));
        var wrong = bed.ssh(master, "kubeadm init phase upload-certs --upload-certs --certificate-key " + "00".repeat(16));
        assertEquals(1, wrong.exit(), wrong.toString());
        assertTrue(wrong.err().contains("certificateKey: Invalid value: \"" + "00".repeat(16) + "\": invalid certificate key size 16,"
                + " the key must be an AES key of size 32"), wrong.toString());
        assertEquals("[upload-certs] Skipping phase. Please see --upload-certs\n", sh(master, "kubeadm init phase upload-certs"));
    }
}
