package dev.gpuctl.inventory;

import java.util.Optional;

/**
 * The inventory's {@code cluster.gpuDriver}: what gpuctl does about the NVIDIA driver on GPU nodes.
 *
 * @param hold            hold the installed driver packages (apt-mark hold) and keep unattended-upgrades off them
 *                        (default true; false: gpuctl neither holds nor checks the hold)
 * @param holdKernel      hold the kernel packages too (default false)
 * @param persistenceMode when given, every GPU's persistence mode must be on (true) or off (false); absent: not checked
 */
public record GpuDriver(boolean hold, boolean holdKernel, Optional<Boolean> persistenceMode) {
    public static final GpuDriver DEFAULT = new GpuDriver(true, false, Optional.empty());
}
