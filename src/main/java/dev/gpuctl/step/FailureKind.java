package dev.gpuctl.step;

/**
 * What a step's failed proof means, so that a workflow tells failures apart by value, never by a step's id.
 * <ul>
 *   <li>{@link #BROKEN}: the step could not make or prove its state; the command stops and says what to fix.</li>
 *   <li>{@link #GPU_JOBS_RUNNING}: the proof found GPU work still running that must not be evicted (a drain's wait):
 *       the node is busy, not broken; an upgrade leaves it, uncordoned, and goes on with the next batch.</li>
 * </ul>
 */
public enum FailureKind { BROKEN, GPU_JOBS_RUNNING }
