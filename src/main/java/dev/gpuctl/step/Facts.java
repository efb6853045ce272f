package dev.gpuctl.step;

import dev.gpuctl.kube.Kubeadm;
import dev.gpuctl.text.Secrets;
import dev.gpuctl.remote.ExecResult;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Values learned during a run (kubeadm's version, a join token, each node's GPU count), shared by all hosts.
 * gpuctl's own commands and file templates refer to them as {@code {{key}}}; the runner substitutes them just before
 * use, and the plan shows the placeholder itself. User data is never substituted: a file whose content comes from
 * the user (a manifest) is an {@link Op.WriteFile#literal} op, written byte for byte, and an edited file's content
 * ({@link Op.EditFile}) is never expanded. Secret values are masked wherever output is shown or logged.
 */
public final class Facts {
    private static final Pattern REF = Pattern.compile("\\{\\{([a-zA-Z0-9_.-]+)}}");
    private final Map<String, String> values = new ConcurrentHashMap<>();
    private final Map<String, Boolean> secret = new ConcurrentHashMap<>();
    /** Typed facts by key name: each parsed once from the text its probe learned. */
    private final Map<String, Object> parsed = new ConcurrentHashMap<>();
    /** Per key, the last probe answer read as its record: several probes that share one answer parse it once. */
    private final Map<String, Parsed> answers = new ConcurrentHashMap<>();

    private record Parsed(String text, Object value) {}

    /**
     * This run's identity on the hosts (16 random hex digits, one per engine session): a command that does
     * something once per run per host (apt's lists refreshed: {@link Sh#aptRefresh}) records it there.
     */
    public static final String RUN_ID = "run.id";

    public Facts() {
        byte[] id = new byte[8];
        new SecureRandom().nextBytes(id);
        values.put(RUN_ID, HexFormat.of().formatHex(id));
    }

    /** Whole answers kept by their probe's key, for a command that reports them ({@link Probe#keeping}). */
    private final Map<String, ExecResult> kept = new ConcurrentHashMap<>();

    /**
     * A fact read as a record: {@code name} is the text fact a probe learns, {@code parser} the pure parser (in
     * hostfiles, kube, gpu) that reads it. {@link #get(Key)} parses it once per run; readers look it up by key and never
     * parse the text themselves.
     */
    public record Key<T>(String name, Class<T> type, Function<String, T> parser) {}

    public void put(String key, String value, boolean isSecret) {
        values.put(key, value);
        parsed.remove(key);
        if (isSecret) secret.put(key, true);
    }

    public Optional<String> get(String key) { return Optional.ofNullable(values.get(key)); }

    /** The fact as its record, parsed on first use; empty when no probe learned it. */
    public <T> Optional<T> get(Key<T> key) {
        String text = values.get(key.name());
        if (text == null) return Optional.empty();
        return Optional.of(key.type().cast(parsed.computeIfAbsent(key.name(), k -> key.parser().apply(text))));
    }

    /**
     * A probe's answer read as the key's record: several probes answered by one run of a command (one cluster read
     * serves every node's checks) get the record parsed once, since they are handed the same answer; a new answer
     * (a probe asked again while it is waited for) is parsed anew.
     */
    public <T> T answer(Key<T> key, String text) {
        Parsed last = answers.get(key.name());
        if (last != null && last.text() == text) return key.type().cast(last.value());
        T value = key.parser().apply(text);
        answers.put(key.name(), new Parsed(text, value));
        return value;
    }

    /** The last answer read as the key's record ({@link #answer}); empty when none was. */
    public <T> Optional<T> lastAnswer(Key<T> key) {
        Parsed last = answers.get(key.name());
        return last == null ? Optional.empty() : Optional.of(key.type().cast(last.value()));
    }

    /** Keeps a probe's answer under its key (the last one asked). */
    public void keep(String key, ExecResult answer) { kept.put(key, answer); }

    /** The answer kept under {@code key}; empty when its probe was not asked (its host was not reached). */
    public Optional<ExecResult> kept(String key) { return Optional.ofNullable(kept.get(key)); }

    /** Replaces every {{key}} with its value; an unknown key is an error (a step ran before what it needs). */
    public String substitute(String text) {
        Matcher m = REF.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String v = values.get(m.group(1));
            if (v == null) throw new IllegalStateException("no value for {{" + m.group(1) + "}} yet");
            m.appendReplacement(out, Matcher.quoteReplacement(v));
        }
        m.appendTail(out);
        return out.toString();
    }

    /**
     * Masks every secret value in text (for logs, progress and error messages), and anything shaped like a
     * kubeadm bootstrap token even when gpuctl did not make it (kubeadm init prints the one it creates).
     */
    public String mask(String text) {
        String out = Secrets.redact(Kubeadm.redactTokens(text));
        for (String key : secret.keySet()) {
            String v = values.get(key);
            if (v != null && !v.isEmpty()) out = out.replace(v, "<" + key + ">");
        }
        return out;
    }

    /** A reference to a fact, for use in commands and file contents: {@code {{key}}}. */
    public static String ref(String key) { return "{{" + key + "}}"; }
}
