package dev.gpuctl.steps;

import dev.gpuctl.hostfiles.HostJournal;
import dev.gpuctl.hostfiles.HostRestore;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code --restore-host}: a host's preparation put back as it was before gpuctl, from its change journal
 * ({@value HostJournal#PATH}) and the {@code .gpuctl-orig} backups ({@link HostRestore}): files byte for byte with
 * their owner and mode, or removed when gpuctl created them; units unmasked or disabled as they were; package holds
 * released; swap on again; the journal archived last. Runs after the host was reset. A backup that is a link or not
 * root's is named and not followed (the step fails, the journal is kept); a second run finds nothing to do. Never
 * removes a package, nor touches a file gpuctl did not write.
 */
public final class RestoreHostStep implements Step {
    private final List<String> hosts;

    public RestoreHostStep(List<String> hosts) { this.hosts = List.copyOf(hosts); }

    @Override public String id() { return "restore-host"; }
    @Override public String title() { return "host preparation put back from the change journal and backups"; }
    @Override public boolean runsOn(HostContext ctx) { return hosts.contains(ctx.node().name()); }

    /** The fact that holds a host's restore script, learned right before it runs. */
    static String scriptFact(HostContext ctx) { return "restore." + ctx.node().name() + ".script"; }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.of("nothing gpuctl changed is left to put back (" + HostJournal.PATH + ", *" + HostJournal.BACKUP_SUFFIX + ")",
            HostRestore.PROBE, r -> {
                if (!r.ok()) return Optional.of("could not read the journal (exit " + r.exit() + "): " + r.tail(2));
                HostRestore.Plan plan;
                try {
                    plan = HostRestore.plan(HostRestore.answer(r.stdout()));
                } catch (IllegalArgumentException e) {
                    return Optional.of("could not read the answer: " + e.getMessage());
                }
                return plan.nothingToDo() ? Optional.empty() : Optional.of("would " + plan.describe());
            }));
    }

    @Override public List<Op> apply(HostContext ctx) {
        String fact = scriptFact(ctx);
        return List.of(
            new Op.Capture("read the change journal and the backups", HostRestore.PROBE,
                out -> Map.of(fact, HostRestore.plan(HostRestore.answer(out)).script()), false),
            Op.Run.of("put the host's preparation back, in the reverse order of the changes; archive the journal", Facts.ref(fact)));
    }
}
