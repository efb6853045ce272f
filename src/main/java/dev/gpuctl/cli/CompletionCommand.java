package dev.gpuctl.cli;

import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "completion",
    description = {"Print a shell completion script.",
        "bash: source <(gpuctl completion bash)   zsh: autoload -U bashcompinit && bashcompinit && source <(gpuctl completion zsh)"})
final class CompletionCommand implements Runnable {
    enum Shell { bash, zsh }

    @Parameters(index = "0", paramLabel = "SHELL", description = "bash or zsh") Shell shell;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    @Override public void run() {
        // picocli's script serves bash and, through bashcompinit, zsh.
        String script = AutoComplete.bash("gpuctl", spec.parent().commandLine());
        spec.commandLine().getOut().print(script);
        spec.commandLine().getOut().flush();
    }
}
