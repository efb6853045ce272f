package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.EtcdCluster;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A master whose disk was lost while an etcd member: its member removed from the first master before it joins again. */
class LostMasterStepTest {
    static String members(String m2Name) {
        return "{\"header\":{},\"members\":[{\"ID\":1,\"name\":\"m1\",\"peerURLs\":[\"https://10.0.0.11:2380\"],\"clientURLs\":[\"https://10.0.0.11:2379\"]},"
            + "{\"ID\":2,\"name\":\"" + m2Name + "\",\"peerURLs\":[\"https://10.0.0.12:2380\"]" + (m2Name.isEmpty() ? "" : ",\"clientURLs\":[\"https://10.0.0.12:2379\"]") + "},"
            + "{\"ID\":18446744073709551615,\"name\":\"m3\",\"peerURLs\":[\"https://10.0.0.13:2380\"],\"clientURLs\":[\"https://10.0.0.13:2379\"]}]}";
    }

    static String answer(String members, boolean m1, boolean m2, boolean m3) {
        String hs = "[" + h(11, m1) + "," + h(12, m2) + "," + h(13, m3) + "]";
        String status = "[{\"Endpoint\":\"https://10.0.0.11:2379\",\"Status\":{\"header\":{\"member_id\":1},\"leader\":1}}]";
        return EtcdCluster.SECTION + " members\n" + members + "\n" + EtcdCluster.SECTION + " status\n" + status + "\n"
            + EtcdCluster.SECTION + " health\n" + hs + "\n";
    }

    static String h(int ip, boolean ok) {
        return "{\"endpoint\":\"https://10.0.0." + ip + ":2379\",\"health\":" + ok + (ok ? "" : ",\"error\":\"context deadline exceeded\"") + "}";
    }

    static String mark(String disk) { return LostMasterStep.MARK + " " + disk + " https://10.0.0.12:2380\n"; }

    static Inventory ha(Path dir) throws IOException {
        return InventoryLoader.load(Files.writeString(dir.resolve("inventory.yaml"), dev.gpuctl.inventory.HaInventory.YAML), Map.of());
    }

    @Test void aBlankMasterWhoseMemberEtcdStillListsIsAProblemNamingTheMember() {
        Optional<String> p = LostMasterStep.problem(answer(members("m2"), true, false, true), "m2", "https://10.0.0.12:2380", Optional.of("blank"));
        assertTrue(p.isPresent());
        assertTrue(p.get().contains("m2 is blank") && p.get().contains("m2 (2)") && p.get().contains("2 of 3 members healthy"), p.get());
    }

    @Test void aMasterWithItsEtcdOrNotAskedOrWithoutAMemberIsNoProblem() {
        String a = answer(members("m2"), true, false, true);
        assertEquals(Optional.empty(), LostMasterStep.problem(a, "m2", "https://10.0.0.12:2380", Optional.of("present")));
        assertEquals(Optional.empty(), LostMasterStep.problem(a, "m2", "https://10.0.0.12:2380", Optional.empty()));
        String gone = answer(members("m2").replace("\"name\":\"m2\",\"peerURLs\":[\"https://10.0.0.12:2380\"]",
            "\"name\":\"m4\",\"peerURLs\":[\"https://10.0.0.14:2380\"]"), true, true, true);
        assertEquals(Optional.empty(), LostMasterStep.problem(gone, "m2", "https://10.0.0.12:2380", Optional.of("blank")));
        // no etcd on the first master yet (a dry run before init): nothing known to be left
        assertEquals(Optional.empty(), LostMasterStep.problem(EtcdCluster.SECTION + " members\nno running etcd container (crictl ps --name etcd"
            + " --state running)\n", "m2", "https://10.0.0.12:2380", Optional.of("blank")));
    }

    @Test void aMemberAddedButNeverStartedIsFoundByItsPeerUrl() {
        EtcdCluster.View v = EtcdCluster.parse(answer(members(""), true, false, true));
        assertEquals("2", v.leftBy("m2", "https://10.0.0.12:2380").orElseThrow().id());
        assertEquals(Map.of("etcd.lost.m2.id", "2"), LostMasterStep.memberToRemove(mark("blank") + answer(members(""), true, false, true),
            "m2"));
    }

    @Test void theStaleMemberIsRemovedWhileTheOtherTwoKeepTheirQuorum() {
        assertEquals(Map.of("etcd.lost.m2.id", "2"), LostMasterStep.memberToRemove(mark("blank") + answer(members("m2"), true, false, true),
            "m2"));
    }

