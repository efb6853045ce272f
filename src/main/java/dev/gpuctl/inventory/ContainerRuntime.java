package dev.gpuctl.inventory;

import java.util.Locale;

/** The kubelet's container runtime. Docker needs cri-dockerd since Kubernetes 1.24. */
public enum ContainerRuntime {
    DOCKER("unix:///var/run/cri-dockerd.sock"),
    CONTAINERD("unix:///run/containerd/containerd.sock");

    private final String criSocket;
    ContainerRuntime(String criSocket) { this.criSocket = criSocket; }
    public String criSocket() { return criSocket; }
    public String key() { return name().toLowerCase(Locale.ROOT); }
}
