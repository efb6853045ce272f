package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The upgrade's skew rules and batches, with no host. */
class UpgradePolicyTest {
    static KubeVersion v(String s) { return KubeVersion.parse(s).orElseThrow(); }

    @Test void versionsParseAsMinorsOrPatchesAndCompareAsNumbers() {
        assertEquals(new KubeVersion(1, 35, -1), v("1.35"));
        assertEquals(new KubeVersion(1, 35, 1), v("v1.35.1"));
        assertEquals("v1.35.1", v("1.35.1").toString());
        assertEquals("1.35", v("1.35").toString());
        assertEquals(Optional.empty(), KubeVersion.parse("1.35.1-rc.0"));
        assertEquals(Optional.empty(), KubeVersion.parse("latest"));
        assertTrue(v("1.10.0").compareTo(v("1.9.9")) > 0, "numbers, not text");
        assertTrue(v("1.35").metBy(v("v1.35.0")) && v("1.35").metBy(v("v1.35.7")));
        assertTrue(v("1.35.1").metBy(v("v1.35.1")));
        assertFalse(v("1.35.1").metBy(v("v1.35.0")));
        assertFalse(v("1.35").metBy(v("v1.34.2")));
    }

    @Test void oneMinorUpOrANewerPatchIsAllowed() {
        Map<String, KubeVersion> kubelets = Map.of("m", v("v1.34.2"), "w1", v("v1.34.2"));
        assertEquals(List.of(), UpgradePolicy.refusals(v("v1.34.2"), kubelets, v("1.35")));
        assertEquals(List.of(), UpgradePolicy.refusals(v("v1.34.2"), kubelets, v("1.34.5")));
        assertEquals(List.of(), UpgradePolicy.refusals(v("v1.34.2"), kubelets, v("1.34")), "already there: nothing to refuse");
    }

    @Test void aSkippedMinorIsRefusedNamingEachStep() {
        List<String> r = UpgradePolicy.refusals(v("v1.33.4"), Map.of("m", v("v1.33.4")), v("1.35"));
        assertEquals(List.of("the cluster runs v1.33.4; 1.35 is 2 minors ahead: kubeadm upgrades one minor at a time; run"
            + " `gpuctl upgrade --to 1.34`, then `gpuctl upgrade --to 1.35`"), r);
    }

    @Test void aDowngradeIsRefusedByMinorAndByPatch() {
        String minor = UpgradePolicy.refusals(v("v1.35.0"), Map.of(), v("1.34")).get(0);
        assertTrue(minor.startsWith("the cluster runs v1.35.0; 1.34 is older: a downgrade is refused"), minor);
        assertTrue(minor.endsWith("set cluster.kubernetesVersion: \"1.35\" in the inventory"), minor);
        assertEquals(1, UpgradePolicy.refusals(v("v1.35.1"), Map.of(), v("1.35.0")).size(), "a lower patch is a downgrade too");
    }

    @Test void kubeletsNeverLeadTheApiServerAndLagAtMostThreeMinors() {
        Map<String, KubeVersion> k = new LinkedHashMap<>();
        k.put("w1", v("v1.35.0"));
        k.put("w2", v("v1.31.0"));
        List<String> r = UpgradePolicy.refusals(v("v1.34.2"), k, v("1.35"));
        assertEquals(2, r.size(), r::toString);
        assertTrue(r.get(0).startsWith("w1: kubelet v1.35.0 is newer than the API server v1.34.2"), r.get(0));
        assertTrue(r.get(1).startsWith("w2: kubelet v1.31.0 would be 4 minors behind 1.35 (at most 3)"), r.get(1));
        assertEquals(List.of(), UpgradePolicy.refusals(v("v1.34.2"), Map.of("w", v("v1.32.0")), v("1.35")), "three behind is fine");
    }

    @Test void batchesByCountOrPercentage() {
        assertEquals(1, UpgradePolicy.batchSize("1", 3));
        assertEquals(2, UpgradePolicy.batchSize("2", 3));
        assertEquals(1, UpgradePolicy.batchSize("25%", 3), "rounded down, at least one");
        assertEquals(2, UpgradePolicy.batchSize("50%", 4));
        assertEquals(4, UpgradePolicy.batchSize("100%", 4));
        for (String bad : List.of("0", "-1", "0%", "101%", "x", "1.5", "")) {
            var e = assertThrows(IllegalArgumentException.class, () -> UpgradePolicy.batchSize(bad, 3), bad);
            assertTrue(e.getMessage().contains("no number of nodes"), e.getMessage());
        }
        assertEquals(List.of(List.of("a", "b"), List.of("c")), UpgradePolicy.batches(List.of("a", "b", "c"), 2));
        assertEquals(List.of(List.of("a"), List.of("b"), List.of("c")), UpgradePolicy.batches(List.of("a", "b", "c"), 1));
        assertEquals(List.of(), UpgradePolicy.batches(List.of(), 1));
    }

    @Test void theTargetIsToOrTheInventorysMinor() {
        assertEquals(Optional.of(v("1.35")), UpgradePolicy.target("1.35", null));
        assertEquals(Optional.of(v("1.35.1")), UpgradePolicy.target("1.35", "1.35.1"));
        assertEquals(Optional.empty(), UpgradePolicy.target("1.35", "next"));
    }
}
