package dev.gpuctl.gpu;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.text.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code dcgmi diag -r 1 -j}, NVIDIA DCGM's quick health test, read. DCGM's JSON (its nvvs {@code JsonOutput}):
 * <pre>
 * {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Deployment|Hardware|Integration|Performance|Custom",
 *   "tests": [{"name": N, "results": [{"gpu_ids"|"gpu_id": "0", "status": "Pass|Fail|Warn|Skip",
 *     "warnings": ["text" | {"warning": "text", "error_id": N}], "info": [...]}]}]}], "version": V}}
 * </pre>
 * DCGM 4 also writes the tests at the top level ({@code "tests"}, results naming {@code entity_id}, statuses in lower
 * case): both are read. dcgmi may print a line before the document ("Successfully ran diagnostic for group."). Pure.
 */
public final class DcgmDiag {
    private DcgmDiag() {}

    /** What {@link #COMMAND} prints on a host without DCGM. */
    public static final String NOT_INSTALLED = "dcgmi: not installed";

    /**
     * The proof's command: the quick test when dcgmi is installed, else the line {@link #NOT_INSTALLED} (the proof says
     * it was skipped). dcgmi needs DCGM's host engine (nv-hostengine) running; gpuctl starts nothing for it.
     */
    public static final String COMMAND = "if command -v dcgmi >/dev/null 2>&1; then dcgmi diag -r 1 -j 2>&1; else echo '" + NOT_INSTALLED + "'; fi";

    /** One test's result on one GPU (or on all, for the software/deployment tests: {@code gpu} then lists them). */
    public record Result(String category, String test, String gpu, String status, List<String> warnings) {
        public Result { warnings = List.copyOf(warnings); }

        /** "fail" (and DCGM's "error"): the test failed. */
        public boolean failed() { return status.equals("fail") || status.equals("error"); }
    }

    /** The whole run: its results, and DCGM's version when it says. */
    public record Report(String version, List<Result> results) {
        public Report { results = List.copyOf(results); }

        public List<Result> failures() { return results.stream().filter(Result::failed).toList(); }
        public List<Result> warnings() { return results.stream().filter(r -> r.status().equals("warn")).toList(); }
    }

    /** The report in dcgmi's answer, or why there is none (not JSON, an error message from dcgmi). */
    public static Report parse(String answer) throws IllegalArgumentException {
        int start = answer.indexOf('{');
        if (start < 0) throw new IllegalArgumentException("no JSON in dcgmi's answer: " + oneLine(answer));
        JsonNode root;
        try {
            root = Json.MAPPER.readTree(answer.substring(start));
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("dcgmi's answer is not JSON: " + oneLine(answer));
        }
        if (root == null || !root.isObject()) throw new IllegalArgumentException("dcgmi's answer is not a JSON object: " + oneLine(answer));
        JsonNode doc = root.has("DCGM GPU Diagnostic") ? root.get("DCGM GPU Diagnostic") : root.has("DCGM Diagnostic") ? root.get("DCGM Diagnostic") : root;
        List<Result> out = new ArrayList<>();
        for (JsonNode cat : doc.path("test_categories")) tests(cat.path("category").asText(""), cat.path("tests"), out);
        tests("", doc.path("tests"), out);
        if (out.isEmpty()) throw new IllegalArgumentException("dcgmi's answer holds no test result: " + oneLine(answer));
        return new Report(doc.path("version").asText(root.path("version").asText("")), out);
    }

    private static void tests(String category, JsonNode tests, List<Result> out) {
        for (JsonNode t : tests) {
            String name = t.path("name").asText("?");
            String cat = category.isEmpty() ? t.path("category").asText("") : category;
            for (JsonNode r : t.path("results")) {
                String gpu = r.has("gpu_ids") ? r.get("gpu_ids").asText() : r.has("gpu_id") ? r.get("gpu_id").asText()
                    : r.has("entity_id") ? r.get("entity_id").asText() : "";
                List<String> warnings = new ArrayList<>();
                for (JsonNode w : r.path("warnings")) warnings.add(w.isTextual() ? w.asText() : w.path("warning").asText(w.path("message").asText(w.toString())));
                out.add(new Result(cat, name, gpu, status(r.path("status").asText("")), warnings));
            }
        }
    }

    /** DCGM's status words ("Pass", "PASS", "pass", "Skip", "SKIPPED") in one form: pass, fail, warn, skip, error, or as written. */
    static String status(String s) {
        String l = s.strip().toLowerCase(Locale.ROOT);
        if (l.startsWith("skip") || l.equals("not run")) return "skip";
        if (l.startsWith("pass")) return "pass";
        if (l.startsWith("fail")) return "fail";
        if (l.startsWith("warn")) return "warn";
        return l;
    }

    /**
     * What is wrong with {@link #COMMAND}'s answer: each failed test with its GPU and first warning; empty when every
     * test passed (or was skipped), and when dcgmi is not installed (the caller says it was skipped).
     */
    public static Optional<String> problem(String answer) {
        if (answer.strip().equals(NOT_INSTALLED)) return Optional.empty();
        Report r;
        try {
            r = parse(answer);
        } catch (IllegalArgumentException e) {
            return Optional.of(e.getMessage() + " (is nv-hostengine running? `systemctl status nvidia-dcgm`)");
        }
        List<Result> failed = r.failures();
        if (failed.isEmpty()) return Optional.empty();
        return Optional.of("dcgmi diag -r 1 failed " + failed.size() + " test(s): " + String.join("; ", failed.stream()
            .map(f -> f.test() + (f.gpu().isEmpty() ? "" : " on GPU " + f.gpu()) + (f.warnings().isEmpty() ? "" : ": " + oneLine(f.warnings().get(0))))
            .toList()));
    }

    /** One line for people: how the quick test went (skipped without dcgmi). */
    public static String summary(String answer) {
        if (answer.strip().equals(NOT_INSTALLED)) return "dcgmi diag -r 1: skipped (DCGM is not installed on the host)";
        try {
            Report r = parse(answer);
            return "dcgmi diag -r 1" + (r.version().isEmpty() ? "" : " (DCGM " + r.version() + ")") + ": " + r.results().size() + " result(s), "
                + r.failures().size() + " failed, " + r.warnings().size() + " warning(s)";
        } catch (IllegalArgumentException e) {
            return "dcgmi diag -r 1: " + e.getMessage();
        }
    }

    static String oneLine(String s) {
        String t = s.strip().replaceAll("\\s+", " ");
        return t.length() > 200 ? t.substring(0, 200) + "..." : t;
    }
}
