package dev.gpuctl.steps;

import dev.gpuctl.hostfiles.Fstab;
import dev.gpuctl.hostfiles.HostJournal;
import dev.gpuctl.hostfiles.ProcSwaps;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Optional;

/**
 * Step 2, swap off now and at every boot. The guide's {@code sed '/ swap /'} misses fstab lines written with
 * tabs (Ubuntu's /swap.img line) and ignores swap units and zram, which bring swap back at a reboot.
 */
public final class SwapStep implements Step {
    static final String ZRAM_CONF = "/etc/systemd/zram-generator.conf";
    /** A zram-generator config that defines no device: the generator then makes none. */
    static final String ZRAM_CONTENT = "# Written by gpuctl: kubelet needs swap off; no zram devices.\n";
    static final String ZRAM_GENERATOR =
        "{ [ -e /usr/lib/systemd/system-generators/zram-generator ] || [ -e /lib/systemd/system-generators/zram-generator ]; }";

    @Override public String id() { return "swap"; }
    @Override public String title() { return "swap off, now and at boot"; }
    @Override public boolean runsOn(HostContext ctx) { return true; }

    /** No swap is active now: the check, and what skips swapoff. */
    static Probe swapOff() {
        return Probe.of("no active swap (/proc/swaps)", "cat /proc/swaps", r -> {
            var active = ProcSwaps.parse(r.stdout());
            return active.isEmpty() ? Optional.empty()
                : Optional.of("swap is on: " + active.stream().map(s -> s.filename()).toList());
        });
    }

    /** No swap unit starts at boot: the check, and what skips masking them. */
    static Probe noSwapUnit() {
        return Probe.of("no swap unit enabled (systemctl list-unit-files '*.swap')", LIST_SWAP_UNITS + " 2>/dev/null || true", r -> {
            var on = enabledSwapUnits(r.stdout());
            return on.isEmpty() ? Optional.empty() : Optional.of("swap units that start at boot: " + on);
        });
    }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(
            swapOff(),
            Probe.of("no active swap entry in /etc/fstab", "cat /etc/fstab", r -> {
                var lines = Fstab.activeSwapEntries(r.stdout());
                return lines.isEmpty() ? Optional.empty()
                    : Optional.of("active swap lines: " + lines.stream().map(l -> l.replace('\t', ' ')).toList());
            }),
            noSwapUnit(),
            Probe.of("zram swap disabled (" + ZRAM_CONF + ")",
                "if " + ZRAM_GENERATOR + "; then if [ -e " + ZRAM_CONF + " ]; then grep -c '^[[:space:]]*\\[zram' "
                    + ZRAM_CONF + " || true; else echo missing; fi; else echo no-generator; fi",
                r -> switch (r.stdout().strip()) {
                    case "no-generator", "0" -> Optional.empty();
                    case "missing" -> Optional.of("zram-generator is installed and " + ZRAM_CONF + " does not disable it");
                    default -> Optional.of(ZRAM_CONF + " defines zram devices");
                }));
    }

    /**
     * Every swap unit file with its state. The pattern is matched by systemd itself, which then works out the
     * state of the swap units only; {@code --type=swap} filters in systemctl after systemd has worked out the
     * state of every unit file on the host (0.4 s on an idle host, seconds on a busy one, for the same answer).
     */
    static final String LIST_SWAP_UNITS = "systemctl list-unit-files --no-legend --plain '*.swap'";

    /** Swap units whose state makes them start at boot: enabled, enabled-runtime, or generated from fstab. */
    static List<String> enabledSwapUnits(String listUnitFiles) {
        return listUnitFiles.lines()
            .map(l -> l.trim().split("\\s+"))
            .filter(f -> f.length >= 2 && f[0].endsWith(".swap"))
            .filter(f -> f[1].equals("enabled") || f[1].equals("enabled-runtime") || f[1].equals("generated"))
            .map(f -> f[0])
            .toList();
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(
            Op.Run.of("turn swap off now", "swapoff -a")
                .journalling(new Op.Journal("the active swap areas (/proc/swaps)", HostJournal.BEFORE_SWAPOFF)).unlessRight(swapOff()),
            new Op.EditFile("comment out swap in /etc/fstab", "/etc/fstab",
                "comment out every active swap entry (any whitespace, files and partitions)",
                Fstab::commentOutSwap, "0644"),
            Op.Run.of("reload systemd's fstab units", "systemctl daemon-reload").onlyIfChanged("/etc/fstab"),
            Op.Run.of("mask swap units that would start at boot",
                "units=$(" + LIST_SWAP_UNITS + ") || exit 1; "
                    + "printf '%s\\n' \"$units\" | awk '$2==\"enabled\"||$2==\"enabled-runtime\"||$2==\"generated\"{print $1\" \"$2}' "
                    + "| while read -r u s; do gj unit-masked \"$(hx \"$u\")\" \"$(hx \"$s\")\" && systemctl mask --now -- \"$u\" || exit 1; done")
                .journalling(new Op.Journal("each unit as it is masked, with its state (gj, in the loop)", HostJournal.SHELL_FUNCTIONS))
                .unlessRight(noSwapUnit()),
            Op.WriteFile.of("disable zram swap (" + ZRAM_CONF + ")", ZRAM_CONF, ZRAM_CONTENT, "0644")
                .unless("! " + ZRAM_GENERATOR + " || { [ -e " + ZRAM_CONF + " ] && ! grep -q '^[[:space:]]*\\[zram' " + ZRAM_CONF + "; }"),
            Op.Run.of("turn zram swap off now",
                    "systemctl daemon-reload && for d in /dev/zram*; do [ -b \"$d\" ] && swapoff \"$d\" 2>/dev/null; done; true")
                .onlyIfChanged(ZRAM_CONF));
    }
}
