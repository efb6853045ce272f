package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** plan: the summary first, --hosts and --only, and --json against docs/plan.schema.json. */
class PlanCliTest {
    static final Path SCHEMA = Path.of("docs/plan.schema.json");
    static final ObjectMapper JSON = new ObjectMapper();

    static Schema schema() throws IOException {
        return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(Files.newInputStream(SCHEMA));
    }

    static List<String> errors(JsonNode doc) throws IOException {
        return schema().validate(doc).stream().map(e -> e.getInstanceLocation() + ": " + e.getMessage()).toList();
    }

    @Test void thePlanIsTheSummaryWhichHostGetsWhichStepAndWhatChangesWithoutACommandLine() {
        CliTest.Run r = CliTest.run("plan", CliTest.EXAMPLE.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("Summary: 4 hosts, 20 steps"), r::toString);
        List<String> lines = r.out().lines().toList();
        String header = lines.stream().filter(l -> l.trim().startsWith("HOST ")).findFirst().orElseThrow();
        assertEquals(List.of("HOST", "ROLE", "GPU", "preflight", "cluster-identity", "control-plane-change", "proxy", "time", "swap", "kernel", "runtime", "packages", "dev-char-links", "driver-hold", "init", "endpoint", "cni", "endpoint-kubelets", "join", "gpu", "gpu-record", "gpu-health", "nfs"),
            List.of(header.trim().split(" +")));
        assertEquals(List.of("master", "master", "no", "x", "x", "x", "x", "x", "x", "x", "x", "x", "-", "-", "x", "x", "x", "x", "-", "x", "x", "-", "x"),
            List.of(lines.stream().filter(l -> l.startsWith("  master ")).findFirst().orElseThrow().trim().split(" +")));
        assertEquals(List.of("worker-2", "worker", "yes", "x", "x", "-", "x", "x", "x", "x", "x", "x", "x", "x", "-", "-", "-", "x", "x", "-", "-", "x", "x"),
            List.of(lines.stream().filter(l -> l.startsWith("  worker-2 ")).findFirst().orElseThrow().trim().split(" +")));
        assertTrue(r.out().contains("\n  kernel                kernel modules and sysctl: writes /etc/modules-load.d/k8s.conf, /etc/sysctl.d/k8s.conf; runs "),
            r::toString);
        assertTrue(r.out().contains("\n  preflight             preflight (read-only): checks only\n"), r::toString);
        assertTrue(r.out().contains("\n  worker-1  ssh root@172.16.10.100:22 (root), key "), r::toString);
        assertTrue(r.out().contains("Every phase, host, step, command and file: the same command with --details."), r::toString);
        assertFalse(r.out().contains("$ "), "no command line in the summary:\n" + r);
        assertFalse(r.out().contains("== phase") || r.out().contains("step join:"), r::toString);
    }

    @Test void detailsListKubeProxysRestartRightAfterItsConfigMapOnlyIfThatChanged() {
        CliTest.Run r = CliTest.run("plan", "--details", CliTest.EXAMPLE.toString());
        assertEquals(0, r.code(), r::toString);
        int cm = r.out().indexOf("- kube-proxy's kubeconfig (kube-system/kube-proxy) pointed at the endpoint (kubectl replace)\n");
        String after = r.out().substring(cm, r.out().indexOf("- kubeadm-config's ClusterConfiguration with the new endpoint", cm));
        assertTrue(cm > 0 && after.contains("GPUCTL_EOF\n      - kube-proxy's pods restarted to load the changed ConfigMap (kubectl delete pod -n kube-system "
            + "-l k8s-app=kube-proxy; its DaemonSet makes them again)\n          only if changed: configmap kube-system/kube-proxy\n"
            + "          $ kubectl --kubeconfig=/etc/kubernetes/admin.conf delete pod -n kube-system -l k8s-app=kube-proxy\n"
            + "      - wait until kube-proxy's DaemonSet has all its pods Running again\n          wait up to 180s, asking every 2 s (sooner at first), until: "
            + "kube-system/kube-proxy's pods are all Running and ready\n"), r::toString);
    }

