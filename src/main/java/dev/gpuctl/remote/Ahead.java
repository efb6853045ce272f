package dev.gpuctl.remote;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.function.Supplier;

/**
 * A value made once: by {@link #startInBackground} on a daemon thread of its own, ahead of its first use, or else by
 * the first caller of {@link #get}. A caller that comes while it is being made waits for it; what making it threw is
 * thrown to every caller as it was thrown (not wrapped), as if the caller had made it.
 */
final class Ahead<T> {
    private final FutureTask<T> task;
    private final String threadName;

    Ahead(String threadName, Supplier<T> make) {
        this.threadName = threadName;
        this.task = new FutureTask<>(make::get);
    }

    /** Starts making the value on a daemon thread; a no-op once it was made or is being made. */
    void startInBackground() {
        if (task.isDone()) return;
        Thread t = new Thread(task, threadName);
        t.setDaemon(true);
        t.start();
    }

    /** The value: made here when nobody started it, waited for while another thread makes it. */
    T get() {
        task.run(); // makes it unless it was made or another thread is making it
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return task.get();
                } catch (InterruptedException e) {
                    interrupted = true; // the value is needed: wait on, keep the interrupt for the caller
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException r) throw r;
                    if (e.getCause() instanceof Error err) throw err;
                    throw new IllegalStateException(e.getCause());
                }
            }
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }
}
