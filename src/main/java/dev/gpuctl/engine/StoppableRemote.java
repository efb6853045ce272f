package dev.gpuctl.engine;

import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Held;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import java.time.Duration;

/** A host's connection that starts nothing once a stop was requested; commands already running finish. */
record StoppableRemote(Remote inner, Stop stop) implements Remote {
    @Override public String name() { return inner.name(); }

    @Override public ExecResult exec(String command, Duration timeout) {
        stop.check(inner.name(), RemoteException.shown(command));
        return inner.exec(command, timeout);
    }

    @Override public Held hold(String command, Duration timeout) {
        stop.check(inner.name(), RemoteException.shown(command));
        return inner.hold(command, timeout);
    }

    @Override public void upload(byte[] content, String path, String mode, String owner) {
        stop.check(inner.name(), "writing " + path);
        inner.upload(content, path, mode, owner);
    }

    @Override public ExecResult upload(String before, byte[] content, String path, String mode, String owner) {
        stop.check(inner.name(), "writing " + path);
        return inner.upload(before, content, path, mode, owner);
    }

    @Override public byte[] download(String path) {
        stop.check(inner.name(), "reading " + path);
        return inner.download(path);
    }

    @Override public void upload(java.nio.file.Path from, String path, String mode, String owner) {
        stop.check(inner.name(), "writing " + path);
        inner.upload(from, path, mode, owner);
    }

    @Override public void download(String path, java.nio.file.Path to) {
        stop.check(inner.name(), "reading " + path);
        inner.download(path, to);
    }

    @Override public boolean connected() { return inner.connected(); }

    @Override public void close() { inner.close(); }

    /** The stop request, shared by every host's connection. */
    static final class Stop {
        volatile boolean requested;

        void check(String host, String what) {
            if (requested) throw new RemoteException(RemoteException.Kind.INTERRUPTED, host, host + ": stopped before " + what + " (interrupted)");
        }
    }
}
