package dev.gpuctl.inventory;

import java.util.Locale;

/** upstream: add the official apt repositories and keys; system: use the host's own apt sources. */
public enum PackageSource { UPSTREAM, SYSTEM;
    public String key() { return name().toLowerCase(Locale.ROOT); } }
