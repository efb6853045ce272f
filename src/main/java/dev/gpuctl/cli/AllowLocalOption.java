package dev.gpuctl.cli;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * {@code --allow-local}, on every command that changes hosts: a node with {@code connection: local} runs its steps as
 * root on the machine gpuctl runs on, so such a command refuses it (exit 2) unless the person said so.
 */
public final class AllowLocalOption {
    @Option(names = "--allow-local",
        description = "Let this command change a node with `connection: local`: its root steps then run on this machine itself.")
    boolean allowLocal;

    /** Exit 2 when {@code inv} has a local node and --allow-local was not given; {@code command} as the person typed it. */
    void check(Inventory inv, Path file, String command) {
        String refusal = refusal(inv, file, command, allowLocal);
        if (refusal != null) throw new GpuctlException(ExitCode.USAGE, refusal);
    }

    /** Why {@code command} is refused, or null when it may run. */
    static String refusal(Inventory inv, Path file, String command, boolean allowed) {
        List<Node> local = inv.nodes().stream().filter(Node::isLocal).toList();
        if (local.isEmpty() || allowed) return null;
        Node n = local.get(0);
        return file + ": node " + n.name() + " has connection: local, so `gpuctl " + command + "` would run its root steps on THIS"
            + " machine (" + BootstrapCommand.localHostName() + ") and reconfigure it. Nothing was changed. If this machine is"
            + " meant to be " + n.name() + ", run it again with --allow-local; otherwise give " + n.name()
            + " an address that gpuctl reaches over SSH.";
    }
}
