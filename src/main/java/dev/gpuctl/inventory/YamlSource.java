package dev.gpuctl.inventory;

import java.io.StringReader;
import java.util.Optional;
import java.util.function.BiFunction;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.events.AliasEvent;
import org.yaml.snakeyaml.events.CollectionEndEvent;
import org.yaml.snakeyaml.events.CollectionStartEvent;
import org.yaml.snakeyaml.events.Event;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.representer.Representer;

/**
 * Parses inventory text into a YAML node tree, with positions, and never into objects: no type is
 * ever instantiated from the file. Limits: 1 Mi code points, 50 aliases (of scalars and collections alike),
 * nesting depth 32, one document, no recursive keys. A file over a limit is one problem, at the place it went over.
 */
public final class YamlSource {
    static final int CODE_POINT_LIMIT = 1024 * 1024;
    static final int NESTING_DEPTH_LIMIT = 32;
    /** Aliases ({@code *name}) in one file: snakeyaml caps those of collections only, a scalar's are counted here. */
    static final int ALIAS_LIMIT = 50;

    private YamlSource() {}

    /**
     * Reads a whole file's text (a BOM dropped) with {@code reader}: every problem it or the YAML parser reports,
     * anything it throws, or a document with nothing in it, ends in one {@link InventoryException}.
     *
     * @param what     "the inventory", "the job spec": names the file's kind in messages
     * @param expected the top-level keys, for the message about an empty file
     */
    public static <T> T read(String displayName, String text, String what, String expected,
                      BiFunction<Node, Problems, Optional<T>> reader) {
        Problems problems = new Problems(displayName);
        Optional<T> result = Optional.empty();
        try {
            String body = text.startsWith("\uFEFF") ? text.substring(1) : text;
            result = compose(body, problems).flatMap(root -> reader.apply(root, problems));
        } catch (RuntimeException | StackOverflowError e) {
            problems.whole("cannot read " + what + ": " + e);
        }
        if (problems.any() || result.isEmpty()) {
            if (!problems.any()) problems.whole(what + " is empty (expected " + expected + ")");
            throw new InventoryException(problems.sorted());
        }
        return result.get();
    }

    /** The document's root node, or empty when the text is not valid YAML (reported) or has no document. */
    static Optional<Node> compose(String text, Problems problems) {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        options.setMaxAliasesForCollections(50);
        options.setCodePointLimit(CODE_POINT_LIMIT);
        options.setAllowRecursiveKeys(false);
        options.setNestingDepthLimit(NESTING_DEPTH_LIMIT);
        options.setProcessComments(false);
        DumperOptions dumper = new DumperOptions();
        Yaml yaml = new Yaml(new SafeConstructor(options), new Representer(dumper), dumper, options);
        if (overLimits(yaml, text, problems)) return Optional.empty();
        try {
            return Optional.ofNullable(yaml.compose(new StringReader(text)));
        } catch (MarkedYAMLException e) {
            Mark mark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
            problems.at(mark, "invalid YAML: " + describe(e));
        } catch (YAMLException e) {
            problems.whole("invalid YAML: " + e.getMessage());
        }
        return Optional.empty();
    }

    /**
     * Counts aliases and nesting in the parser's events (no tree is built): the {@value #ALIAS_LIMIT}+1st alias and
     * the first collection deeper than {@value #NESTING_DEPTH_LIMIT} are reported at their place, and reading stops
     * there (the parser's cost grows with the square of the nesting). A file that does not parse is left to
     * {@link Yaml#compose}, which says where and why.
     */
    private static boolean overLimits(Yaml yaml, String text, Problems problems) {
        int aliases = 0;
        int depth = 0;
        try {
            for (Event e : yaml.parse(new StringReader(text))) {
                if (e instanceof CollectionStartEvent && ++depth > NESTING_DEPTH_LIMIT) {
                    problems.at(e.getStartMark(), "nested deeper than " + NESTING_DEPTH_LIMIT + " levels (an inventory needs"
                        + " fewer than 10)");
                    return true;
                }
                if (e instanceof CollectionEndEvent) depth--;
                if (e instanceof AliasEvent && ++aliases > ALIAS_LIMIT) {
                    problems.at(e.getStartMark(), "more than " + ALIAS_LIMIT + " aliases (*name) in one file"
                        + " (write the values out, or use fewer aliases)");
                    return true;
                }
            }
        } catch (YAMLException e) {
            return false;
        }
        return false;
    }

    /** snakeyaml's problem, and its context ("while scanning a simple key at line 3") when there is one. */
    private static String describe(MarkedYAMLException e) {
        String problem = e.getProblem() == null ? "syntax error" : e.getProblem().strip();
        String context = e.getContext();
        if (context == null || context.isBlank()) return problem;
        Mark at = e.getContextMark();
        boolean elsewhere = at != null && e.getProblemMark() != null && at.getLine() != e.getProblemMark().getLine();
        String where = elsewhere ? " at line " + (at.getLine() + 1) + ", column " + (at.getColumn() + 1) : "";
        if (problem.startsWith("but ")) return context.strip() + where + ", " + problem;
        return problem + " (" + context.strip() + where + ")";
    }
}
