package dev.gpuctl.inventory;

import java.util.Locale;

public enum Cni {
    FLANNEL("10.244.0.0/16"), CALICO("192.168.0.0/16");
    private final String defaultPodCidr;
    Cni(String defaultPodCidr) { this.defaultPodCidr = defaultPodCidr; }
    /** The pod network the upstream manifest ships with. */
    public String defaultPodCidr() { return defaultPodCidr; }
    public String key() { return name().toLowerCase(Locale.ROOT); }
}
