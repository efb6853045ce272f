package dev.gpuctl.workload;

import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.KubeFields;
import dev.gpuctl.remote.ExecResult;
import java.util.Map;
import java.util.Optional;

/**
 * What the master answered to the kubectl commands a job command asked on the engine (its workflow's session, the
 * master's admin.conf: this machine needs no kubeconfig), each whole answer by its command. Read here the way every
 * job command reads them: stdout, or a {@link WorkloadException} naming the host, the command and its stderr.
 */
public record MasterAnswers(String host, Map<String, ExecResult> byCommand) {
    public MasterAnswers {
        byCommand = Map.copyOf(byCommand);
    }

    /** The command that {@link #kubectl} reads: kubectl ARGS with the master's admin.conf. */
    public static String command(String args) { return Kube.kubectl(args); }

    /** The command that {@link #fields} reads. */
    public static String command(String args, KubeFields.Query query) { return command(args + " " + query.outputFlag()); }

    /** kubectl ARGS's stdout; a failure names the host, command and stderr, then {@code next}. */
    public String kubectl(String args, String next) {
        String command = command(args);
        ExecResult r = answer(command, next);
        if (!r.ok()) throw WorkloadException.failed(host, command, r, next);
        return r.stdout();
    }

    /** kubectl ARGS asking for the query's fields; the answer as {@code -o json}-shaped list text. */
    public String fields(String args, KubeFields.Query query, String next) {
        String out = kubectl(args + " " + query.outputFlag(), next);
        try {
            return query.json(out);
        } catch (IllegalArgumentException e) {
            throw new WorkloadException(host + ": kubectl " + args + ": " + e.getMessage() + ". " + next);
        }
    }

    private ExecResult answer(String command, String next) {
        return Optional.ofNullable(byCommand.get(command))
            .orElseThrow(() -> new WorkloadException(host + ": `" + command + "` was not asked. " + next));
    }

    /**
     * A change the session made on the master failed ({@code detail}: its stderr's tail as the engine kept it): the
     * same words as a failed question, ending with {@code next}.
     */
    public static WorkloadException changeFailed(String host, String command, int exit, String detail, String next) {
        return WorkloadException.failed(host, command, new ExecResult(exit, "", detail), next);
    }
}
