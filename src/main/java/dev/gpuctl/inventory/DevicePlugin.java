package dev.gpuctl.inventory;

/** The NVIDIA device plugin: a version tag and the manifest that deploys it (default: upstream's static manifest). */
public record DevicePlugin(String version, ManifestRef manifest) {}
