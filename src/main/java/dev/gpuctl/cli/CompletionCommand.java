package dev.gpuctl.cli;

import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "completion",
    description = {"Print a shell completion script.",
        "For bash: source <(gpuctl completion bash); for zsh: source <(gpuctl completion zsh)."})
final class CompletionCommand implements Runnable {
    enum Shell { bash, zsh }

    @Parameters(index = "0", paramLabel = "SHELL", description = "bash or zsh") Shell shell;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public void run() {
        String bash = AutoComplete.bash("gpuctl", spec.parent().commandLine());
        spec.commandLine().getOut().print(shell == Shell.zsh ? zsh(bash) : bash);
        spec.commandLine().getOut().flush();
    }

    /**
     * The zsh script: zsh's completion system and its bash compatibility (bashcompinit) loaded first, then picocli's
     * completion function, which zsh then runs through {@code complete}, as picocli documents for zsh. A shell whose
     * completion system is already initialised keeps it (compinit is not run again).
     */
    static String zsh(String bashScript) {
        return "#compdef gpuctl\n"
            + "# zsh completion for gpuctl. Load it with: source <(gpuctl completion zsh)\n"
            + "(( $+functions[compdef] )) || { autoload -U +X compinit && compinit; }\n"
            + "(( $+functions[complete] )) || { autoload -U +X bashcompinit && bashcompinit; }\n"
            + bashScript;
    }
}
