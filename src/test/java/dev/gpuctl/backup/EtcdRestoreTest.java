package dev.gpuctl.backup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The flags of a restore of several etcd members: --initial-cluster, the token, and the member list read back. */
class EtcdRestoreTest {
    static final List<EtcdRestore.Member> THREE = List.of(EtcdRestore.Member.of("m1", "10.0.0.11"),
        EtcdRestore.Member.of("m2", "10.0.0.12"), EtcdRestore.Member.of("m3", "10.0.0.13"));

    @Test void theInitialClusterNamesEveryMemberWithItsPeerUrlInOrder() {
        assertEquals("m1=https://10.0.0.11:2380,m2=https://10.0.0.12:2380,m3=https://10.0.0.13:2380", EtcdRestore.initialCluster(THREE));
        assertEquals("a=https://[fd00::1]:2380", EtcdRestore.initialCluster(List.of(EtcdRestore.Member.of("a", "fd00::1"))));
    }

    @Test void aNameOrAUrlTwiceOrNoMemberIsRefused() {
        var twiceNamed = assertThrows(IllegalArgumentException.class, () -> EtcdRestore.initialCluster(List.of(
            EtcdRestore.Member.of("m1", "10.0.0.11"), EtcdRestore.Member.of("m1", "10.0.0.12"))));
        assertEquals("member m1 named twice", twiceNamed.getMessage());
        var twiceUrl = assertThrows(IllegalArgumentException.class, () -> EtcdRestore.initialCluster(List.of(
            EtcdRestore.Member.of("m1", "10.0.0.11"), EtcdRestore.Member.of("m2", "10.0.0.11"))));
        assertEquals("peer URL https://10.0.0.11:2380 given twice", twiceUrl.getMessage());
        assertThrows(IllegalArgumentException.class, () -> EtcdRestore.initialCluster(List.of()));
    }

    @Test void aNameOrAddressThatCouldBreakTheCommandIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> EtcdRestore.Member.of("m1,x=http://evil:1", "10.0.0.11"));
        assertThrows(IllegalArgumentException.class, () -> EtcdRestore.Member.of("m1", "10.0.0.11 --force-new-cluster"));
        assertThrows(IllegalArgumentException.class, () -> new EtcdRestore.Member("m1", "http://10.0.0.11:2380"));
    }

    @Test void theTokenIsTheArchivesOwnSoEveryMemberOfOneRestoreSharesIt() {
        String sha = "0123456789abcdef".repeat(4);
        assertEquals("gpuctl-restore-0123456789abcdef", EtcdRestore.token(sha));
        assertThrows(IllegalArgumentException.class, () -> EtcdRestore.token("x"));
    }

    @Test void theMemberListMustBeExactlyTheRestoredMembersAllStarted() {
        String list = "1a2b, started, m1, https://10.0.0.11:2380, https://10.0.0.11:2379, false\n"
            + "3c4d, started, m2, https://10.0.0.12:2380, https://10.0.0.12:2379, false\n"
            + "5e6f, started, m3, https://10.0.0.13:2380, https://10.0.0.13:2379, false\n";
        assertEquals(Optional.empty(), EtcdRestore.membersProblem(list, THREE));
        String old = list.replace("m3, https://10.0.0.13:2380", "old, https://10.0.0.99:2380");
        Optional<String> p = EtcdRestore.membersProblem(old, THREE);
        assertTrue(p.isPresent() && p.get().contains("old=https://10.0.0.99:2380") && p.get().contains("expected m1="), p.toString());
        Optional<String> unstarted = EtcdRestore.membersProblem(list.replace("started, m2", "unstarted, m2"), THREE);
        assertEquals(Optional.of("not started yet: m2"), unstarted);
        assertTrue(EtcdRestore.membersProblem("Error: context deadline exceeded", THREE).orElseThrow().startsWith("not a member list"));
    }
}
