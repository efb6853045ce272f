package dev.gpuctl.text;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Shared JSON reading and writing for the parsers of host files and tools' output: strict parsing with line/column errors. */
public final class JsonText {

    /**
     * The shared {@link Json#MAPPER}'s reader made strict: a duplicate key, or anything after the value, is an error;
     * numbers kept exactly as written.
     */
    private static final ObjectReader STRICT = Json.MAPPER.reader()
            .with(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .with(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .with(JsonNodeFactory.withExactBigDecimals(true));

    private static final DefaultPrettyPrinter PRETTY;

    static {
        DefaultIndenter indenter = new DefaultIndenter("  ", "\n");
        PRETTY = new DefaultPrettyPrinter(Separators.createDefaultInstance()
                .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
                .withObjectEmptySeparator("")
                .withArrayEmptySeparator(""))
                .withObjectIndenter(indenter)
                .withArrayIndenter(indenter);
    }

    private JsonText() {
    }

    /**
     * Parses one JSON value.
     *
     * @param what names the source in messages, e.g. "daemon.json"
     * @param hint the advice appended to a syntax error, e.g. "fix or move it, gpuctl does not replace it"
     */
    public static JsonNode parse(String text, String what, String hint) {
        try {
            JsonNode node = STRICT.readTree(text);
            if (node == null || node.isMissingNode()) {
                throw new HostConfException(what + " is empty where JSON was expected" + suffix(hint));
            }
            return node;
        } catch (JsonProcessingException e) {
            throw syntaxError(e, what, hint);
        }
    }

    /** Parses a stream of whitespace-separated JSON values (as kubeadm prints one object per item). */
    public static List<JsonNode> parseStream(String text, String what, String hint) {
        List<JsonNode> values = new ArrayList<>();
        try (MappingIterator<JsonNode> it = STRICT.forType(JsonNode.class)
                .without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).readValues(text)) {
            while (it.hasNextValue()) {
                values.add(it.nextValue());
            }
        } catch (JsonProcessingException e) {
            throw syntaxError(e, what, hint);
        } catch (IOException e) {
            throw new HostConfException(what + " could not be read as JSON: " + e.getMessage() + suffix(hint), e);
        }
        return values;
    }

    /**
     * Parses consecutive JSON values as they are ({@code [..] [..]}: two lists; {@link #parseStream} would give the
     * first list's items), for a probe whose command prints one value after another.
     */
    public static List<JsonNode> parseValues(String text, String what) {
        List<JsonNode> values = new ArrayList<>();
        try (JsonParser p = STRICT.createParser(text)) {
            var reader = STRICT.without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
            while (p.nextToken() != null) values.add(reader.readTree(p));
        } catch (JsonProcessingException e) {
            throw syntaxError(e, what, null);
        } catch (IOException e) {
            throw new HostConfException(what + " could not be read as JSON: " + e.getMessage(), e);
        }
        return values;
    }

    /** Two-space indented JSON ("key": value), "\n" line ends, a final newline. */
    public static String pretty(JsonNode node) {
        try {
            return Json.MAPPER.writer(PRETTY).writeValueAsString(node) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree could not be written", e);
        }
    }

    static HostConfException syntaxError(JsonProcessingException e, String what, String hint) {
        JsonLocation loc = e.getLocation();
        String where = loc == null ? "" : " at line " + loc.getLineNr() + " column " + loc.getColumnNr();
        String detail = e.getOriginalMessage();
        if (e instanceof JsonParseException || detail != null) {
            detail = detail == null ? e.getMessage() : detail.lines().findFirst().orElse(detail);
        }
        return new HostConfException(what + " is not valid JSON" + where + ": " + detail + suffix(hint), e);
    }

    /** The JSON type of a node in words, for messages. */
    public static String typeName(JsonNode node) {
        if (node == null || node.isMissingNode()) return "nothing";
        if (node.isObject()) return "an object";
        if (node.isArray()) return "a list";
        if (node.isTextual()) return "a string";
        if (node.isNumber()) return "a number";
        if (node.isBoolean()) return "a boolean";
        if (node.isNull()) return "null";
        return node.getNodeType().toString().toLowerCase(Locale.ROOT);
    }

    private static String suffix(String hint) {
        return hint == null || hint.isEmpty() ? "" : "; " + hint;
    }
}
