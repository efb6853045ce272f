package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Op;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The other masters' control-plane join: on masters but the first; the certificate key made on the first master as a
 * secret fact, written only into 0600 files that are marked secret, never in a command line; init uploads the certificates
 * only when there are several masters.
 */
class ControlPlaneJoinStepTest {
    static final Inventory HA = LoadBalancerStepTest.inventory(", controlPlaneEndpoint: { vip: 10.0.0.100 }");

    @Test void runsOnTheMastersButTheFirst() {
        ControlPlaneJoinStep step = new ControlPlaneJoinStep();
        assertEquals(List.of(false, true, true, false),
            List.of("m1", "m2", "m3", "w1").stream().map(n -> step.runsOn(LoadBalancerStepTest.on(HA, n))).toList());
    }

    @Test void theCertificateKeyIsASecretFactOnlyIn0600Files() {
        ControlPlaneJoinStep step = new ControlPlaneJoinStep();
        String ref = Facts.ref(ControlPlaneStep.CERTIFICATE_KEY);
        List<Op> prepare = step.prepareOnMaster(LoadBalancerStepTest.on(HA, "m1"));
        List<Op> apply = step.apply(LoadBalancerStepTest.on(HA, "m2"));
        int files = 0;
        for (Op op : concat(prepare, apply)) {
            if (op instanceof Op.Capture c && c.command().equals("kubeadm certs certificate-key")) assertTrue(c.secret(), c.what());
            if (op instanceof Op.Run r) assertFalse(r.command().contains(ref) || r.command().contains("--certificate-key"), r.command());
            if (op instanceof Op.WriteFile w && w.content().contains(ref)) {
                assertEquals("0600", w.mode(), w.path());
                assertTrue(w.secret(), w.path());
                files++;
            }
        }
        assertEquals(2, files, "the upload's InitConfiguration and the master's JoinConfiguration");
        String join = ControlPlaneJoinStep.config(LoadBalancerStepTest.on(HA, "m2"));
        assertTrue(join.contains("controlPlane:\n  localAPIEndpoint:\n    advertiseAddress: \"10.0.0.12\"\n    bindPort: 6443\n"
            + "  certificateKey: \"" + ref + "\"\n"), join);
        assertTrue(prepare.stream().anyMatch(o -> o instanceof Op.Run r
            && r.command().contains("kubeadm init phase upload-certs --upload-certs --skip-certificate-key-print --config "
                + ControlPlaneJoinStep.UPLOAD_CONFIG) && r.command().startsWith("trap 'rm -f " + ControlPlaneJoinStep.UPLOAD_CONFIG + "' EXIT")));
    }

    @Test void initUploadsTheCertificatesOnlyForSeveralMasters() {
        String ref = Facts.ref(ControlPlaneStep.CERTIFICATE_KEY);
        List<Op> ha = new ControlPlaneStep().apply(LoadBalancerStepTest.on(HA, "m1"));
        assertTrue(ha.stream().anyMatch(o -> o instanceof Op.Run r && r.command().endsWith("--skip-token-print --upload-certs --skip-certificate-key-print")));
        assertTrue(ha.stream().anyMatch(o -> o instanceof Op.WriteFile w && w.secret() && w.content().contains("certificateKey: \"" + ref + "\"")));
        Inventory one = dev.gpuctl.inventory.InventoryLoader.parse("inv.yaml", "cluster: { name: c, kubernetesVersion: \"1.35\" }\nnodes:\n"
            + "  - { name: m1, address: 10.0.0.11, role: master }\n  - { name: w1, address: 10.0.0.21, role: worker }\n",
            java.nio.file.Path.of("/tmp"), java.util.Map.of("HOME", "/root"));
        List<Op> single = new ControlPlaneStep().apply(LoadBalancerStepTest.on(one, "m1"));
        assertTrue(single.stream().noneMatch(o -> o instanceof Op.Capture c && c.command().contains("certificate-key")));
        assertTrue(single.stream().anyMatch(o -> o instanceof Op.Run r && r.command().endsWith("kubeadm init --config " + ControlPlaneStep.CONFIG + " --skip-token-print")));
    }

    static List<Op> concat(List<Op> a, List<Op> b) {
        return java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
    }
}
