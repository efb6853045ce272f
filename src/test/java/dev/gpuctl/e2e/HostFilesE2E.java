package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Files on real hosts: a daemon.json and an /etc/fstab kept as symlinks into a config management tree are edited in
 * their targets (links, owners and modes kept, backups holding the targets' content and mode), and a re-run changes
 * nothing; a link into a directory other users can write is refused and nothing is written; a CNI manifest holding
 * Helm-style {{ .Values.x }} is put on the master byte for byte and the cluster comes up.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HostFilesE2E {
    static TestBed bed;
    static Path inventory;
    static String worker;
    static final String HELM_LINES = "# values a site's chart left in: {{ .Values.x }} and {{.Values.x}}\n";

    /** The links, their targets and the backups: type, owner, mode and content. */
    static final String FILES = "for f in /etc/docker/daemon.json /etc/fstab /srv/cm/daemon.json /srv/cm/fstab "
        + "/etc/docker/daemon.json.gpuctl-orig /etc/fstab.gpuctl-orig; do stat -c '%n %F %U:%G %a %Y' \"$f\"; "
        + "[ -L \"$f\" ] && readlink \"$f\" || sha256sum \"$f\"; done 2>&1";

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() throws IOException {
        bed = TestBed.own("hf", 1);
        worker = bed.workers().get(0);
        Path base = bed.inventory("docker", "flannel");
        Path manifest = base.resolveSibling("kube-flannel-values.yml");
        Files.writeString(manifest, HELM_LINES + Files.readString(bed.repoRoot().resolve("testbed/manifests/kube-flannel-v0.28.9.yml")));
        inventory = base.resolveSibling("inventory.yaml");
        Files.writeString(inventory, Files.readString(base).replaceAll("(?m)^  cniManifest: .*$", "  cniManifest: " + manifest));
    }

    @Test @Order(1) void symlinkedDaemonJsonAndFstabAreEditedInTheirTargets() {
        bed.ok(worker, "install -d -m 0755 /srv/cm /etc/docker"
            + " && printf '{\"registry-mirrors\": [\"https://mirror.example.internal\"]}\\n' > /srv/cm/daemon.json"
            + " && chown root:adm /srv/cm/daemon.json && chmod 0640 /srv/cm/daemon.json"
            + " && rm -f /etc/docker/daemon.json && ln -s /srv/cm/daemon.json /etc/docker/daemon.json"
            + " && { cat /etc/fstab; printf '/swapfile-cm\\tnone\\tswap\\tsw\\t0\\t0\\n'; } > /srv/cm/fstab"
            + " && chown root:adm /srv/cm/fstab && chmod 0644 /srv/cm/fstab"
            + " && cp /srv/cm/fstab /tmp/fstab.before && ln -sfn /srv/cm/fstab /etc/fstab");

        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", "swap,runtime", inventory.toString());
        assertEquals(0, r.code(), r::toString);

        // the links are kept and still point where config management put them
        assertEquals("/srv/cm/daemon.json\n", bed.ok(worker, "readlink /etc/docker/daemon.json"));
        assertEquals("/srv/cm/fstab\n", bed.ok(worker, "readlink /etc/fstab"));
        // the targets hold the edits, with their own owner and mode
        String daemon = bed.ok(worker, "cat /srv/cm/daemon.json");
        assertTrue(daemon.contains("https://mirror.example.internal") && daemon.contains("native.cgroupdriver=systemd")
            && daemon.contains("\"default-runtime\": \"nvidia\""), daemon);
        assertEquals("regular file root:adm 640\n", bed.ok(worker, "stat -c '%F %U:%G %a' /srv/cm/daemon.json"));
        assertEquals("#gpuctl-swapoff# /swapfile-cm\tnone\tswap\tsw\t0\t0\n", bed.ok(worker, "grep swapfile-cm /srv/cm/fstab"));
        assertEquals("regular file root:adm 644\n", bed.ok(worker, "stat -c '%F %U:%G %a' /srv/cm/fstab"));
        // docker runs with the merged file it read through the link
        assertEquals("nvidia systemd\n", bed.ok(worker, "docker info --format '{{.DefaultRuntime}} {{.CgroupDriver}}'"));
        // the backups beside the links hold the targets as they were: content, owner and mode
        assertEquals("{\"registry-mirrors\": [\"https://mirror.example.internal\"]}\n", bed.ok(worker, "cat /etc/docker/daemon.json.gpuctl-orig"));
        assertEquals("regular file root:adm 640\n", bed.ok(worker, "stat -c '%F %U:%G %a' /etc/docker/daemon.json.gpuctl-orig"));
        assertEquals(bed.ok(worker, "cat /tmp/fstab.before"), bed.ok(worker, "cat /etc/fstab.gpuctl-orig"));
        assertEquals("regular file root:adm 644\n", bed.ok(worker, "stat -c '%F %U:%G %a' /etc/fstab.gpuctl-orig"));
        // nothing left beside them, nothing group- or world-writable
        assertEquals("", bed.ok(worker, "ls -A /srv/cm /etc/docker | grep gpuctl-tmp || true"));
        assertEquals("", bed.ok(worker, "find /srv/cm /etc/docker /etc/fstab* -perm /022 ! -type l"));
    }

    @Test @Order(2) void aReRunChangesNothing() {
        Map<String, String> before = bed.fingerprints(FILES);
        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", "swap,runtime", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(0, r.count("changed"), r::toString);
        assertEquals(before, bed.fingerprints(FILES), "a re-run changed a file");
    }

    @Test @Order(3) void aLinkIntoADirectoryOtherUsersCanWriteIsRefusedAndNothingIsWritten() {
        bed.ok(worker, "install -d -m 1777 /srv/pub && printf 'net.ipv4.ip_forward = 0\\n' > /srv/pub/k8s.conf"
            + " && chmod 0644 /srv/pub/k8s.conf && rm -f /etc/sysctl.d/k8s.conf && ln -s /srv/pub/k8s.conf /etc/sysctl.d/k8s.conf");
        String before = bed.ok(worker, "stat -c '%Y %a' /srv/pub/k8s.conf; cat /srv/pub/k8s.conf; readlink /etc/sysctl.d/k8s.conf; ls -A /etc/sysctl.d /srv/pub");

        Gpuctl.Run r = Gpuctl.run("bootstrap", "--only", "kernel", "--hosts", worker, inventory.toString());

        assertNotEquals(0, r.code(), r::toString);
        String all = r.out() + r.err();
        assertTrue(all.contains("refusing to write /etc/sysctl.d/k8s.conf: directory /srv/pub (mode 1777) can be written by users other than root"), r::toString);
        assertEquals(before, bed.ok(worker, "stat -c '%Y %a' /srv/pub/k8s.conf; cat /srv/pub/k8s.conf; readlink /etc/sysctl.d/k8s.conf; ls -A /etc/sysctl.d /srv/pub"),
            "a refused write changed something");
        bed.ok(worker, "rm -f /etc/sysctl.d/k8s.conf && rm -rf /srv/pub");
    }

    @Test @Order(4) void aManifestHoldingTemplateSyntaxIsUsedByteForByte() throws IOException {
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        String onMaster = bed.ok(bed.master(), "cat /etc/kubernetes/gpuctl/flannel-*.yaml");
        Path local = inventory.resolveSibling("kube-flannel-values.yml");
        assertEquals(Files.readString(local), onMaster, "the manifest on the master differs from the inventory's file");
        assertTrue(onMaster.startsWith(HELM_LINES));
        assertEquals("True\n", bed.ok(bed.master(), "kubectl --kubeconfig=/etc/kubernetes/admin.conf get node " + worker
            + " -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}'; echo"));

        Gpuctl.Run again = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
    }

    /**
     * cluster.proxy, with a password, lands in apt's configuration, the runtime's and kubelet's environment and the file
     * gpuctl's downloads source; the password is in no unit property (systemctl show, readable by every user over D-Bus)
     * and in no process's argv during or after the run: the drop-ins name a root-only 0600 EnvironmentFile. A re-run
     * changes nothing; without it the files go again, the environment file too. The proxy is never contacted: nothing
     * after the step downloads (the name is under .invalid, which never resolves).
     */
    @Test @Order(5) void aProxyLandsInAptTheRuntimeAndKubeletAndGoesWhenRemoved() throws IOException {
        String secret = "s3cret-Pr0xy";
        String url = "http://ci:" + secret + "@proxy.invalid:3128";
        Path proxied = inventory.resolveSibling("inventory-proxy.yaml");
        Files.writeString(proxied, Files.readString(inventory).replaceFirst("(?m)^cluster:\n",
            "cluster:\n  proxy: { http: \"" + url + "\", https: \"" + url + "\", noProxy: [registry.lab] }\n"));
        // every process's argv on every host, sampled while gpuctl runs
        for (String h : bed.hosts()) {
            bed.ok(h, "rm -f /root/ps.log; setsid sh -c 'echo $$ > /root/ps.pid; while :; do ps -eo args; sleep 0.1; done > /root/ps.log 2>&1'"
                + " </dev/null >/dev/null 2>&1 & sleep 0.5; test -s /root/ps.pid");
        }
        Gpuctl.Run r = Gpuctl.run("bootstrap", proxied.toString());
        for (String h : bed.hosts()) bed.ok(h, "kill $(cat /root/ps.pid) && rm -f /root/ps.pid");
        assertEquals(0, r.code(), r::toString);
        for (String h : bed.hosts()) {
            assertTrue(bed.ok(h, "wc -l < /root/ps.log").strip().matches("[0-9]{3,}"), h + ": the argv sampler did not run");
            assertEquals("", bed.ok(h, "grep -F " + secret + " /root/ps.log; ps -eo args | grep -F " + secret + " | grep -v grep; true"),
                h + ": the proxy's password was in a process's argv");
            assertTrue(bed.ok(h, "apt-config dump | grep -i 'Acquire::http::Proxy'").contains("\"" + url + "\""), h);
            assertEquals("regular file 600 root:root\n", bed.ok(h, "stat -c '%F %a %U:%G' /etc/gpuctl/proxy.env /etc/apt/apt.conf.d/95gpuctl-proxy | sort -u"), h);
            for (String unit : List.of("docker", "kubelet")) {
                String shown = bed.ok(h, "systemctl show -p Environment -p EnvironmentFiles " + unit + "; cat /etc/systemd/system/" + unit + ".service.d/20-gpuctl-proxy.conf");
                assertFalse(shown.contains(secret) || shown.contains("PROXY="), h + " " + unit + ": " + shown);
                assertTrue(shown.contains("EnvironmentFiles=/etc/gpuctl/proxy.env"), h + " " + unit + ": " + shown);
                // the running daemon has the environment systemd read from the file
                // a daemon between two runs (Restart=always, RestartSec=10) has MainPID 0: wait for the running one
                String env = bed.ok(h, "for i in $(seq 60); do p=$(systemctl show -p MainPID --value " + unit + "); [ \"$p\" != 0 ] && break; sleep 0.5; done;"
                    + " tr '\\0' '\\n' < /proc/$p/environ");
                assertTrue(env.contains("HTTPS_PROXY=" + url + "\n") && env.contains("NO_PROXY=registry.lab,localhost,"), h + " " + unit + ": " + env);
                assertTrue(env.contains(bed.address(bed.master())) && env.contains("10.244.0.0/16") && env.contains(".svc"), env);
            }
            assertEquals(url + "\n", bed.ok(h, "set -a && . /etc/gpuctl/proxy.env && sh -c 'echo \"$https_proxy\"'"), h);
        }
        assertFalse((r.out() + r.err()).contains(secret), r::toString);
        assertEquals("", grepLogs(secret), "the password is in a log under .gpuctl/");
        assertEquals("active\n", bed.ok(worker, "systemctl is-active kubelet"));
        Gpuctl.Run again = Gpuctl.run("bootstrap", proxied.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);

        Gpuctl.Run removed = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, removed.code(), removed::toString);
        for (String h : bed.hosts()) {
            assertEquals("", bed.ok(h, "ls /etc/apt/apt.conf.d/95gpuctl-proxy /etc/gpuctl/proxy.env /etc/systemd/system/*.service.d/20-gpuctl-proxy.conf 2>/dev/null; true"), h);
            String shown = bed.ok(h, "systemctl show -p Environment -p EnvironmentFiles kubelet");
            assertFalse(shown.contains("PROXY") || shown.contains("proxy.env"), h + ": " + shown);
            assertFalse(bed.ok(h, "for i in $(seq 60); do p=$(systemctl show -p MainPID --value kubelet); [ \"$p\" != 0 ] && break; sleep 0.5; done;"
                + " tr '\\0' '\\n' < /proc/$p/environ").contains("PROXY"), h);
        }
        Gpuctl.Run clean = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, clean.count("changed"), clean::toString);
    }

    /** The lines of gpuctl's logs beside the inventory that hold {@code text}. */
    static String grepLogs(String text) throws IOException {
        Path dir = inventory.resolveSibling(".gpuctl");
        if (!Files.isDirectory(dir)) return "";
        StringBuilder hits = new StringBuilder();
        try (var files = Files.walk(dir)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                String content = new String(Files.readAllBytes(f), java.nio.charset.StandardCharsets.ISO_8859_1);
                if (content.contains(text)) hits.append(f).append('\n');
            }
        }
        return hits.toString();
    }
}
