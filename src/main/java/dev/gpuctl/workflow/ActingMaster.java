package dev.gpuctl.workflow;

import dev.gpuctl.inventory.Inventory;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Which master a command that needs one healthy master's kubectl and admin.conf runs on (kubeconfig, join-token, gpus,
 * job, queue, usage, drain, uncordon, repair): the masters are asked in inventory order and the first that answers
 * with its admin.conf is used, so that such a command works while another master is down. A master that is not
 * connected or has no admin.conf (a blank master whose disk was lost) is passed over and named. The command's session
 * then runs on {@link Inventory#actingFirst} of the chosen master: its kubectl work, and the lock of a command that
 * changes anything, are that master's. With one master nothing is chosen: it is the master, as before.
 */
public final class ActingMaster {
    private ActingMaster() {}

    /** What asking one master came to. */
    public enum State {
        /** connected, admin.conf there */
        READY,
        /** connected, no admin.conf (no cluster yet, or a blank master) */
        NO_CLUSTER,
        /** not connected */
        UNREACHABLE,
        /** connected, but the question failed */
        FAILED
    }

    /** One master asked: its name, what came of it and why (for people). */
    public record Attempt(String master, State state, String why) {}

    /** Why no master can act. */
    public enum Refusal {
        /** the first master has no admin.conf and no other has one either: no cluster yet */
        NO_CLUSTER,
        /** no master could be connected to */
        UNREACHABLE,
        /** the rest */
        FAILED
    }

    /**
     * The choice: the master to use and the ones passed over (one line each, for the progress stream), or the refusal
     * and every master's line.
     */
    public record Choice(Optional<String> master, List<String> passedOver, Optional<Refusal> refusal) {
        public Choice {
            passedOver = List.copyOf(passedOver);
        }
    }

    /**
     * The first {@link State#READY} master of {@code attempts} (in inventory order; asking may stop at the first ready
     * one), the others before it named; else why none: {@link Refusal#NO_CLUSTER} when the first master answered without
     * admin.conf and none had one, {@link Refusal#UNREACHABLE} when none was connected, else {@link Refusal#FAILED}.
     */
    public static Choice choose(List<Attempt> attempts) {
        if (attempts.isEmpty()) throw new IllegalArgumentException("no master asked");
        List<String> lines = new ArrayList<>();
        for (Attempt a : attempts) {
            if (a.state() == State.READY) return new Choice(Optional.of(a.master()), lines, Optional.empty());
            lines.add(a.master() + ": " + a.why());
        }
        Refusal why;
        if (attempts.get(0).state() == State.NO_CLUSTER && attempts.stream().noneMatch(a -> a.state() == State.FAILED)) {
            why = Refusal.NO_CLUSTER;
        } else if (attempts.stream().allMatch(a -> a.state() == State.UNREACHABLE)) {
            why = Refusal.UNREACHABLE;
        } else {
            why = Refusal.FAILED;
        }
        return new Choice(Optional.empty(), lines, Optional.of(why));
    }

    /** The progress line for a master passed over: "m1: unreachable (...); using m2". */
    public static String passedOverNote(Choice c) {
        return c.passedOver().isEmpty() || c.master().isEmpty() ? ""
            : String.join("; ", c.passedOver()) + "; using " + c.master().get() + " (the next master that answers with its admin.conf)";
    }
}
