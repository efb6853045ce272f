package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gpuctl.kube.EtcdCluster;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** remove-node's refusal from what the other masters answered. */
class EtcdMembersTest {
    static EtcdCluster.View view(boolean m2Healthy) {
        String ms = "{\"header\":{},\"members\":[{\"ID\":1,\"name\":\"m1\",\"clientURLs\":[\"https://10.0.0.11:2379\"]},"
            + "{\"ID\":2,\"name\":\"m2\",\"clientURLs\":[\"https://10.0.0.12:2379\"]},{\"ID\":3,\"name\":\"m3\",\"clientURLs\":[\"https://10.0.0.13:2379\"]}]}";
        String hs = "[{\"endpoint\":\"https://10.0.0.11:2379\",\"health\":true},{\"endpoint\":\"https://10.0.0.12:2379\",\"health\":" + m2Healthy
            + "},{\"endpoint\":\"https://10.0.0.13:2379\",\"health\":true}]";
        String st = "[{\"Endpoint\":\"https://10.0.0.11:2379\",\"Status\":{\"header\":{\"member_id\":1},\"leader\":1}}]";
        return EtcdCluster.parse(EtcdCluster.SECTION + " members\n" + ms + "\n" + EtcdCluster.SECTION + " status\n" + st + "\n"
            + EtcdCluster.SECTION + " health\n" + hs + "\n");
    }

    @Test void aMasterThatCannotBeReachedIsDownWithTheNumbersEtcdGives() {
        var s = new EtcdMembers.Survey(Optional.of(view(false)), "m1", List.of("m2 (not reachable: connect timed out)"));
        assertEquals(Optional.of("another master is down: m2 (not reachable: connect timed out); etcd as m1 sees it: 2 of 3 members"
            + " healthy (quorum 2); leader m1; down: m2 (2); a master is removed only while every other master is up"), EtcdMembers.refusal(s, "m3"));
    }

    @Test void allUpMayRemoveNoAnswerMayNot() {
        assertEquals(Optional.empty(), EtcdMembers.refusal(new EtcdMembers.Survey(Optional.of(view(true)), "m1", List.of()), "m3"));
        assertEquals(Optional.of("no other master answered for etcd: m1 (not reachable: refused), m2 (its etcdctl: Error: context deadline exceeded)"),
            EtcdMembers.refusal(new EtcdMembers.Survey(Optional.empty(), "", List.of("m1 (not reachable: refused)",
                "m2 (its etcdctl: Error: context deadline exceeded)")), "m3"));
    }
}
