package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Each step names what makes its failed (or warned) verify check right: {@link Step#fix}. */
class StepFixTest {
    static final Probe ANY = Probe.of("a check", "true", r -> Optional.empty());

    @Test void byDefaultTheBootstrapThatAppliesTheStepOnThatHostOrTheWholeRunForACheckOfTheCluster() {
        assertEquals("gpuctl bootstrap --only swap --hosts w1 inv.yaml", new SwapStep().fix(ANY, true, "w1", "inv.yaml"));
        assertTrue(new CertsRenewStep().readsCluster());
        assertEquals("gpuctl bootstrap inv.yaml", new CertsRenewStep().fix(ANY, true, "m", "inv.yaml"));
    }

    @Test void stepsThatGpuctlDoesNotFixByBootstrapNameTheirOwn() {
        assertEquals(PreflightStep.FIX, new PreflightStep().fix(ANY, true, "w1", "inv.yaml"));
        assertTrue(new SchedulingStep().fix(ANY, true, "m", "inv.yaml").startsWith("gpuctl uncordon -i inv.yaml NODE"));
        assertEquals(CertificatesStep.fix("inv.yaml"), new CertificatesStep().fix(ANY, false, "m", "inv.yaml"));
        assertTrue(CertificatesStep.fix("inv.yaml").startsWith("gpuctl certs renew inv.yaml"));
        Probe nodeCheck = Probe.of("node gpu7: every GPU it had is still there", "true", r -> Optional.empty());
        for (Step gpu : List.<Step>of(new GpuHealthStep(), new GpuRecordStep())) {
            assertTrue(gpu.fix(nodeCheck, true, "m", "inv.yaml").contains("gpuctl repair -i inv.yaml gpu7 "), gpu.id());
            assertTrue(gpu.fix(ANY, true, "w1", "inv.yaml").contains("gpuctl repair -i inv.yaml w1 "), gpu.id());
            assertEquals(GpuHealthStep.GPU_FIX, gpu.fix(ANY, false, "w1", "inv.yaml"), "a warning's fix is the problem's own");
        }
    }
}
