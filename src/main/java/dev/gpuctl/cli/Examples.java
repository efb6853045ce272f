package dev.gpuctl.cli;

import java.util.List;
import java.util.Map;

/**
 * The Examples section of each command's --help (picocli's footer, shown before the exit codes). Every line that
 * starts with "gpuctl " is a command line this version parses (CliHelpTest parses each one).
 */
final class Examples {
    private Examples() {}

    static final Map<String, List<String>> BY_COMMAND = Map.ofEntries(
        Map.entry("gpuctl", List.of(
            "gpuctl plan inventory.yaml                 # what bootstrap would do, offline",
            "gpuctl bootstrap --dry-run inventory.yaml  # connect, check, change nothing",
            "gpuctl bootstrap inventory.yaml",
            "gpuctl verify inventory.yaml               # after a reboot or an update")),
        Map.entry("gpuctl plan", List.of(
            "gpuctl plan inventory.yaml",
            "gpuctl plan --details --hosts worker-1 --only runtime,packages inventory.yaml",
            "gpuctl plan --json inventory.yaml > plan.json")),
        Map.entry("gpuctl bootstrap", List.of(
            "gpuctl bootstrap --dry-run inventory.yaml",
            "gpuctl bootstrap --accept-new-host-keys inventory.yaml   # new hosts",
            "gpuctl bootstrap --only gpu --hosts master inventory.yaml",
            "gpuctl bootstrap --command-timeout 20m --wait-timeout 10m inventory.yaml")),
        Map.entry("gpuctl join-token", List.of(
            "gpuctl join-token inventory.yaml",
            "gpuctl join-token --refresh --ttl 2h inventory.yaml")),
        Map.entry("gpuctl verify", List.of(
            "gpuctl verify inventory.yaml",
            "gpuctl verify --hosts worker-1 --wait-timeout 5m inventory.yaml",
            "gpuctl verify --json inventory.yaml > verify.json")),
        Map.entry("gpuctl certs", List.of(
            "gpuctl certs check inventory.yaml",
            "gpuctl certs renew inventory.yaml")),
        Map.entry("gpuctl certs check", List.of(
            "gpuctl certs check inventory.yaml")),
        Map.entry("gpuctl certs renew", List.of(
            "gpuctl certs renew --dry-run inventory.yaml",
            "gpuctl certs renew inventory.yaml")),
        Map.entry("gpuctl upgrade", List.of(
            "gpuctl upgrade --dry-run inventory.yaml   # target, batches, commands",
            "gpuctl upgrade inventory.yaml             # one worker at a time",
            "gpuctl upgrade --to 1.35.1 --drain-timeout 30m inventory.yaml")),
        Map.entry("gpuctl queue", List.of(
            "gpuctl queue inventory.yaml     # quota, in use, borrowed, lent",
            "gpuctl queue --team vision inventory.yaml",
            "gpuctl queue --json inventory.yaml")),
        Map.entry("gpuctl usage", List.of(
            "gpuctl usage inventory.yaml     # GPU-hours per team, last 30 days",
            "gpuctl usage --since 7d --by person inventory.yaml",
            "gpuctl usage --csv inventory.yaml > usage.csv")),
        Map.entry("gpuctl gpus", List.of(
            "gpuctl gpus inventory.yaml               # 3s sample; IDLE: held, unused",
            "gpuctl gpus --sample 10s inventory.yaml  # a longer window",
            "gpuctl gpus --sample 0 inventory.yaml    # allocation only",
            "gpuctl gpus --json inventory.yaml")),
        Map.entry("gpuctl job", List.of(
            "gpuctl job render train.yaml inventory.yaml",
            "gpuctl job submit train.yaml inventory.yaml")),
        Map.entry("gpuctl job render", List.of(
            "gpuctl job render train.yaml inventory.yaml > train-job.yaml")),
        Map.entry("gpuctl job submit", List.of(
            "gpuctl job submit train.yaml inventory.yaml")),
        Map.entry("gpuctl job list", List.of(
            "gpuctl job list inventory.yaml",
            "gpuctl job list -n team-a inventory.yaml")),
        Map.entry("gpuctl job logs", List.of(
            "gpuctl job logs train-42 inventory.yaml",
            "gpuctl job logs train-42 -n team-a --tail 100 inventory.yaml")),
        Map.entry("gpuctl job delete", List.of(
            "gpuctl job delete train-42 inventory.yaml")),
        Map.entry("gpuctl kubeconfig", List.of(
            "gpuctl kubeconfig inventory.yaml > lab.conf    # as the master has it now",
            "gpuctl kubeconfig --merge inventory.yaml       # into ~/.kube/config",
            "gpuctl kubeconfig --merge --context lab --kubeconfig ~/lab.conf inv.yaml")),
        Map.entry("gpuctl backup", List.of(
            "gpuctl backup inventory.yaml             # to .gpuctl/backups/, 5 kept",
            "gpuctl backup --out /safe/lab.tar.gz --keep 10 inventory.yaml")),
        Map.entry("gpuctl restore", List.of(
            "gpuctl restore .gpuctl/backups/lab-20261204T061500Z.tar.gz inventory.yaml",
            "gpuctl restore --force lab.tar.gz inventory.yaml   # over a running cluster")),
        Map.entry("gpuctl drain", List.of(
            "gpuctl drain -i inventory.yaml worker-2           # waits for GPU jobs",
            "gpuctl drain -i inventory.yaml --drain-timeout 2h worker-2",
            "gpuctl drain -i inventory.yaml --force worker-2   # evicts them")),
        Map.entry("gpuctl uncordon", List.of(
            "gpuctl uncordon -i inventory.yaml worker-2")),
        Map.entry("gpuctl repair", List.of(
            "gpuctl repair -i inventory.yaml --dry-run worker-2   # diagnosis and plan",
            "gpuctl repair -i inventory.yaml worker-2",
            "gpuctl repair -i inventory.yaml --reboot --drain-timeout 2h worker-2")),
        Map.entry("gpuctl remove-node", List.of(
            "gpuctl remove-node -i inventory.yaml worker-2",
            "gpuctl remove-node -i inventory.yaml --force worker-2",
            "gpuctl remove-node -i inventory.yaml --restore-host --dry-run worker-2",
            "gpuctl remove-node -i inventory.yaml --restore-host worker-2")),
        Map.entry("gpuctl reset", List.of(
            "gpuctl reset --dry-run inventory.yaml",
            "gpuctl reset inventory.yaml           # asks for the cluster's name",
            "gpuctl reset --yes inventory.yaml",
            "gpuctl reset --yes --restore-host inventory.yaml")),
        Map.entry("gpuctl completion", List.of(
            "source <(gpuctl completion bash)                        # bash, this shell",
            "source <(gpuctl completion zsh)                         # zsh, this shell",
            "echo 'source <(gpuctl completion zsh)' >> ~/.zshrc      # zsh, every new shell")));

    /** The examples of a command (by its qualified name, "gpuctl plan"); empty for one without any. */
    static List<String> of(String qualifiedName) {
        return BY_COMMAND.getOrDefault(qualifiedName, List.of());
    }
}
