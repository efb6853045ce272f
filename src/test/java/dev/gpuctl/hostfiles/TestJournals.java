package dev.gpuctl.hostfiles;

import java.nio.file.Path;

/**
 * Unit tests run host commands on this machine: their change journal goes to a private directory of this JVM, never
 * to this machine's own {@value HostJournal#DIR}.
 */
public final class TestJournals {
    private TestJournals() {}

    /** This JVM's stand-in for {@value HostJournal#DIR}. */
    public static final Path DIR = Path.of(System.getProperty("java.io.tmpdir"), "gpuctl-unit-journal-" + ProcessHandle.current().pid());

    /** The command with every mention of {@value HostJournal#DIR} pointing at {@link #DIR}. */
    public static String redirect(String command) {
        return command.replace(HostJournal.DIR, DIR.toString());
    }
}
