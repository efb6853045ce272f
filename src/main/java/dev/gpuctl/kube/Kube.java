package dev.gpuctl.kube;

/** kubeadm's paths on the master and the kubectl command that uses its admin.conf: shared by the cluster steps and the workload commands. */
public final class Kube {
    private Kube() {}

    public static final String ADMIN_CONF = "/etc/kubernetes/admin.conf";
    /** gpuctl's own files on the nodes (rendered configs, manifests), 0700. */
    public static final String DIR = "/etc/kubernetes/gpuctl";
    public static final String KUBECTL = "kubectl --kubeconfig=" + ADMIN_CONF;

    /** A kubectl command against the cluster, run on the master. */
    public static String kubectl(String args) { return KUBECTL + " " + args; }
}
