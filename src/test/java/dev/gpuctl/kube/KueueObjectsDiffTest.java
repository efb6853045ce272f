package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gpuctl.text.Json;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** verify's judgement of a team's ClusterQueue against the inventory's queue. */
class KueueObjectsDiffTest {
    static final List<KueueObjects.Flavor> FLAVORS = List.of(new KueueObjects.Flavor("gpu", Map.of()));

    @Test void theQueueGpuctlMakesMatchesAnEditedOneSaysWhat() throws Exception {
        KueueObjects.Queue a = new KueueObjects.Queue("a", "team-a", Map.of("gpu", 2), OptionalInt.empty());
        var made = Json.MAPPER.readTree(Json.MAPPER.writeValueAsString(KueueObjects.clusterQueue(a, "lab", FLAVORS)));
        assertEquals(List.of(), KueueObjects.differences(made, a, "lab", FLAVORS));
        KueueObjects.Queue inventory = new KueueObjects.Queue("a", "team-a", Map.of("gpu", 3), OptionalInt.of(1));
        assertEquals(List.of("cohort is 'lab', the inventory's is 'lab2'", "nominalQuota of gpu is 2, the inventory's is 3",
            "borrowingLimit of gpu is none, the inventory's is 1"), KueueObjects.differences(made, inventory, "lab2", FLAVORS));
        // as the API server prints quantities: strings
        var live = Json.MAPPER.readTree(Json.MAPPER.writeValueAsString(made).replace("\"nominalQuota\":2", "\"nominalQuota\":\"2\""));
        assertEquals(List.of(), KueueObjects.differences(live, a, "lab", FLAVORS));
    }
}
