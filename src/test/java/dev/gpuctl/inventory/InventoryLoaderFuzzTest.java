package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Mutated inventories: the loader either loads them or throws InventoryException with positioned errors. */
class InventoryLoaderFuzzTest {
    private static final String GOOD = """
        cluster:
          name: gpu-lab
          kubernetesVersion: "1.35"
          runtime: docker
          cni: flannel
          podCidr: 10.244.0.0/16
          siteNetworks: [172.16.0.0/16]
          devicePlugin: { version: v0.20.0 }
        ssh: { user: root, port: 22, bastion: { address: jump } }
        nodes:
          - { name: master,   address: 172.16.10.90,  role: master }
          - { name: worker-1, address: 172.16.10.100, role: worker, labels: { team: vision } }
          - name: worker-2
            address: "fd00::5"
            role: worker
            ssh: { hostKey: "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8" }
        storage:
          nfs:
            server: master
            exports:
              - { path: /export/dataset, readOnly: true }
        """;
    private static final String PIECES = " :-[]{}&*!|>'\"#%@`,?\t\n~<<\\0x1.35/\u00e9\uFEFF\u0000";

    @Test void mutatedInventoriesNeverThrowAnythingElse() {
        Random random = new Random(20240611);
        int loaded = 0;
        for (int i = 0; i < 3000; i++) {
            String text = mutate(GOOD, random);
            try {
                InventoryLoader.parse("fuzz.yaml", text, Path.of("/nonexistent"), Map.of("HOME", "/home/x"));
                loaded++;
            } catch (InventoryException e) {
                assertFalse(e.errors().isEmpty());
                for (InventoryError err : e.errors()) {
                    // a position for every problem in the text; "FILE: message" only when YAML itself gave none
                    String f = err.format();
                    if (!f.matches("(?s)fuzz\\.yaml:\\d+:\\d+: .+") && !f.matches("(?s)fuzz\\.yaml: .+")) {
                        fail("mutation " + i + ": unpositioned or empty message '" + f + "' for:\n" + text);
                    }
                    if (err.line() > 0 && err.line() > text.split("\n", -1).length + 1) {
                        fail("mutation " + i + ": line " + err.line() + " beyond the end of the text: " + f);
                    }
                }
            } catch (RuntimeException | StackOverflowError e) {
                fail("mutation " + i + " escaped with " + e + " for:\n" + text, e);
            }
        }
        assertTrue(loaded > 0 && loaded < 3000, "some mutations load, most do not: " + loaded);
    }