    @Test void detailsAddEveryPhaseHostStepCommandAndFileAfterTheSummary() {
        CliTest.Run summary = CliTest.run("plan", CliTest.EXAMPLE.toString());
        CliTest.Run r = CliTest.run("plan", "--details", CliTest.EXAMPLE.toString());
        assertEquals(0, r.code(), r::toString);
        int details = r.out().indexOf("== phase 0");
        assertTrue(r.out().indexOf("Summary: 4 hosts, 20 steps") >= 0 && r.out().indexOf("Summary: 4 hosts, 20 steps") < details, r::toString);
        assertTrue(r.out().startsWith(summary.out().substring(0, summary.out().indexOf("Every phase, host"))), "the summary comes first, as it is");
        assertTrue(r.out().contains("[worker-1 172.16.10.100 worker]\n  step preflight:"), r::toString);
        assertTrue(r.out().contains("\n          $ swapoff -a\n"), r::toString);
        assertTrue(r.out().contains("write /etc/sysctl.d/k8s.conf (0644 root:root; backup once, atomic):"), r::toString);
    }

    @Test void hostsAndOnlyNarrowThePlanAsTheyNarrowBootstrap() {
        CliTest.Run r = CliTest.run("plan", "--details", "--hosts", "worker-1,master", "--only", "join,gpu", CliTest.EXAMPLE.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("Summary: 2 hosts, 5 steps"), r::toString);
        assertFalse(r.out().contains("[worker-2 "), r::toString);
        assertFalse(r.out().contains("step time:"), r::toString);
        assertTrue(r.out().contains("step preflight:"), "preflight always runs, so the plan shows it");
        assertTrue(r.out().contains("[worker-1 172.16.10.100 worker]\n  step join:"), r::toString);
        assertTrue(r.out().contains("[master 172.16.10.90 master]\n  step gpu:"), r::toString);
    }

    @Test void anUnknownHostOrStepIsExit2AndNamesWhatExists() {
        CliTest.Run h = CliTest.run("plan", "--hosts", "worker-9", CliTest.EXAMPLE.toString());
        assertEquals(2, h.code(), h::toString);
        assertTrue(h.err().contains("unknown host 'worker-9' for --hosts (the inventory has: master, worker-1, worker-2, worker-3)"), h::toString);
        CliTest.Run s = CliTest.run("plan", "--only", "gpus", CliTest.EXAMPLE.toString());
        assertEquals(2, s.code(), s::toString);
        assertTrue(s.err().contains("unknown step 'gpus' for --only (expected: preflight, cluster-identity, control-plane-change, proxy, time,"), s::toString);
        assertEquals("", s.out());
    }

    @Test void oneHostIsOneHostNotOneHosts(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("one.yaml");
        Files.writeString(f, """
            cluster: { name: solo, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: 10.0.0.1, role: master }
            """);
        CliTest.Run r = CliTest.run("plan", f.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("packages upstream, 1 host (0 with GPUs)"), r::toString);
        assertTrue(r.out().contains("Summary: 1 host, "), r::toString);
    }

    @Test void theJsonOfTheExampleAndOfACalicoNfsPlanIsValidAgainstTheSchemaInTheRepository() throws IOException {
        for (String[] args : new String[][] {{"plan", "--json", CliTest.EXAMPLE.toString()},
                {"plan", "--json", "--hosts", "worker-3", "--only", "join", CliTest.EXAMPLE.toString()}}) {
            CliTest.Run r = CliTest.run(args);
            assertEquals(0, r.code(), r::toString);
            JsonNode doc = JSON.readTree(r.out());
            assertEquals(List.of(), errors(doc), "plan --json against " + SCHEMA);
            assertEquals(PlanCommand.SCHEMA, doc.get("schema").asText());
        }
        JsonNode doc = JSON.readTree(CliTest.run("plan", "--json", CliTest.EXAMPLE.toString()).out());
        JsonNode worker1 = doc.get("hostSteps").get(1);
        assertEquals("worker-1", worker1.get("name").asText());
        assertTrue(worker1.get("gpu").asBoolean());
        assertEquals(List.of("preflight", "cluster-identity", "proxy", "time", "swap", "kernel", "runtime", "dev-char-links", "packages", "driver-hold", "endpoint-kubelets", "join", "gpu-health", "nfs"),
            JSON.convertValue(worker1.get("steps"), List.class));
    }

