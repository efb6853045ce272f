package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class EtcdClusterTest {
    // etcd 3.6 `member list -w json`: IDs as unsigned decimals (the last one above 2^63), isLearner only when true
    static final String MEMBERS = "{\"header\":{\"cluster_id\":14841639068965178418,\"member_id\":5658308198390522359,\"raft_term\":2},"
        + "\"members\":[{\"ID\":16358384081574086867,\"name\":\"m3\",\"peerURLs\":[\"https://10.0.0.13:2380\"],\"clientURLs\":[\"https://10.0.0.13:2379\"]},"
        + "{\"ID\":5658308198390522359,\"name\":\"m1\",\"peerURLs\":[\"https://10.0.0.11:2380\"],\"clientURLs\":[\"https://10.0.0.11:2379\"]},"
        + "{\"ID\":8041765186699884391,\"name\":\"m2\",\"peerURLs\":[\"https://10.0.0.12:2380\"],\"clientURLs\":[\"https://10.0.0.12:2379\"]}]}";
    static final String STATUS = "[{\"Endpoint\":\"https://10.0.0.11:2379\",\"Status\":{\"header\":{\"cluster_id\":14841639068965178418,"
        + "\"member_id\":5658308198390522359,\"revision\":120,\"raft_term\":2},\"version\":\"3.6.5\",\"dbSize\":20480,"
        + "\"leader\":5658308198390522359,\"raftIndex\":130,\"raftTerm\":2,\"raftAppliedIndex\":130,\"dbSizeInUse\":16384,"
        + "\"storageVersion\":\"3.6.0\"}}]";
    static String health(boolean m1, boolean m2, boolean m3) {
        return "[" + h("10.0.0.11", m1) + "," + h("10.0.0.12", m2) + "," + h("10.0.0.13", m3) + "]";
    }
    static String h(String ip, boolean ok) {
        return "{\"endpoint\":\"https://" + ip + ":2379\",\"health\":" + ok + ",\"took\":\"2.1ms\""
            + (ok ? "" : ",\"error\":\"context deadline exceeded\"") + "}";
    }
    static String answer(String members, String status, String health) {
        return EtcdCluster.SECTION + " members\n" + members + "\n" + EtcdCluster.SECTION + " status\n" + status + "\n"
            + EtcdCluster.SECTION + " health\n" + health + "\n";
    }

    @Test void memberListIsSortedByIdInHexAsEtcdctlPrintsIt() {
        List<EtcdCluster.Member> ms = EtcdCluster.memberList(MEMBERS);
        assertEquals(List.of("4e865953d2bf61f7", "6f9a16d488597767", "e304a7a6d9a0c8d3"), ms.stream().map(EtcdCluster.Member::id).toList());
        assertEquals(List.of("m1", "m2", "m3"), ms.stream().map(EtcdCluster.Member::name).toList());
        assertEquals("https://10.0.0.11:2379", ms.get(0).clientUrl());
        assertFalse(ms.get(0).learner());
        String learner = "{\"header\":{},\"members\":[{\"ID\":1,\"name\":\"\",\"peerURLs\":[\"https://10.0.0.14:2380\"],\"isLearner\":true}]}";
        EtcdCluster.Member m = EtcdCluster.memberList(learner).get(0);
        assertTrue(m.learner());
        assertEquals("", m.clientUrl());
        assertThrows(IllegalArgumentException.class, () -> EtcdCluster.memberList("Error: context deadline exceeded"));
    }

    @Test void endpointStatusAndHealth() {
        EtcdCluster.EndpointStatus s = EtcdCluster.endpointStatus(STATUS).get(0);
        assertEquals(new EtcdCluster.EndpointStatus("https://10.0.0.11:2379", "4e865953d2bf61f7", "4e865953d2bf61f7", List.of()), s);
        String noLeader = "[{\"Endpoint\":\"https://10.0.0.11:2379\",\"Status\":{\"header\":{\"member_id\":1},\"leader\":0,"
            + "\"errors\":[\"etcdserver: no leader\"]}}]";
        assertEquals(List.of("etcdserver: no leader"), EtcdCluster.endpointStatus(noLeader).get(0).errors());
        assertEquals("0", EtcdCluster.endpointStatus(noLeader).get(0).leaderId());
        List<EtcdCluster.Health> hs = EtcdCluster.endpointHealth(health(true, true, false));
        assertEquals(new EtcdCluster.Health("https://10.0.0.13:2379", false, "context deadline exceeded"), hs.get(2));
        assertTrue(hs.get(0).healthy());
    }

    @Test void aHealthyClusterNamesItsLeaderAndQuorum() {
        EtcdCluster.View v = EtcdCluster.parse(answer(MEMBERS, STATUS, health(true, true, true)));
        assertEquals("", v.error());
        assertEquals(2, v.quorum());
        assertEquals("3 of 3 members healthy (quorum 2); leader m1", v.summary());
        assertEquals(Optional.empty(), v.quorumProblem());
        assertEquals("member m1 (id 4e865953d2bf61f7, https://10.0.0.11:2379), leader, healthy", v.memberDetail("m1"));
        assertEquals("member m2 (id 6f9a16d488597767, https://10.0.0.12:2379), follower, healthy", v.memberDetail("m2"));
        assertEquals(Optional.empty(), v.memberProblem("m2"));
        assertEquals(Optional.of("no etcd member named m4 (members: m1 (4e865953d2bf61f7), m2 (6f9a16d488597767), m3 (e304a7a6d9a0c8d3))"),
            v.memberProblem("m4"));
    }

    @Test void oneMemberDownKeepsTheQuorumAndIsNamed() {
        EtcdCluster.View v = EtcdCluster.parse(answer(MEMBERS, STATUS, health(true, true, false)));
        assertTrue(v.hasQuorum());
        assertEquals(Optional.empty(), v.quorumProblem());
        assertEquals("2 of 3 members healthy (quorum 2); leader m1; down: m3 (e304a7a6d9a0c8d3)", v.summary());
        assertEquals(Optional.of("member m3 (e304a7a6d9a0c8d3) is unhealthy: context deadline exceeded"), v.memberProblem("m3"));
    }

    @Test void twoMembersDownLoseTheQuorum() {
        EtcdCluster.View v = EtcdCluster.parse(answer(MEMBERS, "", health(true, false, false)));
        assertFalse(v.hasQuorum());
        assertEquals(Optional.of("etcd has 1 of 3 members healthy, needs 2: quorum lost, the API servers cannot write; down:"
            + " m2 (6f9a16d488597767), m3 (e304a7a6d9a0c8d3)"), v.quorumProblem());
        assertTrue(v.summary().contains("; leader none;"), v.summary());
    }

    @Test void aFailedMemberListIsTheViewsError() {
        String warn = "{\"level\":\"warn\",\"ts\":\"2026-01-01T00:00:00Z\",\"msg\":\"retrying of unary invoker failed\"}";
        EtcdCluster.View v = EtcdCluster.parse(answer(warn + "\nError: context deadline exceeded", "", ""));
        assertEquals("Error: context deadline exceeded", v.error());
        assertFalse(v.hasQuorum());
        assertEquals(Optional.of("etcdctl failed: Error: context deadline exceeded"), v.quorumProblem());
        // client warnings before the answer are skipped
        EtcdCluster.View ok = EtcdCluster.parse(answer(warn + "\n" + MEMBERS, STATUS, health(true, true, true)));
        assertEquals(3, ok.members().size());
    }

    @Test void quorumOfTheVotingMembers() {
        assertEquals(List.of(1, 2, 2, 3, 3), List.of(EtcdCluster.quorumOf(1), EtcdCluster.quorumOf(2), EtcdCluster.quorumOf(3),
            EtcdCluster.quorumOf(4), EtcdCluster.quorumOf(5)));
    }

    @Test void removalIsRefusedWhileAnotherMasterIsDown() {
        EtcdCluster.View v = EtcdCluster.parse(answer(MEMBERS, STATUS, health(true, false, true)));
        assertEquals(Optional.of("another master is down: m2 (6f9a16d488597767) (etcd: 2 of 3 members healthy, quorum 2); a master is"
            + " removed only while every other master is up"), v.removalRefusal("m3"));
    }

    @Test void removingAHealthyMemberOfThreeLeavesTwoOfTwo() {
        EtcdCluster.View v = EtcdCluster.parse(answer(MEMBERS, STATUS, health(true, true, true)));
        assertEquals(Optional.empty(), v.removalRefusal("m3"));
        assertEquals(Optional.empty(), v.removalRefusal("m9"), "a member already gone: nothing to refuse (a re-run)");
        // the down member itself may go: the other two stay a quorum
        EtcdCluster.View oneDown = EtcdCluster.parse(answer(MEMBERS, STATUS, health(true, true, false)));
        assertEquals(Optional.empty(), oneDown.removalRefusal("m3"));
    }

    @Test void removingFromTwoWouldLeaveOneOfOneButNotFromTwoWithOneDown() {
        String two = "{\"header\":{},\"members\":[{\"ID\":1,\"name\":\"m1\",\"clientURLs\":[\"https://10.0.0.11:2379\"]},"
            + "{\"ID\":2,\"name\":\"m2\",\"clientURLs\":[\"https://10.0.0.12:2379\"]}]}";
        String healthy = "[" + h("10.0.0.11", true) + "," + h("10.0.0.12", true) + "]";
        assertEquals(Optional.empty(), EtcdCluster.parse(answer(two, "", healthy)).removalRefusal("m2"));
        String one = "{\"header\":{},\"members\":[{\"ID\":1,\"name\":\"m1\",\"clientURLs\":[\"https://10.0.0.11:2379\"]}]}";
        assertEquals(Optional.of("m1 holds the only etcd member: removing it ends the cluster (use gpuctl reset)"),
            EtcdCluster.parse(answer(one, "", "[" + h("10.0.0.11", true) + "]")).removalRefusal("m1"));
    }

    @Test void removingAHealthyMemberWhereTheRestCannotKeepAQuorumIsRefusedWithTheNumbers() {
        // five members, two down: removing a healthy third leaves 2 healthy of 4, below their quorum of 3
        StringBuilder ms = new StringBuilder("{\"header\":{},\"members\":[");
        StringBuilder hs = new StringBuilder("[");
        for (int i = 1; i <= 5; i++) {
            ms.append(i > 1 ? "," : "").append("{\"ID\":").append(i).append(",\"name\":\"m").append(i)
                .append("\",\"clientURLs\":[\"https://10.0.0.1").append(i).append(":2379\"]}");
            hs.append(i > 1 ? "," : "").append(h("10.0.0.1" + i, i <= 3));
        }
        EtcdCluster.View v = EtcdCluster.parse(answer(ms + "]}", "", hs + "]"));
        assertTrue(v.removalRefusal("m3").orElseThrow().startsWith("another master is down: m4 (4), m5 (5) (etcd: 3 of 5 members healthy, quorum 3)"));
        // one of them down only: removing it is allowed (4 left, 3 healthy, quorum 3); removing a healthy one is not
        StringBuilder hs1 = new StringBuilder("[");
        for (int i = 1; i <= 5; i++) hs1.append(i > 1 ? "," : "").append(h("10.0.0.1" + i, i != 5));
        EtcdCluster.View v1 = EtcdCluster.parse(answer(ms + "]}", "", hs1 + "]"));
        assertEquals(Optional.empty(), v1.removalRefusal("m5"));
        assertTrue(v1.removalRefusal("m1").isPresent());
    }

    @Test void theQueryRunsEtcdctlOnTheHostOrInTheEtcdPod() {
        String q = EtcdCluster.query("unix:///var/run/cri-dockerd.sock");
        assertTrue(q.contains("if command -v etcdctl >/dev/null 2>&1; then ETCDCTL_API=3 etcdctl --endpoints=https://127.0.0.1:2379"), q);
        assertTrue(q.contains("crictl --runtime-endpoint unix:///var/run/cri-dockerd.sock ps --name '^etcd$' --state running -q"), q);
        assertTrue(q.contains("etcdctl_ member list -w json") && q.contains("etcdctl_ endpoint status --cluster -w json")
            && q.contains("etcdctl_ endpoint health --cluster -w json"), q);
    }
}