    @Test void nothingIsRemovedForAMasterThatIsNotBlankOrHasNoMemberLeft() {
        assertEquals(Map.of("etcd.lost.m2.id", ""), LostMasterStep.memberToRemove(mark("present") + answer(members("m2"), true, true, true),
            "m2"));
        String gone = answer(members("m2").replace("\"name\":\"m2\",\"peerURLs\":[\"https://10.0.0.12:2380\"]",
            "\"name\":\"m4\",\"peerURLs\":[\"https://10.0.0.14:2380\"]"), true, true, true);
        assertEquals(Map.of("etcd.lost.m2.id", ""), LostMasterStep.memberToRemove(mark("blank") + gone, "m2"));
    }

    @Test void refusedWhileAnotherMasterIsDownOrWhenTheStaleMemberAnswers() {
        var down = assertThrows(IllegalArgumentException.class,
            () -> LostMasterStep.memberToRemove(mark("blank") + answer(members("m2"), true, false, false), "m2"));
        assertTrue(down.getMessage().contains("another master is down: m3") && down.getMessage().contains("Nothing was changed"), down.getMessage());
        var answers = assertThrows(IllegalArgumentException.class,
            () -> LostMasterStep.memberToRemove(mark("blank") + answer(members("m2"), true, true, true), "m2"));
        assertTrue(answers.getMessage().contains("answers as healthy"), answers.getMessage());
        var unread = assertThrows(IllegalArgumentException.class,
            () -> LostMasterStep.memberToRemove(mark("blank") + EtcdCluster.SECTION + " members\nError: context deadline exceeded\n", "m2"));
        assertTrue(unread.getMessage().contains("etcdctl failed"), unread.getMessage());
    }

    @Test void theCheckAsksEtcdOnceAndJudgesEachOtherMasterByWhatPreflightFoundThere(@TempDir Path dir) throws IOException {
        Inventory inv = ha(dir);
        List<Probe> check = new LostMasterStep().check(HaControlPlaneStepsTest.on(inv, "m1"));
        assertEquals(1, check.size());
        dev.gpuctl.remote.ExecResult stale = new dev.gpuctl.remote.ExecResult(0, answer(members("m2"), true, false, true), "");
        Facts none = new Facts();
        assertEquals(Optional.empty(), check.get(0).judge().apply(stale, none), "nothing learned of m2: not judged");
        Facts present = new Facts();
        present.put("master.m2.disk", "present", false);
        present.put("master.m3.disk", "present", false);
        assertEquals(Optional.empty(), check.get(0).judge().apply(stale, present), "m2 has its etcd: down, not lost");
        Facts blank = new Facts();
        blank.put("master.m2.disk", "blank", false);
        blank.put("master.m3.disk", "present", false);
        String p = check.get(0).judge().apply(stale, blank).orElseThrow();
        assertTrue(p.startsWith("m2 is blank") && p.contains("https://10.0.0.12:2380"), p);
    }

    @Test void runsOnTheFirstMasterOfSeveralAndPreflightAsksTheOthers(@TempDir Path dir) throws IOException {
        Inventory inv = ha(dir);
        LostMasterStep step = new LostMasterStep();
        assertTrue(step.runsOn(HaControlPlaneStepsTest.on(inv, "m1")));
        assertFalse(step.runsOn(HaControlPlaneStepsTest.on(inv, "m2")));
        assertFalse(step.runsOn(HaControlPlaneStepsTest.on(inv, "w1")));
        assertFalse(LostMasterStep.asked(HaControlPlaneStepsTest.on(inv, "m1")));
        assertTrue(LostMasterStep.asked(HaControlPlaneStepsTest.on(inv, "m3")));
        assertTrue(new PreflightStep().check(HaControlPlaneStepsTest.on(inv, "m2")).stream().anyMatch(p -> p.command().equals(LostMasterStep.DISK)));
        // one question and one removal per other master, the removal after the question that decides it
        List<Op> ops = step.apply(HaControlPlaneStepsTest.on(inv, "m1"));
        assertEquals(4, ops.size());
        assertTrue(ops.get(0) instanceof Op.Capture c && c.command().contains("{{master.m2.disk}} https://10.0.0.12:2380"), ops.get(0).toString());
        assertTrue(ops.get(1) instanceof Op.Run r && r.command().contains("{{etcd.lost.m2.id}}") && r.command().contains("member remove"));
        assertTrue(Steps.ids().indexOf(LostMasterStep.ID) < Steps.ids().indexOf("join-masters"));
    }

}
