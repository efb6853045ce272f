package dev.gpuctl.cli;

import java.io.PrintWriter;
import java.time.Duration;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * SIGINT (Ctrl-C) during a run: the first asks the run to stop launching commands and lets the running ones
 * finish, for at most {@code grace}; a second, or the end of the grace time, cuts them off. The JVM's own
 * handler (exit at once) comes back when the run is over.
 */
final class Interrupts implements AutoCloseable {
    /** What a run offers to an interrupt. */
    interface Stoppable {
        void requestStop();

        void abort();
    }

    private static final Signal INT = new Signal("INT");
    private final SignalHandler previous;
    private volatile int count;
    private volatile Thread timer;

    private Interrupts(Stoppable run, Duration grace, PrintWriter err) {
        this.previous = Signal.handle(INT, sig -> {
            int n = ++count;
            if (n == 1) {
                synchronized (err) {
                    err.println("gpuctl: interrupt: starting no more commands; waiting up to " + grace.toSeconds()
                        + " s for the running ones (Ctrl-C again to cut them off)");
                    err.flush();
                }
                run.requestStop();
                Thread t = new Thread(() -> {
                    try {
                        Thread.sleep(grace.toMillis());
                        run.abort();
                    } catch (InterruptedException ignored) {
                        // the run ended in time
                    }
                }, "gpuctl-interrupt-grace");
                t.setDaemon(true);
                t.start();
                timer = t;
            } else {
                run.abort();
            }
        });
    }

    /** Handles SIGINT for {@code run} until closed. */
    static Interrupts during(Stoppable run, Duration grace, PrintWriter err) {
        return new Interrupts(run, grace, err);
    }

    @Override
    public void close() {
        Thread t = timer;
        if (t != null) t.interrupt();
        Signal.handle(INT, previous);
    }
}
