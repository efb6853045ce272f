package dev.gpuctl.steps;

/** Paths and commands shared by the cluster steps, which run on the master. */
public final class Kube {
    private Kube() {}

    public static final String ADMIN_CONF = "/etc/kubernetes/admin.conf";
    /** gpuctl's own files on the nodes (rendered configs, manifests), 0700. */
    public static final String DIR = "/etc/kubernetes/gpuctl";
    public static final String KUBECTL = "kubectl --kubeconfig=" + ADMIN_CONF;

    /** A kubectl command against the cluster, run on the master. */
    public static String kubectl(String args) { return KUBECTL + " " + args; }
}
