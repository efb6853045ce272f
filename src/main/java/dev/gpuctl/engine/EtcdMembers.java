package dev.gpuctl.engine;

import dev.gpuctl.kube.EtcdCluster;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.Remotes;
import dev.gpuctl.remote.SshOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * remove-node's question before it changes anything, when a master of several leaves: every other master is asked for
 * the etcd cluster as its etcdctl sees it ({@link EtcdCluster#query}); a master that cannot be reached counts as down.
 */
public final class EtcdMembers {
    private EtcdMembers() {}

    static final Duration QUERY_TIMEOUT = Duration.ofSeconds(60);

    /** What the other masters answered: one etcd view (the first that came), and the masters that did not answer. */
    public record Survey(Optional<EtcdCluster.View> view, String askedOn, List<String> unreachable) {
        public Survey { unreachable = List.copyOf(unreachable); }
    }

    /** Asks each master but {@code leaving} for the etcd cluster. */
    public static Survey survey(Inventory inv, String leaving, SshOptions ssh) {
        Optional<EtcdCluster.View> view = Optional.empty();
        String on = "";
        List<String> unreachable = new ArrayList<>();
        String query = EtcdCluster.query(inv.cluster().runtime().criSocket());
        for (Node m : inv.masters()) {
            if (m.name().equals(leaving)) continue;
            try (Remote r = Remotes.open(m, ssh)) {
                ExecResult res = r.exec(query, QUERY_TIMEOUT);
                EtcdCluster.View v = EtcdCluster.parse(res.stdout());
                if (!v.error().isEmpty()) {
                    unreachable.add(m.name() + " (its etcdctl: " + v.error() + ")");
                } else if (view.isEmpty()) {
                    view = Optional.of(v);
                    on = m.name();
                }
            } catch (Exception e) {
                unreachable.add(m.name() + " (not reachable: " + firstLine(e.getMessage()) + ")");
            }
        }
        return new Survey(view, on, unreachable);
    }

    /** Why {@code leaving} must not be removed now, with the numbers; empty when it may. Pure. */
    public static Optional<String> refusal(Survey s, String leaving) {
        if (s.view().isEmpty()) {
            return Optional.of("no other master answered for etcd: " + String.join(", ", s.unreachable()));
        }
        EtcdCluster.View v = s.view().get();
        if (!s.unreachable().isEmpty()) {
            return Optional.of("another master is down: " + String.join(", ", s.unreachable()) + "; etcd as " + s.askedOn() + " sees it: "
                + v.summary() + "; a master is removed only while every other master is up");
        }
        return v.removalRefusal(leaving);
    }

    private static String firstLine(String s) {
        if (s == null) return "no message";
        return s.strip().lines().findFirst().orElse("");
    }
}