    @Test void theSchemaRefusesWhatThePlanMustNotBe() throws IOException {
        ObjectNode doc = (ObjectNode) JSON.readTree(CliTest.run("plan", "--json", CliTest.EXAMPLE.toString()).out());
        ObjectNode noSummary = doc.deepCopy();
        noSummary.remove("hostSteps");
        assertFalse(errors(noSummary).isEmpty(), "hostSteps is required");
        ObjectNode badOp = doc.deepCopy();
        ((ObjectNode) badOp.at("/phases/1/hosts/0/steps/0/apply/0")).put("kind", "teleport");
        assertFalse(errors(badOp).isEmpty(), "an unknown op kind is refused");
        ObjectNode writeWithoutContent = doc.deepCopy();
        for (JsonNode op : writeWithoutContent.findValues("apply").stream().flatMap(a -> iterable(a).stream()).toList()) {
            if (op.get("kind").asText().equals("write")) {
                ((ObjectNode) op).remove("content");
                break;
            }
        }
        assertFalse(errors(writeWithoutContent).isEmpty(), "a write op names its content");
    }

    /** The README's first command on a fresh machine: no ~/.ssh/id_ed25519 yet is a warning at its place, not an error. */
    @Test void theExampleInventoryPlansOnAFreshMachineWithTheMissingKeyAsAWarningAtItsPlace(@TempDir Path home) throws IOException {
        Map<String, String> env = Map.of("HOME", home.toString());
        List<String> example = Files.readAllLines(CliTest.EXAMPLE);
        int line = example.indexOf(example.stream().filter(l -> l.trim().startsWith("identityFile:")).findFirst().orElseThrow()) + 1;
        int column = example.get(line - 1).indexOf("~/.ssh/id_ed25519") + 1;
        String warning = CliTest.EXAMPLE + ":" + line + ":" + column + ": ssh.identityFile: " + home.resolve(".ssh/id_ed25519") + " does not exist";
        CliTest.Run r = CliTest.run(env, "plan", CliTest.EXAMPLE.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals("", r.err(), r::toString);
        assertTrue(r.out().contains("\nWarnings:\n  warning: " + warning), r::toString);
        CliTest.Run json = CliTest.run(env, "plan", "--json", CliTest.EXAMPLE.toString());
        assertEquals(0, json.code(), json::toString);
        JsonNode doc = JSON.readTree(json.out());
        assertEquals(List.of(), errors(doc));
        assertEquals(1, doc.get("warnings").size(), json::toString);
        assertTrue(doc.get("warnings").get(0).asText().startsWith(warning), json::toString);
        // with the key in place, nothing to warn about
        Files.createDirectories(home.resolve(".ssh"));
        Files.writeString(home.resolve(".ssh/id_ed25519"), "a key's place\n");
        CliTest.Run keyed = CliTest.run(env, "plan", CliTest.EXAMPLE.toString());
        assertEquals(0, keyed.code(), keyed::toString);
        assertFalse(keyed.out().contains("Warnings:"), keyed::toString);
        assertEquals(0, JSON.readTree(CliTest.run(env, "plan", "--json", CliTest.EXAMPLE.toString()).out()).get("warnings").size());
    }

    @Test void theJsonSaysHowEachHostIsReachedAndWhatThePlanWarnsAbout(@TempDir Path home) throws IOException {
        Files.createDirectories(home.resolve(".ssh"));
        Files.writeString(home.resolve(".ssh/config"), "Host gpu1\n  IdentityFile ~/.ssh/lab\nMatch host gpu1 exec \"true\"\n  User bob\n");
        Files.writeString(home.resolve(".ssh/lab"), "a key's place\n");
        Path inv = Files.writeString(home.resolve("inventory.yaml"), """
            cluster: { name: gpu-lab, kubernetesVersion: "1.35" }
            nodes:
              - { name: m, address: 10.0.0.1, role: master, ssh: { user: admin, identityFile: %s } }
              - { name: w1, address: gpu1, role: worker, ssh: { bastion: { address: 10.0.0.1, user: jump } } }
              - { name: here, address: 127.0.0.1, role: worker, connection: local }
            """.formatted(home.resolve("gone")));
        CliTest.Run r = CliTest.run(Map.of("HOME", home.toString()), "plan", "--json", inv.toString());
        assertEquals(0, r.code(), r::toString);
        JsonNode doc = JSON.readTree(r.out());
        assertEquals(List.of(), errors(doc), r::toString);
        JsonNode m = doc.get("connections").get(0);
        assertEquals("admin", m.get("user").asText());
        assertEquals("sudo -n", m.get("privilege").asText());
        assertEquals("key " + home.resolve("gone"), m.get("keySource").asText());
        assertTrue(m.get("bastion").isNull());
        JsonNode w1 = doc.get("connections").get(1);
        assertEquals("root", w1.get("privilege").asText());
        assertEquals("key " + home.resolve(".ssh/lab") + " (from ~/.ssh/config)", w1.get("keySource").asText());
        assertEquals("jump@10.0.0.1:22", w1.get("bastion").asText());
        assertEquals(1, w1.get("sshConfigWarnings").size(), r::toString);
        assertTrue(w1.get("sshConfigWarnings").get(0).asText().contains("Match exec true is not read by gpuctl"), r::toString);
        assertEquals(0, m.get("sshConfigWarnings").size(), "the Match block is for gpu1 only: " + r);
        JsonNode here = doc.get("connections").get(2);
        assertEquals("local", here.get("connection").asText());
        assertFalse(here.has("user"), r::toString);
        List<String> warnings = JSON.convertValue(doc.get("warnings"), new com.fasterxml.jackson.core.type.TypeReference<List<String>>() {});
        assertEquals(3, warnings.size(), r::toString);
        assertTrue(warnings.get(0).startsWith("CONNECTION: LOCAL: NODE here IS THIS MACHINE"), "the local warning first: " + warnings);
        assertTrue(warnings.get(1).startsWith(inv + ":3:"), warnings::toString);
        assertTrue(warnings.get(1).contains(home.resolve("gone") + " does not exist (node m"), warnings::toString);
        assertEquals(w1.get("sshConfigWarnings").get(0).asText(), warnings.get(2));
        // the text plan says the same, in the same order, the local warning above everything
        CliTest.Run text = CliTest.run(Map.of("HOME", home.toString()), "plan", inv.toString());
        assertTrue(text.out().startsWith("WARNING: " + warnings.get(0) + "\n"), text::toString);
        for (String w : warnings.subList(1, 3)) assertTrue(text.out().contains("  warning: " + w + "\n"), text::toString);
        assertTrue(text.out().contains("  m     ssh admin@10.0.0.1:22 (sudo -n), key " + home.resolve("gone") + "\n"), text::toString);
    }

    /**
     * Every command line the details show parses as shell ({@code bash -n}, with the definitions the details print
     * first), and none calls one of gpuctl's shell functions that neither it nor those definitions define.
     */
    @Test void everyCommandInTheDetailsParsesAsShellAndCallsNoHelperItDoesNotDefine(@TempDir Path dir) throws Exception {
        Set<String> helpers = helperFunctions();
        assertTrue(helpers.containsAll(Set.of("gj", "hx")), "the change journal's functions are found: " + helpers);
        Path calico = dir.resolve("calico.yaml");
        Files.writeString(calico, Files.readString(CliTest.EXAMPLE).replace("runtime: docker", "runtime: containerd")
            .replace("cni: flannel", "cni: calico").replace("podCidr: 10.244.0.0/16", "podCidr: 192.168.0.0/16"));
        int checked = 0;
        for (String[] args : new String[][] {{"plan", "--details", CliTest.EXAMPLE.toString()}, {"plan", "--details", calico.toString()},
                {"plan", "--upgrade", "--details", CliTest.EXAMPLE.toString()}}) {
            CliTest.Run r = CliTest.run(args);
            assertEquals(0, r.code(), r::toString);
            List<String> lines = r.out().lines().toList();
            int at = lines.indexOf("Some commands call the change journal's shell functions (gpuctl defines them first in the same command);"
                + " to paste such a command, define them first:");
            String preamble = at < 0 ? "" : lines.get(at + 1).strip();
            Set<String> defined = defined(preamble);
            for (String line : lines) {
                Matcher m = COMMAND_LINE.matcher(line);
                if (!m.matches()) continue;
                String command = m.group(1);
                Set<String> missing = new java.util.TreeSet<>();
                for (String h : helpers) {
                    if (calls(command, h) && !defined(command).contains(h) && !defined.contains(h)) missing.add(h);
                }
                assertEquals(Set.of(), missing, "calls a function nothing shown defines: " + command);
                Process bash = new ProcessBuilder("bash", "-n").redirectErrorStream(true).start();
                try (var in = bash.getOutputStream()) {
                    in.write((preamble + "\n" + command + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
                }
                String said = new String(bash.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                assertEquals(0, bash.waitFor(), "bash -n: " + said + "\n" + command);
                checked++;
            }
            if (args[1].equals("--details") && args[2].equals(CliTest.EXAMPLE.toString())) {
                assertTrue(lines.stream().anyMatch(l -> l.contains("$ ") && calls(l, "gj")), "the example's swap step calls gj");
                assertFalse(preamble.isEmpty(), "so the definitions are shown");
            }
        }
        assertTrue(checked > 300, "commands checked: " + checked);
    }

    static final Pattern COMMAND_LINE = Pattern.compile("^ {10}(?:skip when: )?\\$ (.*)$");

    /** Every shell function gpuctl's sources define ({@code "... name() {"} inside a string literal). */
    static Set<String> helperFunctions() throws IOException {
        Set<String> names = new java.util.TreeSet<>();
        Pattern def = Pattern.compile("\"[^\"\n]*?\\b([A-Za-z_][A-Za-z0-9_]*)\\(\\) ?\\{");
        try (var files = Files.walk(Path.of("src/main/java"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                Matcher m = def.matcher(Files.readString(f));
                while (m.find()) names.add(m.group(1));
            }
        }
        return names;
    }

    static Set<String> defined(String shell) {
        Set<String> names = new java.util.HashSet<>();
        Matcher m = Pattern.compile("(?:^|[;{}&|\\s])([A-Za-z_][A-Za-z0-9_]*)\\(\\) ?\\{").matcher(shell);
        while (m.find()) names.add(m.group(1));
        return names;
    }

    /** Whether {@code name} is a command word in {@code shell}. */
    static boolean calls(String shell, String name) {
        return Pattern.compile("(?:^|[;&|({!]|\\$\\(|\\bdo|\\bthen|\\belse)\\s*" + Pattern.quote(name) + "(?=\\s|;|\\)|$)")
            .matcher(shell).find();
    }

    private static List<JsonNode> iterable(JsonNode array) {
        List<JsonNode> out = new java.util.ArrayList<>();
        array.forEach(out::add);
        return out;
    }
}
