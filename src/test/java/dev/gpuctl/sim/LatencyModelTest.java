package dev.gpuctl.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class LatencyModelTest {
    @Test void countsToolsStartedAsCommandsNotNamedAsArguments() {
        assertEquals(1, LatencyModel.nvidiaSmiRuns("nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER 2>&1; true"));
        assertEquals(1, LatencyModel.kubectlRuns("test -f /etc/kubernetes/admin.conf && kubectl --kubeconfig=/etc/kubernetes/admin.conf get --raw=/readyz"));
        assertEquals(1, LatencyModel.kubectlRuns("if [ -s f.yaml ]; then kubectl diff -f f.yaml >/dev/null 2>&1; echo $?; fi"));
        assertEquals(0, LatencyModel.kubectlRuns("dpkg-query -W -f='${Package}\\n' kubelet kubeadm kubectl 2>&1 || true"));
        assertEquals(0, LatencyModel.nvidiaSmiRuns("if command -v nvidia-smi >/dev/null; then echo yes; fi"));
        assertEquals(2, LatencyModel.nvidiaSmiRuns("a=$(nvidia-smi -L); b=$(nvidia-smi -q)"));
        // a shell function's body starts it: MasterApi's one kubectl, called once when nothing differs
        assertEquals(1, LatencyModel.kubectlRuns("kube_api() { kubectl --kubeconfig=/etc/kubernetes/admin.conf \"$@\"; }; kube_api diff -f a -f b"));
    }

    @Test void aBatchCostsEachOfItsCommands() {
        LatencyModel m = LatencyModel.standard(Duration.ofMillis(150));
        assertEquals(Duration.ofMillis(20 + 320 + 170).toNanos(), m.nanos(List.of("true", "nvidia-smi -L", "kubectl get nodes")));
        assertEquals(Duration.ofMillis(15).toNanos(), m.scaled(0.1).handshakeNanos());
    }
}
