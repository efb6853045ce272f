package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertFalse;
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
        for (int i = 0; i < 2000; i++) {
            String text = mutate(GOOD, random);
            try {
                InventoryLoader.parse("fuzz.yaml", text, Path.of("/nonexistent"), Map.of("HOME", "/home/x"));
            } catch (InventoryException e) {
                assertFalse(e.errors().isEmpty());
            } catch (RuntimeException | StackOverflowError e) {
                fail("mutation " + i + " escaped with " + e + " for:\n" + text, e);
            }
        }
    }

    private static String mutate(String text, Random random) {
        StringBuilder sb = new StringBuilder(text);
        int edits = 1 + random.nextInt(4);
        for (int e = 0; e < edits && sb.length() > 0; e++) {
            int at = random.nextInt(sb.length());
            switch (random.nextInt(4)) {
                case 0 -> sb.deleteCharAt(at);
                case 1 -> sb.insert(at, PIECES.charAt(random.nextInt(PIECES.length())));
                case 2 -> sb.setCharAt(at, PIECES.charAt(random.nextInt(PIECES.length())));
                default -> {
                    int len = Math.min(sb.length() - at, random.nextInt(40));
                    sb.insert(random.nextInt(sb.length()), sb.substring(at, at + len));
                }
            }
        }
        return sb.toString();
    }
}
