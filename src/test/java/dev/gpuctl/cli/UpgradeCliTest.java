package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The upgrade's offline view (plan --upgrade) shows the target, the order, the batches and each host's commands; upgrade
 * --dry-run connects (ExitCodesCliTest); bad flags are exit 2.
 */
class UpgradeCliTest {
    @Test void theOfflineViewShowsTheTargetTheOrderTheBatchesAndTheCommands() throws IOException {
        var inv = dev.gpuctl.inventory.InventoryLoader.load(CliTest.EXAMPLE);
        String out = UpgradeCommand.planText(inv, UpgradeCommand.options(inv, "1.35.1", "2", java.time.Duration.ofSeconds(90), false),
            java.util.List.of(), true);
        assertTrue(out.startsWith("Upgrade to v1.35.1: the control plane on master, then its node, then the workers 2 at a time:"
            + " [worker-1, worker-2], then [worker-3]."), out);
        String[] order = {"== phase 0: upgrade preflight", "== phase 1: control-plane backup", "== phase 2: control plane to v1.35.1 (on master)",
            "== phase 3: drain master", "== phase 4: node master: kubelet and kubectl to v1.35.1, back",
            "== phase 5: batch 1/2 (worker-1, worker-2): drain worker-1, worker-2",
            "== phase 6: batch 1/2 (worker-1, worker-2): kubeadm, kubeadm upgrade node", "== phase 7: batch 1/2 (worker-1, worker-2): Ready",
            "== phase 8: batch 2/2 (worker-3): drain worker-3"};
        int at = -1;
        for (String o : order) {
            int i = out.indexOf(o);
            assertTrue(i > at, o + " after the phase before it\n" + out);
            at = i;
        }
        assertTrue(out.contains("kubeadm upgrade apply \"$(kubeadm version -o short)\" --yes"), out);
        assertTrue(out.contains("--ignore-daemonsets") && out.contains("--delete-emptydir-data"), "the drain's kubectl\n" + out);
        assertTrue(out.contains("kubeadm upgrade node"), out);
        assertTrue(out.contains("apt-cache madison kubeadm | awk '$3 ~ /^1\\.35\\.1-/"), "a patch target installs that patch\n" + out);
        assertTrue(out.contains("Pin: version 1.35.*"), "the pin moves with the version\n" + out);
    }

    @Test void planUpgradeIsTheOfflineViewWithTheInventorysVersion(@TempDir Path home) throws IOException {
        // a home with the example's key in place: the plan then warns about nothing the dry run does not say
        Files.createDirectories(home.resolve(".ssh"));
        Files.writeString(home.resolve(".ssh/id_ed25519"), "a key's place\n");
        Map<String, String> env = Map.of("HOME", home.toString());
        CliTest.Run summary = CliTest.run(env, "plan", "--upgrade", CliTest.EXAMPLE.toString());
        assertEquals(0, summary.code(), summary::toString);
        assertTrue(summary.out().contains("What changes") && !summary.out().contains("== phase") && !summary.out().contains("\n          $ "),
            "without --details, the summary\n" + summary);
        CliTest.Run plan = CliTest.run(env, "plan", "--upgrade", "--details", CliTest.EXAMPLE.toString());
        assertEquals(0, plan.code(), plan::toString);
        assertTrue(plan.out().startsWith("Upgrade to 1.35: the control plane on master, then its node, then the workers 1 at a time:"
            + " [worker-1], then [worker-2], then [worker-3]."), plan::toString);
        String stamp = "\\d{8}T\\d{6}Z"; // the backup archive's name says when
        var inv = dev.gpuctl.inventory.InventoryLoader.load(CliTest.EXAMPLE, env);
        String offline = UpgradeCommand.planText(inv, UpgradeCommand.options(inv, null, "1", java.time.Duration.ofMinutes(10), false), java.util.List.of(), true);
        assertEquals(offline.replaceAll(stamp, "T"), plan.out().replaceAll(stamp, "T"));
        assertTrue(plan.out().contains("control-plane backup"), plan::toString);
    }

    @Test void badFlagsAreUsageErrors() {
        CliTest.Run to = CliTest.run("upgrade", "--to", "next", CliTest.EXAMPLE.toString());
        assertEquals(2, to.code(), to::toString);
        assertTrue(to.err().contains("--to 'next' is no Kubernetes version"), to::toString);
        CliTest.Run mu = CliTest.run("upgrade", "--max-unavailable", "0", CliTest.EXAMPLE.toString());
        assertEquals(2, mu.code(), mu::toString);
        assertTrue(mu.err().contains("--max-unavailable: '0' is no number of nodes"), mu::toString);
    }
}
