package dev.gpuctl.step;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.hostfiles.HostJournal;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/** Small helpers for writing shell commands safely. */
public final class Sh {
    private Sh() {}

    static final String APT_ENV = "DEBIAN_FRONTEND=noninteractive";

    /** apt-get install of packages not yet installed; apt's lists are refreshed first, once per run ({@link #aptRefresh}). */
    public static Op.Run aptInstall(String what, Collection<String> packages) {
        return aptInstall(what, packages, "");
    }

    /** {@link #aptInstall(String, Collection)} with more apt-get install options ({@code extra}: shell words, or ""). */
    public static Op.Run aptInstall(String what, Collection<String> packages, String extra) {
        return Op.Run.of(what, "export " + APT_ENV + "; " + aptRefresh()
                + "apt-get install -y -q --no-install-recommends " + (extra.isEmpty() ? "" : extra + " ") + ShellWords.words(packages))
            .unless(allInstalled(packages));
    }

    /**
     * Where a host records the run that last refreshed its apt lists: in /run itself (root's, 0755; a tmpfs, gone at
     * reboot), so no other user can make or replace it, and no directory of gpuctl's is needed for it.
     */
    public static final String APT_REFRESHED = "/run/gpuctl-apt-refreshed";

    /**
     * Shell (ending in "; ") that refreshes apt's package lists unless this run ({@link Facts#RUN_ID}) refreshed them
     * on this host already and nothing under /etc/apt but the pins changed since: a repository, key or proxy setting
     * written after the refresh makes the next install refresh again; a pin (preferences.d) is read at install
     * time and does not. Ansible's {@code cache_valid_time} does the same with a clock; here a new run always
     * refreshes once, so a re-run after a failed install never reuses lists it failed with. A failed refresh ends
     * the command with apt's status.
     */
    public static String aptRefresh() {
        return aptRefresh(APT_REFRESHED, "/etc/apt", Facts.ref(Facts.RUN_ID));
    }

    /** {@link #aptRefresh()} with its stamp, apt's configuration directory and the run's id given (tests: a temp dir). */
    static String aptRefresh(String stamp, String aptDir, String run) {
        String s = ShellWords.quote(stamp);
        return "if [ \"$(cat " + s + " 2>/dev/null)\" != " + run + " ] "
            + "|| [ -n \"$(find " + ShellWords.quote(aptDir) + " -newer " + s + " ! -path " + ShellWords.quote(aptDir + "/preferences.d*")
            + " 2>/dev/null | head -n 1)\" ]; then apt-get update -q || exit; echo " + run + " > " + s + "; fi; ";
    }

    /** Exit 0 when every package is installed. */
    public static String allInstalled(Collection<String> packages) {
        return "test \"$(dpkg-query -W -f='${db:Status-Status}\\n' " + ShellWords.words(packages)
            + " 2>/dev/null | grep -c '^installed$')\" = " + packages.size();
    }

    /** Probe: every package installed. */
    public static Probe packagesInstalled(Collection<String> packages) {
        return Probe.of("packages installed: " + String.join(", ", packages),
            "dpkg-query -W -f='${Package} ${db:Status-Status}\\n' " + ShellWords.words(packages) + " 2>&1 || true",
            r -> {
                var missing = packages.stream()
                    .filter(p -> !r.stdout().lines().anyMatch(l -> l.equals(p + " installed")))
                    .toList();
                return missing.isEmpty() ? Optional.empty()
                    : Optional.of("not installed: " + String.join(", ", missing));
            });
    }

    /** Probe: systemd units enabled and active. */
    public static Probe unitsRunning(Collection<String> units) {
        String list = ShellWords.words(units);
        return Probe.of("enabled and active: " + String.join(", ", units),
            "for u in " + list + "; do echo \"$u $(systemctl is-enabled \"$u\" 2>/dev/null) $(systemctl is-active \"$u\" 2>/dev/null)\"; done",
            r -> {
                var bad = r.stdout().lines()
                    .filter(l -> !l.matches("\\S+ (enabled|static|indirect|generated|alias) active"))
                    .toList();
                return bad.isEmpty() ? Optional.empty()
                    : Optional.of("not enabled+active: " + String.join("; ", bad));
            }).waitingWhileStarting(UNIT_START_WAIT, r -> stillStarting(r.stdout()));
    }

    /** How long a unit that is still starting (after a boot or a restart) is waited for before it is judged. */
    public static final Duration UNIT_START_WAIT = Duration.ofMinutes(2);

    /**
     * True when every wrong line of {@link #unitsRunning}'s answer ("unit enabled-state active-state") is a unit on
     * its way up: enabled and activating (starting, or waiting to be restarted: auto-restart) or reloading. A unit
     * that failed, is inactive, masked or missing is a definite answer.
     */
    public static boolean stillStarting(String answer) {
        var bad = answer.lines().filter(l -> !l.matches("\\S+ (enabled|static|indirect|generated|alias) active")).toList();
        return !bad.isEmpty() && bad.stream().allMatch(l -> l.matches("\\S+ (enabled|static|indirect|generated|alias) (activating|reloading)"));
    }

    /** Journal: each unit not enabled now, with what {@code systemctl is-enabled} says (restore puts that back). */
    public static Op.Journal journalEnable(Collection<String> units) {
        return new Op.Journal("units not enabled yet: " + String.join(", ", units) + " (with their state)", HostJournal.beforeEnable(List.copyOf(units)));
    }

    /** Journal: each package of {@code packagesWord} (shell words) not held now. */
    public static Op.Journal journalHold(String packagesWord) {
        return new Op.Journal("packages not held yet: " + packagesWord, HostJournal.beforeHold(packagesWord));
    }

    /** Journal: the files at {@code paths}, each backed up once when it exists (restore puts it back, or removes it). */
    public static Op.Journal journalWrite(String... paths) {
        StringBuilder shell = new StringBuilder();
        for (String p : paths) shell.append(HostJournal.beforeWrite(p, p)).append("; ");
        return new Op.Journal(String.join(", ", paths) + " (each backed up once when it exists)", shell.toString());
    }

    /** Run: enable and start units unless they are already enabled and active; each unit not enabled before is journalled. */
    public static Op.Run enableNow(Collection<String> units) {
        String list = ShellWords.words(units);
        return Op.Run.of("enable and start " + String.join(", ", units), "systemctl enable --now " + list)
            .journalling(journalEnable(units))
            .unless("for u in " + list + "; do systemctl is-enabled -q \"$u\" && systemctl is-active -q \"$u\" || exit 1; done");
    }
}
