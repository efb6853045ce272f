package dev.gpuctl.inventory;

import java.util.Map;
import java.util.Optional;

/**
 * One host. Workers have GPUs unless the inventory says gpu: false; the master has none unless gpu: true.
 * connection is "ssh" (default) or "local" (commands run on the machine gpuctl runs on). address is what SSH
 * connects to (an IP or a host name); nodeIp, when the inventory gives one, is the IP the cluster uses for the node
 * (kubeadm's advertise address, the kubelet's node-ip), else empty. gpuSharing is the node's own
 * {@code gpuSharing}, when it gives one (else the cluster's applies: {@link Inventory#sharing}). gpus is the node's GPU
 * count when the inventory gives it ({@code gpus:}, else 0: unknown); gpuModel its GPU model ({@code gpuModel:}, a
 * DNS label such as h200, else empty), which teams' quotas are per.
 */
public record Node(String name, String address, Role role, boolean gpu, Map<String, String> labels,
                   SshSettings ssh, String connection, String nodeIp, Optional<GpuSharing> gpuSharing,
                   int gpus, String gpuModel) {
    public Node {
        labels = Map.copyOf(labels);
        nodeIp = nodeIp == null ? "" : nodeIp;
        gpuSharing = gpuSharing == null ? Optional.empty() : gpuSharing;
        gpuModel = gpuModel == null ? "" : gpuModel;
    }

    public Node(String name, String address, Role role, boolean gpu, Map<String, String> labels,
                SshSettings ssh, String connection, String nodeIp, Optional<GpuSharing> gpuSharing) {
        this(name, address, role, gpu, labels, ssh, connection, nodeIp, gpuSharing, 0, "");
    }

    public Node(String name, String address, Role role, boolean gpu, Map<String, String> labels,
                SshSettings ssh, String connection, String nodeIp) {
        this(name, address, role, gpu, labels, ssh, connection, nodeIp, Optional.empty());
    }

    public Node(String name, String address, Role role, boolean gpu, Map<String, String> labels,
                SshSettings ssh, String connection) {
        this(name, address, role, gpu, labels, ssh, connection, "");
    }
    public boolean isMaster() { return role == Role.MASTER; }
    public boolean isLocal() { return "local".equals(connection); }
}
