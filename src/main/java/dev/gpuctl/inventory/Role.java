package dev.gpuctl.inventory;

import java.util.Locale;

public enum Role { MASTER, WORKER;
    public String key() { return name().toLowerCase(Locale.ROOT); } }