    private static InventoryException refused(String text) {
        try {
            InventoryLoader.parse("hostile.yaml", text, Path.of("/nonexistent"), Map.of("HOME", "/home/x"));
        } catch (InventoryException e) {
            return e;
        } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
            fail("escaped with " + e, e);
        }
        return fail("loaded: " + text.substring(0, Math.min(200, text.length())));
    }

    private static final String HEAD = "cluster: { name: gpu-lab, kubernetesVersion: \"1.35\" }\n"
        + "nodes: [ { name: m, address: 10.0.0.1, role: master } ]\n";

    /** The case that once printed 258 MB: a 250 KB file whose one 5,000-character scalar is aliased 50,000 times. */
    @Test void aScalarAliased50000TimesIsOneBoundedProblem() {
        String text = HEAD.replace("name: m,", "name: m, labels: { big: &v " + "x".repeat(5000) + " },")
            + "storage: { nfs: { server: m, exports: [" + "*v , ".repeat(50_000) + "*v] } }\n";
        assertTrue(text.length() > 250_000 && text.length() < 260_000, "the case as reported: " + text.length());
        long start = System.nanoTime();
        InventoryException e = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> refused(text));
        long ms = (System.nanoTime() - start) / 1_000_000;
        String shown = e.getMessage();
        assertTrue(shown.length() < 2_000, () -> shown.length() + " characters: " + shown.substring(0, 500));
        assertTrue(shown.contains("more than 50 aliases"), shown);
        assertEquals(1, shown.lines().count(), shown);
        System.out.println("50,000 aliases of a 5,000-character scalar: refused in " + ms + " ms, " + shown.length() + " characters");
    }

    /** Without aliases: 150 problems, each quoting a 5,000-character value, print 50 short lines and a count. */
    @Test void manyProblemsWithHugeValuesPrintFiftyShortLinesAndACount() {
        StringBuilder labels = new StringBuilder();
        for (int i = 0; i < 150; i++) labels.append("l").append(i).append(": ").append("x/".repeat(2500)).append(", ");
        String text = HEAD.replace("name: m,", "name: m, labels: { " + labels + "},");
        InventoryException e = refused(text);
        assertEquals(150, e.errors().size(), () -> e.getMessage().substring(0, 300));
        List<String> lines = e.getMessage().lines().toList();
        assertEquals(51, lines.size(), e.getMessage().substring(0, 500));
        assertEquals("and 100 more problems", lines.get(50));
        for (String line : lines) assertTrue(line.length() < 400, line);
        assertTrue(lines.get(0).contains("…' (5000 characters)"), lines.get(0));
    }

    /** Anchored collections inside each other (the billion laughs) and nesting beyond 32: one line, never a tree. */
    @Test void aliasBombsAndDeepNestingAreOneLineEach() {
        List<String> hostile = List.of(
            HEAD + "x:\n" + ALIAS_BOMB.replaceAll("(?m)^", "  "),
            HEAD + "storage: " + "[".repeat(10_000) + "]".repeat(10_000) + "\n",
            HEAD + "storage: " + "{a: ".repeat(5_000) + "b" + "}".repeat(5_000) + "\n",
            HEAD + "storage:\n" + java.util.stream.IntStream.range(1, 200).mapToObj(i -> " ".repeat(i) + "- ").reduce("", String::concat) + "x\n",
            HEAD + "storage: " + "&a [".repeat(40) + "]".repeat(40) + "\n");
        for (String text : hostile) {
            InventoryException e = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> refused(text));
            assertTrue(e.getMessage().lines().count() <= 2, e::getMessage);
            assertTrue(e.getMessage().length() < 600, e::getMessage);
        }
    }

    @Test void fiftyOneScalarAliasesAreTooManyAndFiftyAreNot() {
        String fifty = HEAD.replace("name: m,", "name: m, labels: { a: &v x },")
            + "cluster2: [" + "*v, ".repeat(49) + "*v]\n";
        InventoryException e = refused(fifty);
        assertFalse(e.getMessage().contains("aliases"), e::getMessage);
        assertTrue(e.getMessage().contains("unknown key 'cluster2'"), e::getMessage);
        InventoryException more = refused(fifty.replace("[*v,", "[*v, *v,"));
        assertTrue(more.getMessage().matches("hostile\\.yaml:3:\\d+: more than 50 aliases .*"), more::getMessage);
    }

    /** Character edits, plus whole-structure mutations: truncation, type swaps, alias bombs, huge values, tabs, binary. */
    private static String mutate(String text, Random random) {
        StringBuilder sb = new StringBuilder(text);
        int edits = 1 + random.nextInt(4);
        for (int e = 0; e < edits && sb.length() > 0; e++) {
            int at = random.nextInt(sb.length());
            switch (random.nextInt(11)) {
                case 0 -> sb.deleteCharAt(at);
                case 1 -> sb.insert(at, PIECES.charAt(random.nextInt(PIECES.length())));
                case 2 -> sb.setCharAt(at, PIECES.charAt(random.nextInt(PIECES.length())));
                case 3 -> sb.setLength(at); // truncation
                case 4 -> swapType(sb, random);
                case 5 -> sb.insert(lineStart(sb, at), ALIAS_BOMB); // anchors and aliases, nine levels deep
                case 6 -> sb.insert(at, "x".repeat(1 + random.nextInt(200_000))); // a huge value
                case 7 -> sb.insert(lineStart(sb, at), '\t'); // tab indentation
                case 8 -> sb.insert(at, (char) (0x80 + random.nextInt(0x2F00))); // unicode
                case 9 -> {
                    byte[] junk = new byte[1 + random.nextInt(16)];
                    random.nextBytes(junk);
                    sb.insert(at, new String(junk, java.nio.charset.StandardCharsets.ISO_8859_1)); // binary
                }
                default -> {
                    int len = Math.min(sb.length() - at, random.nextInt(40));
                    sb.insert(random.nextInt(sb.length()), sb.substring(at, at + len));
                }
            }
        }
        return sb.toString();
    }

    private static final String ALIAS_BOMB = "bomb: &a [x, x, x, x, x, x, x, x, x]\n"
        + "b1: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nb2: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
        + "b3: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\nb4: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
        + "b5: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\nb6: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n";

    /** Replaces the value after a random "key: " with a value of another type (list, map, number, bool, null). */
    private static void swapType(StringBuilder sb, Random random) {
        String[] values = {"[1, 2]", "{ a: b }", "42", "true", "null", "~", "\"\"", "-1", "0x1F", "1.35", "[]", "{}"};
        int from = random.nextInt(sb.length());
        int colon = sb.indexOf(": ", from);
        if (colon < 0) return;
        int end = sb.indexOf("\n", colon);
        if (end < 0) end = sb.length();
        sb.replace(colon + 2, end, values[random.nextInt(values.length)]);
    }

    private static int lineStart(StringBuilder sb, int at) {
        int nl = sb.lastIndexOf("\n", Math.max(0, at - 1));
        return nl < 0 ? 0 : nl + 1;
    }
}
