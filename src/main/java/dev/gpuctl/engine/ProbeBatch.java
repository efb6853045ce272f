package dev.gpuctl.engine;

import dev.gpuctl.remote.ExecResult;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * Several read-only probe commands sent as one shell script, so that a step's questions cost one SSH round
 * trip. Pure: the script text and the parsing of its output.
 *
 * <p>Each command runs in its own subshell (an {@code exit} or {@code set -e} in it ends only that subshell)
 * with stdin from /dev/null. Before it, a begin line goes to stdout and to stderr; after it, an end line goes
 * to both, stdout's carrying the exit status. Both lines start with a newline-separated random delimiter, so
 * output without a trailing newline, empty output and any bytes in between come back exactly. The delimiter
 * is assembled by the shell from two halves, so even a probe that prints its own command line (ps) cannot
 * contain it. A frame that is missing or cut short (a probe that killed the script, say) ends the parse:
 * {@link #parse} returns the answers of the complete frames before it, and the caller asks the rest one by one.
 */
final class ProbeBatch {
    private ProbeBatch() {}

    /** Scripts longer than this are split (one shell word on a command line is limited to 128 KiB on Linux). */
    static final int MAX_SCRIPT_CHARS = 64 * 1024;

    private static final SecureRandom RANDOM = new SecureRandom();

    /** A fresh delimiter: 24 random hex characters after a fixed prefix. */
    static String newDelimiter() {
        byte[] b = new byte[12];
        RANDOM.nextBytes(b);
        return "gpuctl-" + HexFormat.of().formatHex(b);
    }

    /** The script that runs {@code commands} in order, each framed as described above. */
    static String script(List<String> commands, String delimiter) {
        if (!delimiter.matches("[A-Za-z0-9-]{8,}")) throw new IllegalArgumentException("bad delimiter " + delimiter);
        int half = delimiter.length() / 2;
        StringBuilder sb = new StringBuilder();
        sb.append("__gpuctl_d='").append(delimiter, 0, half).append("''").append(delimiter.substring(half)).append("'\n");
        for (int i = 0; i < commands.size(); i++) {
            sb.append("printf '%s b ").append(i).append("\\n' \"$__gpuctl_d\"; printf '%s b ").append(i).append("\\n' \"$__gpuctl_d\" >&2\n");
            sb.append("(\nunset __gpuctl_d __gpuctl_x\n").append(commands.get(i)).append("\n) </dev/null\n");
            sb.append("__gpuctl_x=$?; printf '\\n%s e ").append(i).append(" %s\\n' \"$__gpuctl_d\" \"$__gpuctl_x\"; printf '\\n%s e ")
                .append(i).append("\\n' \"$__gpuctl_d\" >&2\n");
        }
        return sb.toString();
    }

    /** The script's length for these commands, without building it. */
    static int scriptLength(List<String> commands) {
        int n = 80;
        for (int i = 0; i < commands.size(); i++) n += commands.get(i).length() + 230;
        return n;
    }

    /**
     * The answers of the first {@code count} framed commands found in the script's stdout and stderr, in order;
     * fewer when a frame is missing or incomplete (everything from that frame on is left to the caller).
     */
    static List<ExecResult> parse(String stdout, String stderr, String delimiter, int count) {
        List<ExecResult> out = new ArrayList<>();
        int po = 0;
        int pe = 0;
        for (int i = 0; i < count; i++) {
            String begin = delimiter + " b " + i + "\n";
            int bo = stdout.indexOf(begin, po);
            int be = stderr.indexOf(begin, pe);
            if (bo < 0 || be < 0) break;
            int so = bo + begin.length();
            int se = be + begin.length();
            String endOut = "\n" + delimiter + " e " + i + " ";
            int eo = stdout.indexOf(endOut, so);
            if (eo < 0) break;
            int nl = stdout.indexOf('\n', eo + endOut.length());
            if (nl < 0) break;
            int exit;
            try {
                exit = Integer.parseInt(stdout.substring(eo + endOut.length(), nl));
            } catch (NumberFormatException e) {
                break;
            }
            String endErr = "\n" + delimiter + " e " + i + "\n";
            int ee = stderr.indexOf(endErr, se);
            if (ee < 0) break;
            out.add(new ExecResult(exit, stdout.substring(so, eo), stderr.substring(se, ee)));
            po = nl + 1;
            pe = ee + endErr.length();
        }
        return out;
    }

    /**
     * The index of the command that was running when the script's stdout stopped: the last one whose begin line
     * is there without its end line; -1 when every begun frame had ended (or none began).
     */
    static int running(String stdout, String delimiter, int count) {
        int last = -1;
        for (int i = 0; i < count; i++) {
            if (stdout.contains(delimiter + " b " + i + "\n")) last = i;
        }
        if (last < 0 || stdout.contains("\n" + delimiter + " e " + last + " ")) return -1;
        return last;
    }
}
