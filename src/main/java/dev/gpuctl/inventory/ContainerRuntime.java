package dev.gpuctl.inventory;

/** The kubelet's container runtime. Docker needs cri-dockerd since Kubernetes 1.24. */
public enum ContainerRuntime {
    DOCKER("unix:///var/run/cri-dockerd.sock"),
    CONTAINERD("unix:///run/containerd/containerd.sock");

    private final String criSocket;
    ContainerRuntime(String criSocket) { this.criSocket = criSocket; }
    public String criSocket() { return criSocket; }
    public String key() { return name().toLowerCase(java.util.Locale.ROOT); }
}
