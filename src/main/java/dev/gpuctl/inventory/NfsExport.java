package dev.gpuctl.inventory;

public record NfsExport(String path, boolean readOnly) {}
