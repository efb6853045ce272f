package dev.gpuctl.remote;

import dev.gpuctl.text.Terminal;
import java.util.Arrays;

/**
 * What one command on a host returned: exit status and both output streams (each whole up to 4 MiB; of a longer one,
 * its start and end with "[… N bytes cut]" between, see {@link Remote#exec}).
 */
public record ExecResult(int exit, String stdout, String stderr) {
    public boolean ok() { return exit == 0; }

    /**
     * The last {@code lines} lines of stderr (or stdout when stderr is empty), for error messages: escaped
     * ({@link Terminal#escape}), since it is the host's text and ends up on the admin's terminal.
     */
    public String tail(int lines) {
        String text = stderr.isBlank() ? stdout : stderr;
        String[] all = text.strip().split("\n");
        int from = Math.max(0, all.length - lines);
        return Terminal.escape(String.join("\n", Arrays.copyOfRange(all, from, all.length)));
    }
}
