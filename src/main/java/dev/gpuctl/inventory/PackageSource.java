package dev.gpuctl.inventory;

/** upstream: add the official apt repositories and keys; system: use the host's own apt sources. */
public enum PackageSource { UPSTREAM, SYSTEM;
    public String key() { return name().toLowerCase(java.util.Locale.ROOT); } }
