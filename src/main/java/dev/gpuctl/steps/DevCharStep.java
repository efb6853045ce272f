package dev.gpuctl.steps;

import dev.gpuctl.gpu.DevChar;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;

/**
 * GPU containers keep their GPUs across {@code systemctl daemon-reload}, on GPU nodes: NVIDIA's documented fix for
 * "Failed to initialize NVML: Unknown Error" ({@link DevChar}): the {@code /dev/char} link of every NVIDIA device node
 * ({@code nvidia-ctk system create-dev-char-symlinks --create-all}), and NVIDIA's udev rule that makes them again each
 * time the driver binds (every boot). It asks the host, not a marker: the rule file's content and each device's link.
 */
public final class DevCharStep implements Step {
    public static final String ID = "dev-char-links";

    @Override public String id() { return ID; }
    @Override public String title() { return "NVIDIA /dev/char links and their udev rule (GPUs kept across daemon-reload)"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.gpu(); }

    /** The rule's probe (its file holds NVIDIA's rule). */
    static Probe rule() {
        return KernelStep.fileHolds(DevChar.RULE_FILE, DevChar.RULE, "NVIDIA's udev rule making the /dev/char links when the driver binds");
    }

    /** The links' probe: every NVIDIA device node has its /dev/char/MAJOR:MINOR link. */
    static Probe links() {
        return Probe.of("every NVIDIA device node linked from /dev/char (ls -l /dev/nvidia* /dev/char)", DevChar.LISTING,
            r -> DevChar.linksProblem(r.stdout()));
    }

    @Override public List<Probe> check(HostContext ctx) { return List.of(rule(), links()); }

    /** The rule, then the links made now (the driver is loaded: preflight's nvidia-smi loaded it). */
    static List<Op> ops() {
        return List.of(Op.WriteFile.of("NVIDIA's udev rule " + DevChar.RULE_FILE, DevChar.RULE_FILE, DevChar.RULE, "0644"),
            Op.Run.of("make the /dev/char links now (" + DevChar.CREATE + ")", DevChar.CREATE + " 2>&1").unlessRight(links()));
    }

    @Override public List<Op> apply(HostContext ctx) { return ops(); }
}
