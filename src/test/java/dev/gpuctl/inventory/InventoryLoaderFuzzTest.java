package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
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
