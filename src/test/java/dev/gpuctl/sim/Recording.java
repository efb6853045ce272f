package dev.gpuctl.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the hosts of a bootstrapped bed cluster answered, made by {@code bench/sim-record.py} from gpuctl's host logs
 * of a no-op re-run and a verify: per role (master, worker), each command (host-specific parts as tokens, masked as
 * gpuctl's logs mask it) with the step that asked it, its exit status and output. A hold entry answers
 * {@code Remote.hold} for the commands that start with its text (the bootstrap lock).
 */
record Recording(Map<String, Map<String, Answer>> byRole, List<Answer> holds) {
    /** The resource the simulation answers from by default. */
    static final String RESOURCE = "/sim/bed-recording.jsonl";

    record Answer(String role, String mode, String step, String command, int exit, String stdout, String stderr) {}

    static Recording load() {
        try (InputStream in = Recording.class.getResourceAsStream(RESOURCE)) {
            if (in == null) throw new IllegalStateException("the recording " + RESOURCE + " is not on the class path");
            return parse(new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)).lines().toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Recording parse(List<String> lines) {
        ObjectMapper json = new ObjectMapper();
        Map<String, Map<String, Answer>> byRole = new HashMap<>();
        List<Answer> holds = new ArrayList<>();
        int n = 0;
        for (String line : lines) {
            n++;
            if (line.isBlank()) continue;
            JsonNode o;
            try {
                o = json.readTree(line);
            } catch (IOException e) {
                throw new IllegalArgumentException(RESOURCE + ":" + n + ": not JSON: " + e.getMessage(), e);
            }
            Answer a = new Answer(o.path("role").asText(), o.path("mode").asText(), o.path("step").asText(),
                o.path("command").asText(), o.path("exit").asInt(), o.path("stdout").asText(), o.path("stderr").asText());
            if (o.path("hold").asBoolean(false)) {
                holds.add(a);
            } else {
                byRole.computeIfAbsent(a.role(), k -> new HashMap<>()).putIfAbsent(a.command(), a);
            }
        }
        return new Recording(byRole, holds);
    }

    Optional<Answer> answer(String role, String normalizedCommand) {
        return Optional.ofNullable(byRole.getOrDefault(role, Map.of()).get(normalizedCommand));
    }

    Optional<Answer> hold(String role, String command) {
        return holds.stream().filter(h -> h.role().equals(role) && command.startsWith(h.command())).findFirst();
    }
}
