package dev.gpuctl.inventory;

public enum Role { MASTER, WORKER;
    public String key() { return name().toLowerCase(java.util.Locale.ROOT); } }
