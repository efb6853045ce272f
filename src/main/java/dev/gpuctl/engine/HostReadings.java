package dev.gpuctl.engine;

import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Probe;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One host's reusable answers in one engine session ({@link Probe#reusedAs}): each read with the host's op generation
 * at the time it was asked, and the generation itself, which every apply on the host moves on. An answer is given to a
 * later probe of the same question only while the generation is the one it was read at: no op ran on the host since,
 * so nothing gpuctl did there can have changed it. A no-op re-run asks the master's diff of gpuctl's manifests in the
 * control plane's round and is given that answer again in the GPU round; an apply on the master in between (the CNI's
 * manifest placed, kubeadm init) makes the GPU round ask anew. The readings and the generation live in one object,
 * so a reading can never be compared with another host's or another session's count.
 */
final class HostReadings {
    /**
     * An answer as read: the key's record of it, the command and its result as the host gave them, and the host's op
     * generation when the command was sent.
     */
    record Reading<T>(T value, String command, ExecResult answer, long generation) {}

    private final AtomicLong generation = new AtomicLong();
    private final Map<String, Reading<?>> readings = new ConcurrentHashMap<>();

    /** How many applies have started on the host in this session. */
    long generation() { return generation.get(); }

    /** An apply starts on the host: every answer read before it is stale. */
    void opRan() { generation.incrementAndGet(); }

    /**
     * Keeps {@code answer} to {@code command} as {@code key}'s reading, read at {@code generation} (taken before the
     * command was sent, so an apply that started meanwhile makes it stale at once). An answer whose record cannot be
     * read is not kept: the next probe asks.
     */
    <T> void read(Facts.Key<T> key, String command, ExecResult answer, long generation) {
        T value;
        try {
            value = key.parser().apply(answer.stdout());
        } catch (RuntimeException e) {
            readings.remove(key.name());
            return;
        }
        readings.put(key.name(), new Reading<>(value, command, answer, generation));
    }

    /** {@code key}'s reading when it answered {@code command} and no op ran on the host since it was read. */
    <T> Optional<Reading<T>> current(Facts.Key<T> key, String command) {
        Reading<?> r = readings.get(key.name());
        if (r == null || r.generation() != generation.get() || !r.command().equals(command) || !key.type().isInstance(r.value())) {
            return Optional.empty();
        }
        @SuppressWarnings("unchecked") Reading<T> typed = (Reading<T>) r;
        return Optional.of(typed);
    }

    /** The reading a probe may be given, if it is reusable and one is current ({@link #current}). */
    Optional<Reading<?>> forProbe(Probe p, String command) {
        return p.reading() == null ? Optional.empty() : current(p.reading(), command).map(r -> r);
    }
}
