package dev.gpuctl.steps;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpuctl.kube.KueueObjects;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Team;
import java.util.List;
import java.util.Map;

/** The inventory's teams as Kueue objects ({@link KueueObjects}): one flavor per GPU model, a queue per team, one cohort. */
public final class TeamQueues {
    private TeamQueues() {}

    /** The cohort every team's ClusterQueue is in: the cluster's name. */
    public static String cohort(Inventory inv) { return inv.cluster().name(); }

    /** A flavor per GPU model; when no node names its model, the one flavor {@link Team#DEFAULT_MODEL} without node labels. */
    public static List<KueueObjects.Flavor> flavors(Inventory inv) {
        if (!inv.namesGpuModels()) return List.of(new KueueObjects.Flavor(Team.DEFAULT_MODEL, Map.of()));
        return inv.gpuModels().stream().map(m -> new KueueObjects.Flavor(m, Map.of(KueueObjects.MODEL_LABEL, m))).toList();
    }

    public static KueueObjects.Queue queue(Team t) {
        return new KueueObjects.Queue(t.name(), t.namespace(), t.gpus(), t.borrowingLimit());
    }

    public static List<ObjectNode> objects(Inventory inv) {
        if (inv.teams().isEmpty()) return List.of();
        return KueueObjects.all(cohort(inv), flavors(inv), inv.teams().stream().map(TeamQueues::queue).toList());
    }
}
