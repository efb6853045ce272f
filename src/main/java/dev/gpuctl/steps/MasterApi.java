package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The first master's API server as the control plane's, the CNI's and the device plugin's checks ask it, in one kubectl
 * process ({@link #command}): whether it answers, and whether each of gpuctl's manifests there (the CNI's; the device
 * plugin's when a node has a GPU) is applied and unchanged. With the manifests on the master, one
 * {@code kubectl diff -f A -f B} answers all of it: it compares each object, as a server-side dry-run would make it,
 * with the live one, so an edit made by hand is a difference (which an annotation gpuctl wrote at apply would not
 * show), and it succeeds only when the API server answers. Only when that finds a difference or fails is each manifest
 * diffed alone, to say which one. Before any manifest is placed (a master being initialised) it asks {@code /readyz}.
 * The steps' probes ask the same command, so one batch runs it once: in {@code gpuctl verify}, once for all of them.
 */
final class MasterApi {
    private MasterApi() {}

    /** The manifests gpuctl applies and diffs on the first master, in a fixed order: the CNI's, then the device plugin's. */
    static List<String> manifests(HostContext ctx) {
        List<String> paths = new ArrayList<>();
        paths.add(CniStep.path(ctx));
        if (!GpuStep.gpuNodes(ctx).isEmpty()) paths.add(GpuStep.path(ctx));
        return List.copyOf(paths);
    }

    /**
     * One line per fact: {@code no-admin-conf} (nothing asked), {@code missing PATH}, {@code diff STATUS PATH} (kubectl
     * diff's exit: 0 the same, 1 different, more an error), {@code readyz ANSWER} (when no manifest is there yet).
     */
    static String command(HostContext ctx) {
        StringBuilder files = new StringBuilder();
        for (String p : manifests(ctx)) files.append(' ').append(ShellWords.quote(p));
        return "if [ ! -f " + Kube.ADMIN_CONF + " ]; then echo no-admin-conf; exit 0; fi; "
            + "kube_api() { " + Kube.KUBECTL + " \"$@\"; }; "
            + "set --; for m in" + files + "; do if [ -s \"$m\" ]; then set -- \"$@\" \"$m\"; else echo \"missing $m\"; fi; done; "
            + "if [ $# -eq 0 ]; then echo \"readyz $(kube_api get --raw=/readyz 2>&1 | tr '\\n' ' ')\"; exit 0; fi; "
            + "f=; for m; do f=\"$f -f $m\"; done; kube_api diff $f >/dev/null 2>&1; s=$?; "
            + "if [ \"$s\" -ne 0 ] && [ $# -gt 1 ]; then for m; do kube_api diff -f \"$m\" >/dev/null 2>&1; echo \"diff $? $m\"; done; "
            + "else for m; do echo \"diff $s $m\"; done; fi";
    }

    /**
     * What {@link #command} printed.
     *
     * @param adminConf false when admin.conf is missing (the control plane is not initialised; nothing was asked)
     * @param readyz    /readyz's answer on one line, when it was asked (no manifest on the master yet)
     * @param diffs     each manifest's path to kubectl diff's exit status as text, or "missing"
     */
    record Answer(boolean adminConf, Optional<String> readyz, Map<String, String> diffs) {
        Answer {
            diffs = Map.copyOf(diffs);
        }

        static Answer parse(String text) {
            boolean adminConf = true;
            Optional<String> readyz = Optional.empty();
            Map<String, String> diffs = new LinkedHashMap<>();
            for (String line : text.split("\n")) {
                if (line.equals("no-admin-conf")) adminConf = false;
                else if (line.startsWith("readyz ")) readyz = Optional.of(line.substring(7).strip());
                else if (line.startsWith("missing ")) diffs.put(line.substring(8), "missing");
                else if (line.startsWith("diff ")) {
                    String[] f = line.split(" ", 3);
                    if (f.length == 3) diffs.put(f[2], f[1]);
                }
            }
            return new Answer(adminConf, readyz, diffs);
        }

        /** Whether the API server answered: /readyz said ok, or a diff got an answer (same or different). */
        Optional<String> apiProblem() {
            if (!adminConf) return Optional.of("got '', expected 'ok' (" + Kube.ADMIN_CONF + " is missing)");
            if (readyz.isPresent()) {
                return readyz.get().equals("ok") ? Optional.empty() : Optional.of("got '" + Probe.oneLine(readyz.get()) + "', expected 'ok'");
            }
            if (diffs.values().stream().anyMatch(s -> s.equals("0") || s.equals("1"))) return Optional.empty();
            String status = diffs.values().stream().filter(s -> !s.equals("missing")).findFirst().orElse("none");
            return Optional.of("kubectl diff of gpuctl's manifests failed (exit " + status + ")"
                + (status.equals("127") ? ": kubectl is not installed" : ": the API server does not answer"));
        }

        /** What is wrong with one manifest, as {@link Manifest#applied} says it. */
        Optional<String> manifestProblem(String path) {
            if (!adminConf) return Optional.of("the cluster cannot be asked: " + Kube.ADMIN_CONF + " is missing");
            String s = diffs.getOrDefault(path, "missing");
            return switch (s) {
                case "0" -> Optional.empty();
                case "1" -> Optional.of("the cluster differs from " + path);
                case "missing" -> Optional.of(path + " is not on the master yet");
                case "127" -> Optional.of("kubectl is not installed");
                default -> Optional.of("kubectl diff failed (exit " + s + "): is the API server up?");
            };
        }
    }

    /**
     * The question {@link #command} answers, as the engine keeps its answer for a later round of the same run
     * ({@link Probe#reusedAs}): the control plane's and the CNI's checks ask it in one round, the device plugin's in
     * the GPU round, which is given the first round's answer while nothing was applied on the master since. Only gpuctl
     * applies these manifests; a change by hand between two rounds of one run is seen by the next run.
     */
    static final Facts.Key<Answer> QUESTION = new Facts.Key<>("master api and manifest diffs", Answer.class, Answer::parse);

    /** The API server answers (the control plane's check); a wrong answer is worth waiting for once admin.conf is there. */
    static Probe answers(HostContext ctx) {
        return Probe.of("API server answers (kubectl: the diff of gpuctl's manifests, or /readyz before they are placed)",
                command(ctx), r -> Answer.parse(r.stdout()).apiProblem())
            .waitingWhileStarting(Sh.UNIT_START_WAIT, MasterApi::starting).reusedAs(QUESTION);
    }

    /** Initialised, so a wrong answer is the API server still starting (after a boot, after kubeadm init). */
    static boolean starting(ExecResult r) { return Answer.parse(r.stdout()).adminConf(); }

    /** {@code what} is applied from {@code path} and the cluster still matches it (kubectl diff). */
    static Probe applied(HostContext ctx, String what, String path) {
        return Probe.of(what + " applied and unchanged (kubectl diff)", command(ctx), r -> Answer.parse(r.stdout()).manifestProblem(path))
            .reusedAs(QUESTION);
    }
}
