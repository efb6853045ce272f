/**
 * The vocabulary: what a step is. A {@link dev.gpuctl.step.Step} checks, applies and verifies with read-only
 * {@link dev.gpuctl.step.Probe}s and {@link dev.gpuctl.step.Op}s, grouped in {@link dev.gpuctl.step.Phase}s, sharing
 * learned {@link dev.gpuctl.step.Facts}; the engine runs them and the plan renders them. Concrete steps live in
 * dev.gpuctl.steps; nothing here names one.
 */
package dev.gpuctl.step;
