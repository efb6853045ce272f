package dev.gpuctl.sim;

import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How long a simulated host takes: every command {@code perCommand} (its process and the shell), each
 * {@code nvidia-smi} it runs {@code perNvidiaSmi} more, each {@code kubectl} {@code perKubectl} more (what these
 * tools take on a real loaded server), and the SSH handshake once per host. {@code scale} multiplies all of it
 * (the unit test runs the same model faster).
 */
record LatencyModel(Duration perCommand, Duration perNvidiaSmi, Duration perKubectl, Duration handshake, double scale) {
    /** The model: 20 ms a command, 300 ms an nvidia-smi, 150 ms a kubectl; the handshake as measured on the bed. */
    static LatencyModel standard(Duration handshake) {
        return new LatencyModel(Duration.ofMillis(20), Duration.ofMillis(300), Duration.ofMillis(150), handshake, 1.0);
    }

    LatencyModel scaled(double by) {
        return new LatencyModel(perCommand, perNvidiaSmi, perKubectl, handshake, scale * by);
    }

    /** Where a shell starts a command: the start, after ; & | ( $( newline, then, do, else, !, or timeout N. */
    private static final String AT_COMMAND = "(?:^|[;&|({\\n]|\\$\\(|\\bthen\\b|\\bdo\\b|\\belse\\b|!)\\s*(?:timeout \\d+\\s+)?";
    private static final Pattern SMI_PATTERN = Pattern.compile(AT_COMMAND + "nvidia-smi(?![\\w.-])");
    private static final Pattern KUBECTL_PATTERN = Pattern.compile(AT_COMMAND + "kubectl(?![\\w.-])");

    /** The heavy tools #32 counts per host: nvidia-smi, kubectl, docker or crictl, systemctl show. */
    enum Tool {
        NVIDIA_SMI("nvidia-smi", SMI_PATTERN), KUBECTL("kubectl", KUBECTL_PATTERN),
        DOCKER("docker/crictl", Pattern.compile(AT_COMMAND + "(?:docker|crictl)(?![\\w.-])")),
        SYSTEMCTL_SHOW("systemctl show", Pattern.compile(AT_COMMAND + "systemctl\\s+(?:--\\S+\\s+)*show(?![\\w.-])"));

        final String label;
        final Pattern pattern;

        Tool(String label, Pattern pattern) {
            this.label = label;
            this.pattern = pattern;
        }

        int runs(String command) { return LatencyModel.runs(pattern, command); }
    }

    /** How many times {@code command} starts {@code tool} as a command (not an argument: dpkg-query kubectl, command -v). */
    static int runs(Pattern tool, String command) {
        Matcher m = tool.matcher(command);
        int n = 0;
        while (m.find()) n++;
        return n;
    }

    static int nvidiaSmiRuns(String command) { return runs(SMI_PATTERN, command); }

    static int kubectlRuns(String command) { return runs(KUBECTL_PATTERN, command); }

    /** The time the host takes for these commands (one exec, or a batch's probes), in nanoseconds. */
    long nanos(List<String> commands) {
        long n = 0;
        for (String c : commands) {
            n += perCommand.toNanos() + nvidiaSmiRuns(c) * perNvidiaSmi.toNanos() + kubectlRuns(c) * perKubectl.toNanos();
        }
        return (long) (n * scale);
    }

    long handshakeNanos() { return (long) (handshake.toNanos() * scale); }
}
