package dev.gpuctl.kube;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What {@code gpuctl upgrade} may do, as plain functions: the version skew rules (kubeadm upgrades the control plane
 * one minor at a time, or to a newer patch of its minor; a kubelet may lag the API server by up to three minors and
 * never lead it; nothing is downgraded) and the worker batches.
 */
public final class UpgradePolicy {
    private UpgradePolicy() {}

    /**
     * What one upgrade run does.
     *
     * @param target       a minor (any patch of it: the newest the package source has) or a patch
     * @param batchSize    workers upgraded at once
     * @param drainTimeout how long a node's drain may take
     * @param force        evict what a drain would otherwise wait for
     */
    public record Options(KubeVersion target, int batchSize, Duration drainTimeout, boolean force) {}

    /** How far a kubelet may lag the API server (the version skew policy since 1.28). */
    public static final int KUBELET_LAG = 3;

    /**
     * Why an upgrade from what runs to {@code target} must not start; empty when it may.
     *
     * @param controlPlane the API server's version (kube-apiserver's image)
     * @param kubelets     each node's kubelet version, by node name
     */
    public static List<String> refusals(KubeVersion controlPlane, Map<String, KubeVersion> kubelets, KubeVersion target) {
        List<String> out = new ArrayList<>();
        int step = target.minorsAbove(controlPlane);
        if (step < 0 || (step == 0 && target.hasPatch() && target.patch() < controlPlane.patch())) {
            out.add("the cluster runs " + controlPlane + "; " + target + " is older: a downgrade is refused (kubeadm cannot roll the"
                + " cluster's state back); set cluster.kubernetesVersion: \"" + controlPlane.minorString() + "\" in the inventory");
        } else if (step > 1) {
            StringBuilder steps = new StringBuilder();
            for (int m = controlPlane.minor() + 1; m <= target.minor(); m++) {
                if (steps.length() > 0) steps.append(", then ");
                steps.append("`gpuctl upgrade --to ").append(target.major()).append('.').append(m).append('`');
            }
            out.add("the cluster runs " + controlPlane + "; " + target.minorString() + " is " + step + " minors ahead: kubeadm upgrades"
                + " one minor at a time; run " + steps);
        }
        kubelets.forEach((node, v) -> {
            if (v.minorsAbove(controlPlane) > 0) {
                out.add(node + ": kubelet " + v + " is newer than the API server " + controlPlane + " (the skew policy forbids a"
                    + " kubelet ahead of the API server): set its packages back to " + controlPlane.minorString() + " by hand first");
            } else if (step >= 0 && target.minorsAbove(v) > KUBELET_LAG) {
                out.add(node + ": kubelet " + v + " would be " + target.minorsAbove(v) + " minors behind " + target.minorString()
                    + " (at most " + KUBELET_LAG + "): upgrade that node to " + controlPlane.minorString() + " first");
            }
        });
        return out;
    }

    /**
     * The version to upgrade to: {@code --to} when given (a minor or a patch), else the inventory's minor.
     * Empty when {@code --to} is not a version.
     */
    public static Optional<KubeVersion> target(String inventoryMinor, String to) {
        return KubeVersion.parse(to == null || to.isBlank() ? inventoryMinor : to);
    }

    /**
     * How many workers are upgraded at once: "N" (at least 1) or "P%" of the workers (rounded down, at least 1).
     *
     * @throws IllegalArgumentException for anything else, with what is expected
     */
    public static int batchSize(String maxUnavailable, int workers) {
        String s = maxUnavailable.strip();
        try {
            if (s.endsWith("%")) {
                int p = Integer.parseInt(s.substring(0, s.length() - 1));
                if (p < 1 || p > 100) throw new NumberFormatException();
                return Math.max(1, workers * p / 100);
            }
            int n = Integer.parseInt(s);
            if (n < 1) throw new NumberFormatException();
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + maxUnavailable + "' is no number of nodes (1, 2, ...) or percentage (1% to 100%)");
        }
    }

    /** The workers in batches of {@code size}, in inventory order. */
    public static List<List<String>> batches(List<String> workers, int size) {
        List<List<String>> out = new ArrayList<>();
        for (int i = 0; i < workers.size(); i += size) out.add(List.copyOf(workers.subList(i, Math.min(workers.size(), i + size))));
        return out;
    }
}
