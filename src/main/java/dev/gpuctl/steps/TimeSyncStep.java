package dev.gpuctl.steps;

import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Step 1, time sync. The guide installs {@code ntp}, a transitional package on Debian 12 and Ubuntu 24.04;
 * gpuctl installs chrony, points it at the inventory's timeServers (else the distribution's pool), and
 * proves synchronisation by asking chrony (then systemd's {@code timedatectl}), waiting a bounded time.
 */
public final class TimeSyncStep implements Step {
    static final String SOURCES = "/etc/chrony/sources.d/gpuctl.sources";
    static final Duration SYNC_WAIT = Duration.ofSeconds(90);

    @Override public String id() { return "time"; }
    @Override public String title() { return "time sync (chrony)"; }
    @Override public boolean runsOn(HostContext ctx) { return true; }

    /** chrony's sources file for the inventory's servers; empty when the distribution's pool is used. */
    static Optional<String> sourcesFile(List<String> servers) {
        if (servers.isEmpty()) return Optional.empty();
        StringBuilder sb = new StringBuilder("# Written by gpuctl from the inventory's cluster.timeServers.\n");
        for (String s : servers) sb.append("server ").append(s).append(" iburst\n");
        return Optional.of(sb.toString());
    }

    @Override public List<Probe> check(HostContext ctx) {
        List<Probe> probes = new ArrayList<>();
        probes.add(Sh.packagesInstalled(List.of("chrony")));
        sourcesFile(ctx.cluster().timeServers()).ifPresent(content ->
            probes.add(Probe.of("chrony uses the inventory's time servers (" + SOURCES + ")",
                "cat " + SOURCES + " 2>/dev/null || true",
                r -> r.stdout().equals(content) ? Optional.empty()
                    : Optional.of(SOURCES + " does not list " + String.join(", ", ctx.cluster().timeServers())))));
        probes.add(Sh.unitsRunning(List.of("chrony")));
        probes.add(synchronized_());
        return probes;
    }

    /**
     * Synchronised when chrony itself has selected a source and reports a normal leap status, or when systemd
     * says so (NTPSynchronized=yes: the kernel's clock is disciplined). chrony is asked first: it is what gpuctl
     * installs, and it answers at once. systemd is asked only when chrony does not prove it, and for at most
     * 5 s: timedatectl goes through D-Bus to systemd-timedated, whose first start can hang a caller for 25 s.
     */
    static Probe synchronized_() {
        return Probe.of("clock synchronised (chrony's selected source, or timedatectl NTPSynchronized)",
            "l=$(chronyc -n tracking 2>/dev/null | grep '^Leap status'); n=$(chronyc -n sources 2>/dev/null | grep -c '^[\\^=]\\*'); "
                + "[ \"${l##* }\" = Normal ] && [ \"${n:-0}\" -gt 0 ] || timeout 5 timedatectl show -p NTPSynchronized --value 2>/dev/null; "
                + "echo \"$l\"; echo \"${n:-0}\"",
            r -> synchronisationProblem(r.stdout()));
    }

    static Optional<String> synchronisationProblem(String out) {
        List<String> lines = out.lines().map(String::strip).toList();
        if (lines.contains("yes")) return Optional.empty();
        boolean leapNormal = lines.stream().anyMatch(l -> l.matches("Leap status\\s*:\\s*Normal"));
        boolean selected = !lines.isEmpty() && lines.get(lines.size() - 1).matches("[1-9][0-9]*");
        if (leapNormal && selected) return Optional.empty();
        return Optional.of("not synchronised yet (NTPSynchronized=no; chrony: "
            + (leapNormal ? "" : "leap status not normal, ") + (selected ? "a source selected" : "no source selected") + ")"
            + " — check that the time servers answer: chronyc -n sources");
    }

    @Override public List<Op> apply(HostContext ctx) {
        List<Op> ops = new ArrayList<>();
        ops.add(Sh.aptInstall("install chrony", List.of("chrony")));
        sourcesFile(ctx.cluster().timeServers()).ifPresent(content -> {
            ops.add(Op.WriteFile.of("chrony sources from the inventory", SOURCES, content, "0644"));
            ops.add(Op.Run.of("reload chrony's sources", "chronyc reload sources >/dev/null").onlyIfChanged(SOURCES));
        });
        ops.add(Sh.enableNow(List.of("chrony")));
        return ops;
    }

    @Override public List<Probe> verify(HostContext ctx) {
        List<Probe> probes = new ArrayList<>(check(ctx));
        // chrony's first sync takes seconds (iburst: four polls 2 s apart); the host's other preparation does not
        // need it (preflight held the clock within 30 s), so the proof is waited for at the end of the phase
        probes.set(probes.size() - 1, synchronized_().waitingUpTo(SYNC_WAIT).provenAtPhaseEnd());
        return probes;
    }
}
