package dev.gpuctl.sim;

import java.util.List;
import java.util.Locale;

/**
 * One simulated host's identity, put where the recording has tokens: name, address, machine-id, product UUID and
 * (on a worker) GPU UUIDs. Workers are w1..wN at 10.213.(1 + (i-1)/240).(10 + (i-1)%240); the master m0 at 10.213.0.10.
 */
record SimHost(int index, String name, String ip, String machineId, String productUuid, List<String> gpus) {
    /** The simulated hosts' network and its gateway (the inventory's time server). */
    static final String SUBNET = "10.213.0.0/16";
    static final String GATEWAY = "10.213.0.1";
    static final String MASTER_NAME = "m0";

    boolean isMaster() { return index == 0; }

    String role() { return isMaster() ? "master" : "worker"; }

    static SimHost theMaster() {
        return new SimHost(0, MASTER_NAME, "10.213.0.10", hex(0, 32), uuid(0), List.of());
    }

    static SimHost worker(int i) {
        if (i < 1 || i > 60_000) throw new IllegalArgumentException("worker index " + i + " is outside 1..60000");
        String ip = "10.213." + (1 + (i - 1) / 240) + "." + (10 + (i - 1) % 240);
        return new SimHost(i, "w" + i, ip, hex(i, 32), uuid(i), List.of("GPU-" + uuid(i).substring(0, 24) + hex(i, 12)));
    }

    /** {@code length} hex digits that differ for every index (a machine-id: 32). */
    static String hex(int index, int length) {
        String h = String.format(Locale.ROOT, "%08x", index * 2654435761L & 0xffffffffL) + String.format(Locale.ROOT, "%08x", index);
        StringBuilder sb = new StringBuilder();
        while (sb.length() < length) sb.append(h);
        return sb.substring(0, length);
    }

    static String uuid(int index) {
        String h = hex(index, 32);
        return h.substring(0, 8) + "-" + h.substring(8, 12) + "-" + h.substring(12, 16) + "-" + h.substring(16, 20) + "-" + h.substring(20);
    }
}
